package httpapi_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"cronsheet/api/httpapi"
	"cronsheet/internal/apitest"
)

func TestMiddleware(t *testing.T) {
	t.Parallel()
	logs := &apitest.SyncBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, nil))
	r := gin.New()
	r.Use(httpapi.Middleware(logger)...)
	r.GET("/boom", func(*gin.Context) { panic("boom") })
	r.GET("/ok", func(c *gin.Context) { c.String(http.StatusOK, "fine") })

	for _, path := range []string{"/boom", "/ok"} {
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if path == "/boom" {
			apitest.WantError(t, rec, http.StatusInternalServerError, "", "internal error")
		} else if rec.Code != http.StatusOK {
			t.Errorf("GET /ok = %d", rec.Code)
		}
	}
	out := logs.String()
	for _, part := range []string{`"msg":"panic serving request"`, `"error":"boom"`, `"stack":`,
		`"msg":"http request"`, `"route":"/boom"`, `"status":500`, `"status":200`} {
		if !strings.Contains(out, part) {
			t.Errorf("logs lack %s:\n%s", part, out)
		}
	}
}
