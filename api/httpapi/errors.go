package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"cronsheet/task"
)

// internalMsg is all a client learns about a 500; the log has the cause.
const internalMsg = "internal error"

// ErrorBody is the JSON body of every 4xx and 5xx answer: the text for
// people, its stable code for programs and translations (task.Code; README
// lists them), and the field at fault when one is.
type ErrorBody struct {
	Error string    `json:"error"`
	Code  task.Code `json:"code"`
	Field string    `json:"field,omitempty"`
}

// StatusBody is the body of an answer with status and text msg, coded by
// the status alone.
func StatusBody(status int, msg string) ErrorBody {
	return ErrorBody{Error: msg, Code: task.StatusCode(status)}
}

// apiError carries the message a client sees. Status 0 means "derive it from
// err" (task.ErrNotFound → 404 and so on); err keeps errors.Is working.
// code "" means: err's code (task.CodeOf), else the status's.
type apiError struct {
	status int
	code   task.Code
	field  string
	msg    string
	err    error
}

func (e *apiError) Error() string {
	if e.err == nil {
		return e.msg
	}
	return e.msg + ": " + e.err.Error()
}

func (e *apiError) Unwrap() error { return e.err }

// WithMessage gives err the message msg for the client; the status and
// code still come from err (a task sentinel, else 500).
func WithMessage(err error, msg string) error {
	return &apiError{msg: msg, err: err}
}

// Describe gives err the message the client sees when it matches sentinel
// (a task sentinel); the status still comes from the sentinel. Other errors
// are returned as they are.
func Describe(err, sentinel error, format string, args ...any) error {
	if !errors.Is(err, sentinel) {
		return err
	}
	return &apiError{msg: fmt.Sprintf(format, args...), err: err}
}

// DescribeAs is Describe with the code the answer carries.
func DescribeAs(err, sentinel error, code task.Code, format string, args ...any) error {
	if !errors.Is(err, sentinel) {
		return err
	}
	return &apiError{code: code, msg: fmt.Sprintf(format, args...), err: err}
}

// Err is an error with a fixed status and message, naming field ("" for
// none).
func Err(status int, field, format string, args ...any) error {
	return &apiError{status: status, field: field, msg: fmt.Sprintf(format, args...)}
}

// CodedErr is Err with a code more precise than the status's.
func CodedErr(status int, code task.Code, field, format string, args ...any) error {
	return &apiError{status: status, code: code, field: field, msg: fmt.Sprintf(format, args...)}
}

// UnknownScenario is the 404 for a scenario name nobody configured.
func UnknownScenario(name string) error {
	return Err(http.StatusNotFound, "", "unknown scenario %q", task.Truncate(name, 100))
}

// WriteError answers with err mapped to a status: *task.ValidationError and
// task.ErrInvalid → 400, task.ErrNotFound → 404, task.ErrConflict → 409, the
// statuses of Err, and 500 with a generic message for anything else.
// Only the 500s are logged, on logger.
func WriteError(logger *slog.Logger, c *gin.Context, err error) {
	status, body := Classify(err)
	ctx := c.Request.Context()
	switch {
	case status < http.StatusInternalServerError:
	case errors.Is(err, context.Canceled) && ctx.Err() != nil:
		// The client went away; nobody reads the answer.
		logger.InfoContext(ctx, "request cancelled", "method", c.Request.Method,
			"path", c.Request.URL.Path)
	default:
		logger.ErrorContext(ctx, "request failed", "method", c.Request.Method,
			"path", c.Request.URL.Path, "status", status, "error", err)
	}
	c.AbortWithStatusJSON(status, body)
}

// Classify returns the status and body for err. The 5xx bodies say
// nothing of the cause, but for an error coded task.CodeServiceUnavailable:
// 503 with its message, which says what is stored and what is not yet
// (a job's transition the store has not taken yet, jobs.ErrNotRecorded),
// so the client knows to read the state and try again.
func Classify(err error) (int, ErrorBody) {
	if task.CodeOf(err) == task.CodeServiceUnavailable {
		return http.StatusServiceUnavailable, ErrorBody{Error: err.Error(), Code: task.CodeServiceUnavailable}
	}
	var ae *apiError
	if errors.As(err, &ae) {
		status := ae.status
		if status == 0 {
			status = sentinelStatus(ae.err)
		}
		if status >= http.StatusInternalServerError {
			return status, StatusBody(status, internalMsg)
		}
		code := ae.code
		if code == "" && ae.status == 0 {
			code = task.CodeOf(ae.err) // the status comes from err: so does the code
		}
		if code == "" {
			code = task.StatusCode(status)
		}
		if code == task.CodeInvalidRequest && ae.field != "" {
			code = task.CodeInvalidField
		}
		return status, ErrorBody{Error: ae.msg, Code: code, Field: ae.field}
	}
	var ve *task.ValidationError
	if errors.As(err, &ve) {
		code := task.CodeOf(err)
		if code == task.CodeInvalidRequest && ve.Field != "" {
			code = task.CodeInvalidField
		}
		return http.StatusBadRequest, ErrorBody{Error: ve.Error(), Code: code, Field: ve.Field}
	}
	status := sentinelStatus(err)
	if status >= http.StatusInternalServerError {
		return status, StatusBody(status, internalMsg)
	}
	code := task.CodeOf(err)
	if code == "" {
		code = task.StatusCode(status)
	}
	return status, ErrorBody{Error: err.Error(), Code: code}
}

// sentinelStatus maps the task sentinels to a status, 500 for the rest.
func sentinelStatus(err error) int {
	switch {
	case errors.Is(err, task.ErrInvalid):
		return http.StatusBadRequest
	case errors.Is(err, task.ErrNotFound):
		return http.StatusNotFound
	case errors.Is(err, task.ErrConflict):
		return http.StatusConflict
	}
	return http.StatusInternalServerError
}

// NotImplemented answers 501 with msg. It does not go through WriteError,
// which hides the message of every 5xx.
func NotImplemented(c *gin.Context, msg string) {
	c.AbortWithStatusJSON(http.StatusNotImplemented, StatusBody(http.StatusNotImplemented, msg))
}

// RegisterNotFound answers unknown routes under /api/ with the JSON error
// body of every other answer (404, code not_found) instead of gin's plain
// text; pages keep gin's 404.
func RegisterNotFound(r *gin.Engine) {
	r.NoRoute(func(c *gin.Context) {
		if strings.HasPrefix(c.Request.URL.Path, "/api/") {
			c.AbortWithStatusJSON(http.StatusNotFound, StatusBody(http.StatusNotFound,
				"no such API route: "+c.Request.Method+" "+task.Truncate(c.Request.URL.Path, 200)))
			return
		}
		c.String(http.StatusNotFound, "404 page not found")
	})
}
