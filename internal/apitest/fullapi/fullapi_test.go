package fullapi_test

import (
	"net/http"
	"os"
	"testing"

	"github.com/gin-gonic/gin"

	"cronsheet/internal/apitest"
	"cronsheet/internal/apitest/fullapi"
)

func TestMain(m *testing.M) {
	gin.SetMode(gin.TestMode) // tests only; main sets the mode in production
	os.Exit(m.Run())
}

// TestControlEndpointsNeedNoExtraDeps checks that targets, task states,
// run queries and a row's audit trail come from the store alone: no store
// lacks them, so none of them answers 501. A manual trigger and feedback
// go to the firer (the run's owner), which the server always wires:
// without it they answer 501, with it feedback on an unknown run is 404.
func TestControlEndpointsNeedNoExtraDeps(t *testing.T) {
	t.Parallel()
	b := fullapi.Setup(t) // Store only: no Deps.Trigger
	tests := []struct {
		method, path, body string
		want               int
	}{
		{http.MethodPut, "/api/v1/tasks/t1/state", `{"state":"stopped"}`, http.StatusNotFound},
		{http.MethodGet, "/api/v1/targets", "", http.StatusOK},
		{http.MethodGet, "/api/v1/targets/x", "", http.StatusNotFound},
		{http.MethodDelete, "/api/v1/targets/x", "", http.StatusNotFound},
		{http.MethodGet, "/api/v1/runs?state=done", "", http.StatusOK},
		{http.MethodGet, "/api/v1/runs?task_id=t1", "", http.StatusOK},
		{http.MethodGet, "/api/v1/scenarios/memos/rows/r1/audit", "", http.StatusOK},
	}
	for _, tt := range tests {
		if w := b.Do(t, tt.method, tt.path, tt.body); w.Code != tt.want {
			t.Errorf("%s %s = %d %s, want %d", tt.method, tt.path, w.Code, w.Body, tt.want)
		}
	}
	// A manual trigger needs the firer (tasksapi.Deps.Trigger), which the server
	// always wires.
	apitest.WantError(t, b.Do(t, http.MethodPost, "/api/v1/tasks/t1/trigger", ""), http.StatusNotImplemented, "", "not available")
	apitest.WantError(t, b.Do(t, http.MethodPost, "/api/v1/runs/tr1/feedback", `{"status":0}`), http.StatusNotImplemented, "", "not taken")
	ctl := fullapi.SetupControl(t)
	if w := ctl.Do(t, http.MethodPost, "/api/v1/runs/tr1/feedback", `{"status":0}`); w.Code != http.StatusNotFound {
		t.Errorf("feedback on an unknown run with the firer wired = %d %s, want 404", w.Code, w.Body)
	}
}
