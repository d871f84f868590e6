package webtable_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"cronsheet/fire"
	"cronsheet/jobs"
	"cronsheet/store/sqlite"
	"cronsheet/task"
	"cronsheet/webtable"
)

// TestJobClients: with an allow list, the jobs API needs an allowed bearer
// token; a denied token is refused even so; other routes are not guarded.
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
	webtable.New(webtable.Deps{Logger: slog.New(slog.DiscardHandler), Store: st, Jobs: svc,
		JobClients: webtable.NewTokenList([]string{"good", "revoked"}, []string{"revoked"})}).Register(r)
	body := `{"method":"POST","name":"http://127.0.0.1:9/hook","delay":60}`
	for _, c := range []struct {
		auth string
		want int
	}{
		{"", http.StatusUnauthorized},
		{"Basic Zm9vOmJhcg==", http.StatusUnauthorized},
		{"Bearer wrong", http.StatusForbidden},
		{"Bearer revoked", http.StatusForbidden},
		{"Bearer good", http.StatusCreated},
	} {
		req := httptest.NewRequest("POST", "/api/v1/jobs", strings.NewReader(body))
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, req)
		if rec.Code != c.want {
			t.Errorf("POST /api/v1/jobs with %q: status %d, want %d (%s)", c.auth, rec.Code, c.want, rec.Body)
		}
	}
	rec := httptest.NewRecorder()
	r.ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
	if rec.Code != http.StatusOK {
		t.Errorf("healthz without a token: status %d, want 200 (only the jobs API is guarded)", rec.Code)
	}
}
