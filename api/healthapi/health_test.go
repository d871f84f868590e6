package healthapi_test

import (
	"errors"
	"net/http"
	"testing"

	"cronsheet/internal/apitest"
	"cronsheet/internal/apitest/fullapi"
)

func TestHealthz(t *testing.T) {
	t.Parallel()
	b := fullapi.Setup(t)

	got := apitest.Want[map[string]string](t, b.Do(t, http.MethodGet, "/healthz", ""), http.StatusOK)
	if got["status"] != "ok" {
		t.Errorf("status = %q, want ok", got["status"])
	}

	down := errors.New("store unreachable")
	b.Health.Store(&down)
	got = apitest.Want[map[string]string](t, b.Do(t, http.MethodGet, "/healthz", ""), http.StatusServiceUnavailable)
	if got["error"] != "store unreachable" {
		t.Errorf("error = %q, want the health error", got["error"])
	}
}
