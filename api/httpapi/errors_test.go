package httpapi

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"cronsheet/task"
)

// TestErrorBodies renders each kind of error through writeError, as a
// handler does, and checks the status and the whole JSON body: the text
// for people, the stable code, the field.
func TestErrorBodies(t *testing.T) {
	gin.SetMode(gin.TestMode)
	cases := []struct {
		name   string
		err    error
		status int
		body   string
	}{
		{"Unavailable", task.WithCode(task.CodeServiceUnavailable, errors.New("job j1 is cancelled, but that transition is not in its history yet")), 503,
			`{"error":"job j1 is cancelled, but that transition is not in its history yet","code":"unavailable"}`},
		{"InvalidField", task.Invalid("delay", "must be 0 to 31622400 seconds (366 days); got -1"), 400,
			`{"error":"delay: must be 0 to 31622400 seconds (366 days); got -1","code":"invalid_field","field":"delay"}`},
		{"InvalidFieldWrapped", fmt.Errorf("trigger t1: %w", task.Invalid("params", "too many")), 400,
			`{"error":"params: too many","code":"invalid_field","field":"params"}`},
		{"InvalidNoField", fmt.Errorf("bad: %w", task.ErrInvalid), 400,
			`{"error":"bad: invalid","code":"invalid_request"}`},
		{"HTTPErrField", Err(http.StatusBadRequest, "wait", "must be a number"), 400,
			`{"error":"must be a number","code":"invalid_field","field":"wait"}`},
		{"Unauthorized", Err(http.StatusUnauthorized, "", "sign in, or send Authorization: Bearer <token>"), 401,
			`{"error":"sign in, or send Authorization: Bearer \u003ctoken\u003e","code":"unauthorized"}`},
		{"Forbidden", Err(http.StatusForbidden, "", "this token serves only the jobs API"), 403,
			`{"error":"this token serves only the jobs API","code":"forbidden"}`},
		{"NotFound", Describe(fmt.Errorf("get: %w", task.ErrNotFound), task.ErrNotFound, "row %q not found", "r1"), 404,
			`{"error":"row \"r1\" not found","code":"not_found"}`},
		{"UnknownScenario", UnknownScenario("nope"), 404,
			`{"error":"unknown scenario \"nope\"","code":"not_found"}`},
		{"AlreadyExists", DescribeAs(fmt.Errorf("insert: %w", task.ErrConflict), task.ErrConflict, task.CodeAlreadyExists,
			"target %q already exists", "hook"), 409,
			`{"error":"target \"hook\" already exists","code":"already_exists"}`},
		{"VersionConflict", task.VersionConflict(`row "r1"`, 2, 1), 409,
			`{"error":"row \"r1\" changed since you loaded it (version 2 now, you sent 1); reload and try again","code":"version_conflict"}`},
		{"VersionConflictUnknownNow", DescribeAs(fmt.Errorf("%w: target version is 3, not 1", task.ErrConflict),
			task.ErrConflict, task.CodeVersionConflict, "target %q changed since you loaded it (you sent version %d); reload and try again", "hook", 1), 409,
			`{"error":"target \"hook\" changed since you loaded it (you sent version 1); reload and try again","code":"version_conflict"}`},
		{"BareConflict", fmt.Errorf("state: %w", task.ErrConflict), 409,
			`{"error":"state: conflict","code":"conflict"}`},
		{"BodyTooLarge", TooLarge(256 << 10), 413,
			`{"error":"the body is larger than 256 KiB; send less","code":"body_too_large","field":"body"}`},
		{"UnsupportedMedia", Err(http.StatusUnsupportedMediaType, "Content-Type", "must be application/json"), 415,
			`{"error":"must be application/json","code":"unsupported_media_type","field":"Content-Type"}`},
		{"RateLimited", Err(http.StatusTooManyRequests, "", "too many failed sign-ins: try again in 1m0s"), 429,
			`{"error":"too many failed sign-ins: try again in 1m0s","code":"rate_limited"}`},
		{"Internal", errors.New("disk on fire"), 500,
			`{"error":"internal error","code":"internal"}`},
		{"InternalDescribed", Describe(errors.New("disk on fire"), errors.New("x"), "never shown"), 500,
			`{"error":"internal error","code":"internal"}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			c, _ := gin.CreateTestContext(rec)
			c.Request = httptest.NewRequest(http.MethodGet, "/api/v1/x", nil)
			WriteError(slog.New(slog.DiscardHandler), c, tc.err)
			if rec.Code != tc.status {
				t.Errorf("status = %d, want %d", rec.Code, tc.status)
			}
			if got := strings.TrimSpace(rec.Body.String()); got != tc.body {
				t.Errorf("body =\n  %s\nwant\n  %s", got, tc.body)
			}
		})
	}
}
