package httpapi_test

import (
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"cronsheet/api/httpapi"
	"cronsheet/internal/apitest"
	"cronsheet/store"
)

func TestBase(t *testing.T) {
	t.Parallel()
	logs := &apitest.SyncBuffer{}
	at := time.Date(2026, 3, 8, 1, 30, 0, 0, time.UTC)
	b := httpapi.NewBase("someapi", slog.New(slog.NewJSONHandler(logs, nil)), nil, func() time.Time { return at })
	if !b.Now().Equal(at) {
		t.Errorf("Now() = %v, want %v", b.Now(), at)
	}
	if d := httpapi.NewBase("someapi", nil, nil, nil); time.Since(d.Now()) > time.Minute || d.Logger() == nil {
		t.Errorf("NewBase with nil logger and clock: Now() = %v, Logger() = %v", d.Now(), d.Logger())
	}

	r := gin.New()
	r.GET("/boom", func(c *gin.Context) { b.WriteError(c, errors.New("disk on fire")) })
	r.GET("/change", func(c *gin.Context) {
		b.RecordChange(c, store.AuditKindTarget, "t1", store.AuditUpdate, nil) // nil audit log: nothing to record
		c.Status(http.StatusNoContent)
	})
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/boom", nil))
	apitest.WantError(t, rec, http.StatusInternalServerError, "", "internal error")
	if out := logs.String(); !strings.Contains(out, `"component":"someapi"`) || !strings.Contains(out, "disk on fire") {
		t.Errorf("the 500 is not logged on the component's logger:\n%s", out)
	}
	rec = httptest.NewRecorder()
	r.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/change", nil))
	if rec.Code != http.StatusNoContent {
		t.Errorf("GET /change = %d", rec.Code)
	}
}

func TestRequire(t *testing.T) {
	t.Parallel()
	var st store.AuditLog
	defer func() {
		if got := recover(); got != "someapi: Deps.Store is nil" {
			t.Errorf("Require(nil) panicked with %v", got)
		}
	}()
	httpapi.Require("someapi", "Deps.Store", st)
	t.Error("Require(nil) returned")
}
