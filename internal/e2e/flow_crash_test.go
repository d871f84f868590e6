package e2e

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"cronsheet/internal/testwait"
	"cronsheet/task"
)

// flowCrashHook is a local HTTP target for TestFlowCrash: /s1/… answers
// after delay (so a kill can cut it), /s2/… at once. It keeps every call
// that arrived, with its trigger id and whether the caller hung up first.
type flowCrashHook struct {
	srv   *httptest.Server
	delay time.Duration

	mu    sync.Mutex
	calls []flowCrashCall
}

type flowCrashCall struct {
	Path, TriggerID string
	Cut             bool // the sender went away before the answer
}

func startFlowCrashHook(t *testing.T, delay time.Duration) *flowCrashHook {
	t.Helper()
	h := &flowCrashHook{delay: delay}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		c := flowCrashCall{Path: r.URL.Path, TriggerID: r.Header.Get("X-Cronsheet-Trigger-Id")}
		i := h.add(c)
		if strings.HasPrefix(r.URL.Path, "/s1/") {
			select {
			case <-time.After(h.delay):
			case <-r.Context().Done():
				h.mu.Lock()
				h.calls[i].Cut = true
				h.mu.Unlock()
				return
			}
		}
		_, _ = io.WriteString(w, "ok "+r.URL.Path)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *flowCrashHook) add(c flowCrashCall) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.calls = append(h.calls, c)
	return len(h.calls) - 1
}

func (h *flowCrashHook) all() []flowCrashCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]flowCrashCall(nil), h.calls...)
}

// TestFlowCrash runs the real binary with a two-step flow whose first
// step's target answers slowly, kills the node with SIGKILL while step 1
// is at the hook, restarts it, and proves at the hook that each step was
// delivered under one trigger id (a re-send of the attempt the kill cut
// carries the same id), both steps ran, and the execution ends success
// with each step run once.
func TestFlowCrash(t *testing.T) {
	t.Parallel() // see procs_test.go
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	node, _ := newCrashNode(t)
	h := startFlowCrashHook(t, 2*time.Second)
	node.start(t)
	base := node.base()
	for _, s := range []string{"s1", "s2"} {
		mustCall(t, "POST", base+"/api/v1/targets", map[string]any{"id": "hook-" + s, "kind": "http", "state": "running",
			"http": map[string]any{"method": "POST", "url": h.srv.URL + "/" + s + "/{{flow_execution_id}}/{{flow_step_run}}"}}, nil)
	}
	mustCall(t, "POST", base+"/api/v1/flows", map[string]any{"id": "crashy", "start": "s1", "steps": []any{
		map[string]any{"id": "s1", "targets": []string{"hook-s1"}, "on": map[string][]string{"success": {"s2"}}},
		map[string]any{"id": "s2", "targets": []string{"hook-s2"}},
	}}, nil)
	var x task.Execution
	mustCall(t, "POST", base+"/api/v1/flows/crashy/trigger", map[string]any{"params": map[string]string{"day": "mon"}}, &x)

	// Kill while step 1 waits at the hook.
	testwait.For(t, 10*time.Second, "step 1 at the hook", func() bool { return len(h.all()) > 0 })
	time.Sleep(200 * time.Millisecond)
	node.kill(t)
	if calls := h.all(); len(calls) != 1 || !strings.HasPrefix(calls[0].Path, "/s1/") {
		t.Fatalf("calls before the restart = %+v, want step 1 alone", calls)
	}

	node.start(t)
	var got task.Execution
	testwait.For(t, 25*time.Second, "the execution to end", func() bool {
		got = task.Execution{}
		mustCall(t, "GET", base+"/api/v1/executions/"+x.ID, nil, &got)
		return got.State.Final()
	})
	node.stop(t)

	calls := h.all()
	t.Logf("calls at the hook: %+v", calls)
	ids := map[string]map[string]bool{} // step path → trigger ids
	for _, c := range calls {
		if ids[c.Path] == nil {
			ids[c.Path] = map[string]bool{}
		}
		ids[c.Path][c.TriggerID] = true
	}
	s1, s2 := "/s1/"+x.ID+"/0", "/s2/"+x.ID+"/1"
	if len(ids) != 2 || len(ids[s1]) != 1 || len(ids[s2]) != 1 {
		t.Errorf("trigger ids by step = %v, want one for %s and one for %s (calls %+v)", ids, s1, s2, calls)
	}
	s2calls, s1cut := 0, 0
	for _, c := range calls {
		switch {
		case c.Path == s2:
			s2calls++
		case c.Path == s1 && c.Cut:
			s1cut++
		}
	}
	// Step 1: the call the kill cut and its re-send (same trigger id);
	// step 2, fired after the restart, exactly once.
	if s1cut < 1 || s2calls != 1 {
		t.Errorf("step 1 calls cut by the kill = %d (want ≥ 1), step 2 calls = %d (want 1): %+v", s1cut, s2calls, calls)
	}
	if got.State != task.ExecSuccess || len(got.StepRuns) != 2 ||
		got.StepRuns[0].Outcome != task.OutcomeSuccess || got.StepRuns[1].Outcome != task.OutcomeSuccess {
		t.Errorf("execution = %s with %d step runs %+v, want success through s1 and s2 once each", got.State, len(got.StepRuns), got.StepRuns)
	}
}
