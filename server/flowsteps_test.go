package server

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"cronsheet/config"
	"cronsheet/flows"
	"cronsheet/internal/testwait"
	"cronsheet/task"
)

// bodyHook is an HTTP target that keeps every body it is sent, by path;
// /slow answers only once release is called.
type bodyHook struct {
	srv     *httptest.Server
	mu      sync.Mutex
	bodies  map[string][]string
	gate    chan struct{}
	release func()
}

func startBodyHook(t *testing.T) *bodyHook {
	t.Helper()
	h := &bodyHook{bodies: map[string][]string{}, gate: make(chan struct{})}
	var once sync.Once
	h.release = func() { once.Do(func() { close(h.gate) }) }
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		h.bodies[r.URL.Path] = append(h.bodies[r.URL.Path], string(raw))
		h.mu.Unlock()
		if r.URL.Path == "/slow" {
			<-h.gate
		}
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(h.srv.Close)
	t.Cleanup(h.release) // before Close: a held call must end
	return h
}

func (h *bodyHook) sent(path string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.bodies[path]...)
}

// TestFlowStepsKeepTheirPromises: a flow started by a row (through the
// builtin start_flow, which passes its chain depth as an internal param)
// delivers to its targets payloads without internal params; a step run
// whose outcome came before one of its runs ended (result any) still
// records that run's end; deleting the flow removes its step tasks.
func TestFlowStepsKeepTheirPromises(t *testing.T) {
	h := startBodyHook(t)
	b := setup(t, flowConfig(func(*config.Config) {}))
	for _, id := range []string{"fast", "slow"} {
		tg := map[string]any{"id": id, "kind": "http", "state": "running",
			"http": map[string]any{"method": "POST", "url": h.srv.URL + "/" + id}}
		if code := b.call(t, "POST", "/api/v1/targets", tg, nil); code != http.StatusCreated {
			t.Fatalf("create target %s: status %d", id, code)
		}
	}
	flow := map[string]any{"id": "pflow", "start": "a", "steps": []any{
		map[string]any{"id": "a", "targets": []string{"fast", "slow"}, "result": "any"}}}
	b.createFlow(t, flow)
	var row task.Row
	if code := b.call(t, "POST", "/api/v1/scenarios/memos/rows", map[string]any{
		"content": "start pflow", "title": "row", "when": "in 1s", "targets": "flow:pflow"}, &row); code != http.StatusCreated {
		t.Fatalf("create row: status %d", code)
	}
	var x task.Execution
	testwait.For(t, 30*time.Second, "pflow's execution to finish", func() bool {
		list := b.executionsOf(t, "pflow")
		if len(list) == 1 && list[0].State.Final() {
			x = list[0]
			return true
		}
		return false
	})
	if x.State != task.ExecSuccess {
		t.Fatalf("execution %s = %s (%s), want success on the fast target", x.ID, x.State, x.Reason)
	}
	if x.Params[flowDepthKey] == "" {
		t.Fatalf("execution params %v: no %s; the test no longer sends an internal param", x.Params, flowDepthKey)
	}
	for _, path := range []string{"/fast", "/slow"} {
		sent := h.sent(path)
		if len(sent) != 1 {
			t.Fatalf("%s got %d deliveries, want 1", path, len(sent))
		}
		if !strings.Contains(sent[0], flows.ParamExecution) || strings.Contains(sent[0], task.InternalParamPrefix) {
			t.Errorf("%s payload %s: want the step's params without internal (%s…) ones", path, sent[0], task.InternalParamPrefix)
		}
	}

	// The slow run ends after the execution did: its step run's record follows.
	if runs := x.StepRuns[0].Runs; !anyRunIn(runs, task.RunRunning) {
		t.Fatalf("step run's runs %+v: want the slow one still running before its answer", runs)
	}
	h.release()
	testwait.For(t, 30*time.Second, "the step run's record to show both runs done", func() bool {
		got := b.execution(t, x.ID)
		runs := got.StepRuns[0].Runs
		return len(runs) == 2 && runs[0].State == task.RunDone && runs[1].State == task.RunDone
	})

	f, err := b.srv.store.GetFlow(t.Context(), "pflow")
	if err != nil {
		t.Fatal(err)
	}
	if code := b.call(t, "DELETE", "/api/v1/flows/pflow", nil, nil); code != http.StatusNoContent {
		t.Fatalf("DELETE: status %d, want 204", code)
	}
	// The step task is retired: disarmed, released, then purged.
	testwait.For(t, 30*time.Second, "the deleted flow's step task to be removed", func() bool {
		_, err := b.srv.store.GetTask(t.Context(), flows.StepTaskID(f, "a"))
		return errors.Is(err, task.ErrNotFound)
	})
	if armed := b.srv.armer.Armed(); slices.Contains(armed, flows.StepTaskID(f, "a")) {
		t.Errorf("the deleted flow's step task is still armed here: %v", armed)
	}
}

// flowDepthKey is the internal param start_flow passes on.
const flowDepthKey = task.InternalParamPrefix + "flow_depth"

func anyRunIn(runs []task.StepTargetRun, s task.RunState) bool {
	for _, r := range runs {
		if r.State == s {
			return true
		}
	}
	return false
}
