package task

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// Sentinel errors; stores and services wrap them with %w.
var (
	// ErrNotFound means the thing asked for does not exist.
	ErrNotFound = errors.New("not found")
	// ErrConflict means a unique key or version check failed.
	ErrConflict = errors.New("conflict")
	// ErrInvalid means input failed validation.
	ErrInvalid = errors.New("invalid")
	// ErrFenced means a run write was refused because the writer no longer
	// owns the run (it finished, or another delivery took it over). It
	// matches ErrConflict too.
	ErrFenced = fmt.Errorf("run owned elsewhere: %w", ErrConflict)
)

// ValidationError says which field is wrong and why. It matches ErrInvalid.
type ValidationError struct {
	Field string
	// Msg is the reason alone, without the field: "must be 0 to 31622400
	// seconds (366 days); got -1".
	Msg string
}

// Error implements error: "field: reason".
func (e *ValidationError) Error() string {
	if e.Field == "" {
		return e.Msg
	}
	return e.Field + ": " + e.Msg
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *ValidationError) Is(target error) bool { return target == ErrInvalid }

// Invalid returns a *ValidationError for field. An argument that is (or
// wraps) a *ValidationError of the same field is put in as its reason
// alone, so the field is never named twice ("when: when: …"); one of
// another field keeps its field ("http.url: url: …" stays precise).
func Invalid(field, format string, args ...any) error {
	for i, a := range args {
		var ve *ValidationError
		if err, ok := a.(error); ok && errors.As(err, &ve) && ve.Field == field {
			args = append([]any(nil), args...) // the caller's slice stays
			args[i] = reasonOf(err, ve)
		}
	}
	msg := fmt.Sprintf(format, args...)
	// A reason that still begins with its field (a message built by hand)
	// loses that prefix.
	for field != "" && strings.HasPrefix(msg, field+": ") {
		msg = msg[len(field)+2:]
	}
	return &ValidationError{Field: field, Msg: msg}
}

// reasonOf is err's text with ve's field prefix taken out: err wraps ve,
// and the wrapping context (if any) stays.
func reasonOf(err error, ve *ValidationError) string {
	text := err.Error()
	if prefix := ve.Field + ": "; ve.Field != "" {
		if i := strings.Index(text, prefix+ve.Msg); i >= 0 {
			return text[:i] + text[i+len(prefix):]
		}
	}
	return text
}

// LineError is the one place a line-numbered error is worded (a CSV
// import's refused line, a batch item): "line 3 (when): must be …", or
// "line 3: …" without a field. reason must not repeat the field; a
// *ValidationError's Msg does not.
func LineError(line int, field, reason string) string {
	for field != "" && strings.HasPrefix(reason, field+": ") {
		reason = reason[len(field)+2:]
	}
	if field == "" {
		return fmt.Sprintf("line %d: %s", line, reason)
	}
	return fmt.Sprintf("line %d (%s): %s", line, field, reason)
}

// Code is an error's stable name for programs and for the UI's
// translations: the text may be reworded, the code is not. The API
// answers every 4xx with one ("code" beside "error" and "field").
type Code string

// The codes. README's API section lists them with their statuses.
const (
	CodeInvalidField        Code = "invalid_field"          // 400: a field is wrong ("field" names it)
	CodeInvalidRequest      Code = "invalid_request"        // 400: the request as a whole is wrong
	CodeUnauthorized        Code = "unauthorized"           // 401: sign in or send a valid token
	CodeForbidden           Code = "forbidden"              // 403: authenticated, not allowed
	CodeNotFound            Code = "not_found"              // 404
	CodeMethodNotAllowed    Code = "method_not_allowed"     // 405
	CodeConflict            Code = "conflict"               // 409: the current state forbids it
	CodeAlreadyExists       Code = "already_exists"         // 409: the id or key is taken
	CodeVersionConflict     Code = "version_conflict"       // 409: changed since it was read; reload
	CodeAlreadyRan          Code = "already_ran"            // 409: the job fired (ran, runs, finished)
	CodeAlreadyCancelled    Code = "already_cancelled"      // 409: the job is cancelled or replaced
	CodeJobRunning          Code = "job_running"            // 409: a run is in progress; try after it
	CodeBodyTooLarge        Code = "body_too_large"         // 413
	CodeUnsupportedMedia    Code = "unsupported_media_type" // 415: send application/json
	CodeWrongHost           Code = "wrong_host"             // 421: the Host is not this server's
	CodeRateLimited         Code = "rate_limited"           // 429: wait and try again
	CodeInternal            Code = "internal"               // 500: the log has the cause
	CodeNotImplemented      Code = "not_implemented"        // 501: not available on this server
	CodeServiceUnavailable  Code = "unavailable"            // 503: try again later
	CodeGatewayTimeout      Code = "timeout"                // 504
	codeUnknownClientStatus Code = "client_error"           // any other 4xx
)

// codedError gives an error a Code; errors.Is and errors.As see through.
type codedError struct {
	code Code
	err  error
}

func (e *codedError) Error() string { return e.err.Error() }
func (e *codedError) Unwrap() error { return e.err }

// WithCode returns err carrying code (nil for a nil err). The outermost
// code in a chain wins.
func WithCode(code Code, err error) error {
	if err == nil {
		return nil
	}
	return &codedError{code: code, err: err}
}

// CodeOf returns the code err carries (WithCode), else the one its kind
// implies: a *ValidationError with a field is CodeInvalidField,
// ErrInvalid CodeInvalidRequest, ErrNotFound CodeNotFound, ErrConflict
// CodeConflict; "" for anything else (the caller derives it from a status).
func CodeOf(err error) Code {
	var ce *codedError
	if errors.As(err, &ce) {
		return ce.code
	}
	var ve *ValidationError
	switch {
	case errors.As(err, &ve) && ve.Field != "":
		return CodeInvalidField
	case errors.Is(err, ErrInvalid):
		return CodeInvalidRequest
	case errors.Is(err, ErrNotFound):
		return CodeNotFound
	case errors.Is(err, ErrConflict):
		return CodeConflict
	}
	return ""
}

// StatusCode is the code of an answer with HTTP status status and no more
// specific code: 404 CodeNotFound, 413 CodeBodyTooLarge and so on.
func StatusCode(status int) Code {
	switch status {
	case 400:
		return CodeInvalidRequest
	case 401:
		return CodeUnauthorized
	case 403:
		return CodeForbidden
	case 404:
		return CodeNotFound
	case 405:
		return CodeMethodNotAllowed
	case 409:
		return CodeConflict
	case 413:
		return CodeBodyTooLarge
	case 415:
		return CodeUnsupportedMedia
	case 421:
		return CodeWrongHost
	case 429:
		return CodeRateLimited
	case 501:
		return CodeNotImplemented
	case 503:
		return CodeServiceUnavailable
	case 504:
		return CodeGatewayTimeout
	}
	if status >= 500 {
		return CodeInternal
	}
	return codeUnknownClientStatus
}

// VersionConflict is the error of an edit made to something that changed
// since it was read: it says what changed and what to do, and carries
// CodeVersionConflict (and matches ErrConflict). what is "the row", "target
// \"t1\"" or the like; now is the stored version (0 when unknown), sent
// the one the edit was based on.
func VersionConflict(what string, now, sent int64) error {
	if now <= 0 {
		return Conflict(CodeVersionConflict, "%s changed since you loaded it (you sent version %d); reload and try again", what, sent)
	}
	return Conflict(CodeVersionConflict, "%s changed since you loaded it (version %d now, you sent %d); reload and try again",
		what, now, sent)
}

// Conflict returns an error that matches ErrConflict and carries code,
// whose text is the message alone (no sentinel's words appended).
func Conflict(code Code, format string, args ...any) error {
	return WithCode(code, &textError{msg: fmt.Sprintf(format, args...), err: ErrConflict})
}

// textError is a message for people over a sentinel.
type textError struct {
	msg string
	err error
}

func (e *textError) Error() string { return e.msg }
func (e *textError) Unwrap() error { return e.err }

type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

// Permanent marks err as not worth retrying (a bad address, a 4xx).
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return &permanentError{err: err}
}

// IsPermanent reports whether err was marked with Permanent.
func IsPermanent(err error) bool {
	var p *permanentError
	return errors.As(err, &p)
}

type retryAfterError struct {
	err   error
	after time.Duration
}

func (e *retryAfterError) Error() string { return e.err.Error() }
func (e *retryAfterError) Unwrap() error { return e.err }

// RetryAfter marks err as retryable no sooner than d from now (HTTP 429).
func RetryAfter(err error, d time.Duration) error {
	if err == nil {
		return nil
	}
	return &retryAfterError{err: err, after: d}
}

// RetryDelay returns the delay requested with RetryAfter, if any.
func RetryDelay(err error) (time.Duration, bool) {
	var r *retryAfterError
	if errors.As(err, &r) {
		return r.after, true
	}
	return 0, false
}
