package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"cronsheet/config"
	"cronsheet/task"
)

// scriptedHook is a real HTTP target that answers its calls with the
// status codes of a script, in order (200 once the script is used up),
// and counts them.
type scriptedHook struct {
	srv   *httptest.Server
	mu    sync.Mutex
	codes []int
	calls int
	heads int
}

func startScriptedHook(t *testing.T, codes ...int) *scriptedHook {
	t.Helper()
	h := &scriptedHook{codes: codes}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		code := http.StatusOK
		if r.Method == http.MethodHead {
			h.heads++
		} else {
			if h.calls < len(h.codes) {
				code = h.codes[h.calls]
			}
			h.calls++
		}
		h.mu.Unlock()
		w.WriteHeader(code)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *scriptedHook) counts() (calls, heads int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.calls, h.heads
}

// targetWithHealth is GET /api/v1/targets/{id}'s answer.
type targetWithHealth struct {
	task.Target
	Health *task.TargetHealth `json:"health"`
}

func (b *testBundle) targetHealth(t *testing.T, id string) task.TargetHealth {
	t.Helper()
	var got targetWithHealth
	if code := b.call(t, "GET", "/api/v1/targets/"+id, nil, &got); code != http.StatusOK || got.Health == nil {
		t.Fatalf("get target %s: status %d, health %v", id, code, got.Health)
	}
	return *got.Health
}

// TestTargetHealthFromDeliveries triggers a task by hand four times at a
// hook that answers 200, 500, 500, 200 (no retries): the target's health,
// read through the API (one target and the list), follows each answer
// counted at the hook: OK, then 1 and 2 failures in a row with the
// error, then OK again with the last failure kept.
func TestTargetHealthFromDeliveries(t *testing.T) {
	h := startScriptedHook(t, 200, 500, 500, 200)
	b := setup(t, func(c *config.Config) { c.HTTP.Allow = []string{"127.0.0.0/8"} })
	target := map[string]any{"id": "hook", "kind": "http", "state": "running",
		"http": map[string]any{"method": "POST", "url": h.srv.URL + "/cb"}}
	if code := b.call(t, "POST", "/api/v1/targets", target, nil); code != http.StatusCreated {
		t.Fatalf("create target: status %d", code)
	}
	if hl := b.targetHealth(t, "hook"); !hl.LastSuccess.IsZero() || !hl.LastFailure.IsZero() || hl.FailuresInARow != 0 {
		t.Errorf("health before any delivery = %+v, want empty", hl)
	}
	row := map[string]any{"memo_id": "h1", "content": "ping", "when": "daily 08:00", "targets": "hook", "retries": 0}
	if code := b.call(t, "POST", "/api/v1/scenarios/memos/rows", row, nil); code != http.StatusCreated {
		t.Fatalf("create row: status %d", code)
	}
	eventually(t, "the row's task", func() bool { return b.call(t, "GET", "/api/v1/tasks/h1", nil, nil) == http.StatusOK })
	if code := b.call(t, "PUT", "/api/v1/tasks/h1/state", map[string]string{"state": "stopped"}, nil); code != http.StatusOK {
		t.Fatalf("stop h1: status %d", code)
	}
	steps := []struct {
		inARow  int
		failing bool
	}{{0, false}, {1, true}, {2, true}, {0, false}}
	var lastFailure time.Time
	for i, s := range steps {
		var trig struct {
			Runs []*task.Run `json:"runs"`
		}
		if code := b.call(t, "POST", "/api/v1/tasks/h1/trigger", nil, &trig); code != http.StatusAccepted || len(trig.Runs) != 1 {
			t.Fatalf("step %d: trigger: status %d, %+v", i, code, trig)
		}
		id := trig.Runs[0].TriggerID
		eventually(t, "the run to end", func() bool { return b.run(t, id).State.Final() })
		if calls, _ := h.counts(); calls != i+1 {
			t.Fatalf("step %d: the hook counted %d calls, want %d", i, calls, i+1)
		}
		var hl task.TargetHealth
		eventually(t, "the health to show the answer", func() bool {
			hl = b.targetHealth(t, "hook")
			if s.failing {
				return hl.FailuresInARow == s.inARow
			}
			return !hl.LastSuccess.IsZero() && hl.LastSuccess.After(hl.LastFailure)
		})
		if hl.FailuresInARow != s.inARow {
			t.Errorf("step %d: %d failures in a row, want %d", i, hl.FailuresInARow, s.inARow)
		}
		if s.failing {
			if !strings.Contains(hl.LastError, "HTTP 500") || hl.LastFailure.IsZero() {
				t.Errorf("step %d: health %+v, want the HTTP 500 as last error", i, hl)
			}
			lastFailure = hl.LastFailure
		}
	}
	hl := b.targetHealth(t, "hook")
	if !hl.LastFailure.Equal(lastFailure) || !strings.Contains(hl.LastError, "HTTP 500") {
		t.Errorf("after the last success: %+v, want the last failure (%s) kept", hl, lastFailure)
	}
	var page struct {
		Targets []targetWithHealth `json:"targets"`
	}
	if code := b.call(t, "GET", "/api/v1/targets", nil, &page); code != http.StatusOK || len(page.Targets) != 1 ||
		page.Targets[0].Health == nil || page.Targets[0].Health.FailuresInARow != 0 || !page.Targets[0].Health.LastSuccess.Equal(hl.LastSuccess) {
		t.Errorf("list: status %d, %+v, want hook with its health", code, page.Targets)
	}
}

// TestTargetProbeThroughAPI creates a target with a probe through the API:
// the node probes it (a HEAD counted at the hook, no delivery), and the
// API answers the probe's health; a bad probe is refused naming its
// field.
func TestTargetProbeThroughAPI(t *testing.T) {
	h := startScriptedHook(t)
	b := setup(t, func(c *config.Config) { c.HTTP.Allow = []string{"127.0.0.0/8"} })
	target := map[string]any{"id": "probed", "kind": "http", "state": "running",
		"http":  map[string]any{"method": "POST", "url": h.srv.URL + "/cb"},
		"probe": map[string]any{"interval": "1s"}}
	var refusal struct {
		Field string `json:"field"`
	}
	if code := b.call(t, "POST", "/api/v1/targets", target, &refusal); code != http.StatusBadRequest || refusal.Field != "probe.interval" {
		t.Errorf("a 1s probe: status %d, field %q; want 400 naming probe.interval", code, refusal.Field)
	}
	target["probe"] = map[string]any{"interval": "10s", "method": "HEAD"}
	if code := b.call(t, "POST", "/api/v1/targets", target, nil); code != http.StatusCreated {
		t.Fatalf("create target: status %d", code)
	}
	var hl task.TargetHealth
	eventually(t, "the probe's health", func() bool {
		hl = b.targetHealth(t, "probed")
		return hl.Probe != nil && !hl.Probe.LastSuccess.IsZero()
	})
	calls, heads := h.counts()
	if heads < 1 || calls != 0 {
		t.Errorf("the hook counted %d probes and %d deliveries; want probes only", heads, calls)
	}
	if hl.FailuresInARow != 0 || !hl.LastSuccess.IsZero() {
		t.Errorf("a probe changed the deliveries' health: %+v", hl.HealthRecord)
	}
}
