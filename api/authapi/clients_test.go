package authapi_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"cronsheet/api/authapi"
	"cronsheet/fire"
	"cronsheet/internal/apitest/fullapi"
	"cronsheet/jobs"
	"cronsheet/store/sqlite"
	"cronsheet/task"
)

// TestJobClients: the jobs API's configured tokens fold into the guard: an
// allowed one is an editor of the jobs API only, a denied one is refused
// even when also allowed, and without a token (auth required) it is 401.
func TestJobClients(t *testing.T) {
	t.Parallel()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	svc := jobs.New(jobs.Deps{Store: st, Trigger: func(context.Context, fire.TriggerParams) ([]*task.Run, error) {
		return nil, task.ErrInvalid
	}})
	defer svc.Close()
	r := gin.New()
	guard := authapi.NewGuard(authapi.GuardConfig{Users: st, PublicHosts: []string{"example.com"},
		JobClients: authapi.NewTokenList([]string{"good", "revoked"}, []string{"revoked"})})
	r.Use(guard.Middleware())
	fullapi.Mount(r, fullapi.Deps{Logger: slog.New(slog.DiscardHandler), Store: st, Jobs: svc})
	body := `{"method":"POST","name":"http://127.0.0.1:9/hook","delay":60}`
	for _, c := range []struct {
		method, path, auth string
		want               int
	}{
		{"POST", "/api/v1/jobs", "", http.StatusUnauthorized},
		{"POST", "/api/v1/jobs", "Basic Zm9vOmJhcg==", http.StatusUnauthorized},
		{"POST", "/api/v1/jobs", "Bearer wrong", http.StatusUnauthorized},
		{"POST", "/api/v1/jobs", "Bearer revoked", http.StatusForbidden},
		{"POST", "/api/v1/jobs", "Bearer good", http.StatusCreated},
		{"GET", "/api/v1/outbox", "Bearer good", http.StatusForbidden},
		{"GET", "/api/v1/outbox", "Bearer revoked", http.StatusForbidden},
	} {
		var rd *strings.Reader
		if c.method == "POST" {
			rd = strings.NewReader(body)
		} else {
			rd = strings.NewReader("")
		}
		req := httptest.NewRequest(c.method, c.path, rd)
		req.Header.Set("Content-Type", "application/json")
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, req)
		if rec.Code != c.want {
			t.Errorf("%s %s with %q: status %d, want %d (%s)", c.method, c.path, c.auth, rec.Code, c.want, rec.Body)
		}
	}
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
	if rec.Code != http.StatusOK {
		t.Errorf("healthz without a token: status %d, want 200", rec.Code)
	}
}
