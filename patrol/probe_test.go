package patrol_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"cronsheet/executors"
	"cronsheet/patrol"
	"cronsheet/store/sqlite"
	"cronsheet/task"
)

// probeHook counts the probes it receives and answers each with code.
type probeHook struct {
	srv  *httptest.Server
	mu   sync.Mutex
	code int
	hits []string // method and path of each request
}

func startProbeHook(t *testing.T) *probeHook {
	t.Helper()
	h := &probeHook{code: http.StatusOK}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.hits = append(h.hits, r.Method+" "+r.URL.Path)
		code := h.code
		h.mu.Unlock()
		w.WriteHeader(code)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *probeHook) seen() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.hits...)
}

// TestProbePatrol probes a target through the real HTTP executor: the
// probe reaches the hook once per slot however many nodes pass (two
// patrols over one store), its answers go to the target's probe health
// (a success, then a 503 counted as a failure), deliveries' health stays
// empty, and a host the guard refuses is never reached: the refusal is
// recorded as the probe's failure.
func TestProbePatrol(t *testing.T) {
	h := startProbeHook(t)
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	allowed := newHTTP(t, []string{"127.0.0.0/8"})
	tg := &task.Target{ID: "hook", Kind: task.ChannelHTTP, State: task.TargetPaused,
		HTTP:  &task.HTTPTarget{Method: "POST", URL: h.srv.URL + "/cb/{{task_id}}"},
		Probe: &task.TargetProbe{Interval: "1m", Path: "/health"}}
	if err := tg.Validate(); err != nil {
		t.Fatal(err)
	}
	if err := st.CreateTarget(t.Context(), tg); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 3, 1, 8, 0, 30, 0, time.UTC)
	clock := func() time.Time { return now }
	logger := slog.New(slog.DiscardHandler)
	nodeA := patrol.NewProbe(logger, st, allowed.Probe, clock)
	nodeB := patrol.NewProbe(logger, st, allowed.Probe, clock)

	pass := func(p *patrol.Probe, want int) {
		t.Helper()
		res, err := p.RunOnce(t.Context())
		if err != nil || res.Claimed != want {
			t.Fatalf("RunOnce = %+v, %v; want %d probes", res, err, want)
		}
	}
	pass(nodeA, 1)
	pass(nodeB, 0)
	pass(nodeA, 0)
	if got := h.seen(); len(got) != 1 || got[0] != "HEAD /health" {
		t.Fatalf("the hook saw %v, want one HEAD /health", got)
	}
	health := func() task.TargetHealth {
		t.Helper()
		m, err := st.TargetHealth(t.Context(), []string{"hook"})
		if err != nil {
			t.Fatal(err)
		}
		return m["hook"]
	}
	hl := health()
	if hl.Probe == nil || !hl.Probe.LastSuccess.Equal(now) || hl.Probe.FailuresInARow != 0 {
		t.Fatalf("health after a good probe = %+v / %+v", hl, hl.Probe)
	}
	if !hl.LastSuccess.IsZero() || !hl.LastFailure.IsZero() {
		t.Errorf("a probe changed the deliveries' health: %+v", hl.HealthRecord)
	}

	// The next slot: node B's turn, and the target answers 503.
	h.mu.Lock()
	h.code = http.StatusServiceUnavailable
	h.mu.Unlock()
	now = now.Add(time.Minute)
	pass(nodeB, 1)
	pass(nodeA, 0)
	if got := h.seen(); len(got) != 2 {
		t.Fatalf("the hook saw %v, want two probes", got)
	}
	hl = health()
	if hl.Probe.FailuresInARow != 1 || !hl.Probe.LastFailure.Equal(now) || !strings.Contains(hl.Probe.LastError, "HTTP 503") {
		t.Errorf("probe health after a 503 = %+v", hl.Probe)
	}

	// A node whose guard refuses loopback: the probe is not sent.
	denied := patrol.NewProbe(logger, st, newHTTP(t, nil).Probe, clock)
	now = now.Add(time.Minute)
	pass(denied, 1)
	if got := h.seen(); len(got) != 2 {
		t.Errorf("a refused host was probed: the hook saw %v", got)
	}
	hl = health()
	if hl.Probe.FailuresInARow != 2 || !strings.Contains(hl.Probe.LastError, "refused") {
		t.Errorf("probe health after a refused host = %+v, want a second failure saying refused", hl.Probe)
	}
}

func newHTTP(t *testing.T, allow []string) *executors.HTTP {
	t.Helper()
	x, err := executors.NewHTTP(slog.New(slog.DiscardHandler), executors.HTTPConfig{Allow: allow})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(x.Close)
	return x
}
