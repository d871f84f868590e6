package server

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"cronsheet/config"
	"cronsheet/store/mongo/mongotest"
	"cronsheet/task"
)

// flowHook is a real HTTP target for flows: /ok answers 200, /fail 400 (a
// permanent failure), /async 200 and waits for feedback. It counts every
// delivery by path (which names the execution and step run).
type flowHook struct {
	srv   *httptest.Server
	mu    sync.Mutex
	calls map[string]int
	ids   map[string][]string // path → trigger ids of its calls, in order
}

func startFlowHook(t *testing.T) *flowHook {
	t.Helper()
	h := &flowHook{calls: map[string]int{}, ids: map[string][]string{}}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.calls[r.URL.Path]++
		h.ids[r.URL.Path] = append(h.ids[r.URL.Path], r.Header.Get("X-Cronsheet-Trigger-Id"))
		h.mu.Unlock()
		if strings.HasPrefix(r.URL.Path, "/fail") {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		_, _ = w.Write([]byte("out of " + r.URL.Path))
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *flowHook) count(path string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.calls[path]
}

// triggerID returns the trigger id of path's last call.
func (h *flowHook) triggerID(path string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	ids := h.ids[path]
	if len(ids) == 0 {
		return ""
	}
	return ids[len(ids)-1]
}

// triggerIDs returns the trigger ids of path's calls, in order (the same
// id twice is a re-delivery; two ids are two fires).
func (h *flowHook) triggerIDs(path string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.ids[path]...)
}

func (h *flowHook) snapshot() map[string]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string]int, len(h.calls))
	for k, v := range h.calls {
		out[k] = v
	}
	return out
}

// flowTargets creates the targets ok, fail (http) and async (waits for
// feedback), each calling /<id>/<execution>/<step run>.
func flowTargets(t *testing.T, b *testBundle, h *flowHook) {
	t.Helper()
	for _, id := range []string{"ok", "fail", "async"} {
		tg := map[string]any{"id": id, "kind": "http", "state": "running",
			"http": map[string]any{"method": "POST", "url": h.srv.URL + "/" + id + "/{{flow_execution_id}}/{{flow_step_run}}"}}
		if id == "async" {
			tg["feedback_timeout"] = 3600
		}
		if code := b.call(t, "POST", "/api/v1/targets", tg, nil); code != http.StatusCreated {
			t.Fatalf("create target %s: status %d", id, code)
		}
	}
}

// flowConfig picks a node's store: store adjusts the config (a SQLite
// path, or useMongo).
func flowConfig(store func(*config.Config)) func(*config.Config) {
	return func(c *config.Config) {
		c.HTTP.Allow = []string{"127.0.0.0/8"}
		store(c)
	}
}

func (b *testBundle) createFlow(t *testing.T, flow map[string]any) {
	t.Helper()
	var out map[string]any
	if code := b.call(t, "POST", "/api/v1/flows", flow, &out); code != http.StatusCreated {
		t.Fatalf("create flow: status %d: %v", code, out)
	}
}

func (b *testBundle) triggerFlow(t *testing.T, id string, params map[string]string) *task.Execution {
	t.Helper()
	var x task.Execution
	if code := b.call(t, "POST", "/api/v1/flows/"+id+"/trigger", map[string]any{"params": params}, &x); code != http.StatusCreated {
		t.Fatalf("trigger flow %s: status %d", id, code)
	}
	return &x
}

func (b *testBundle) execution(t *testing.T, id string) *task.Execution {
	t.Helper()
	var x task.Execution
	if code := b.call(t, "GET", "/api/v1/executions/"+id, nil, &x); code != http.StatusOK {
		t.Fatalf("get execution %s: status %d", id, code)
	}
	return &x
}

func (b *testBundle) waitExecution(t *testing.T, id string) *task.Execution {
	t.Helper()
	var x *task.Execution
	eventually(t, "execution "+id+" to finish", func() bool {
		x = b.execution(t, id)
		return x.State.Final()
	})
	return x
}

// stepsOf lists an execution's step runs as "step:outcome".
func stepsOf(x *task.Execution) string {
	parts := make([]string, len(x.StepRuns))
	for i, sr := range x.StepRuns {
		parts[i] = sr.Step + ":" + string(sr.Outcome)
	}
	return strings.Join(parts, " ")
}

func step(id string, targets []string, on map[string][]string) map[string]any {
	return map[string]any{"id": id, "targets": targets, "on": on}
}

// TestFlowOutcomes runs a flow down each path (success, failure and
// timeout edges, all versus any, no edge, stop) through the API of a
// running node on SQLite, counting deliveries at the hook.
func TestFlowOutcomes(t *testing.T) { testFlowOutcomes(t, func(*config.Config) {}) }

// TestFlowOutcomesOnMongo runs them on the mongo driver.
func TestFlowOutcomesOnMongo(t *testing.T) {
	testFlowOutcomes(t, useMongo(t, mongotest.URI(t, "flows on the mongo driver")))
}

// TestFlowSurvivesRestart: see testFlowRestart; on SQLite.
func TestFlowSurvivesRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cronsheet.db")
	testFlowRestart(t, func(c *config.Config) { c.Store.Path = path })
}

// TestFlowSurvivesRestartOnMongo: see testFlowRestart; on the mongo driver.
func TestFlowSurvivesRestartOnMongo(t *testing.T) {
	testFlowRestart(t, useMongo(t, mongotest.URI(t, "flows on the mongo driver")))
}

func testFlowOutcomes(t *testing.T, store func(*config.Config)) {
	h := startFlowHook(t)
	es := startBulkSink(t)
	b := setup(t, flowConfig(func(c *config.Config) {
		store(c)
		c.Events = config.Events{Kind: "http", URL: es.srv.URL + "/_bulk"}
	}))
	flowTargets(t, b, h)

	t.Run("SuccessEdge", func(t *testing.T) {
		b.createFlow(t, map[string]any{"id": "nightly", "start": "extract", "steps": []any{
			step("extract", []string{"ok"}, map[string][]string{"success": {"load"}, "failure": {"alert"}}),
			map[string]any{"id": "load", "targets": []string{"ok"}, "params": map[string]string{"got": "{{prev.status}} {{prev.output}} {{params.day}}"}},
			step("alert", []string{"ok"}, nil),
		}})
		x := b.waitExecution(t, b.triggerFlow(t, "nightly", map[string]string{"day": "mon"}).ID)
		if x.State != task.ExecSuccess || stepsOf(x) != "extract:success load:success" {
			t.Fatalf("execution = %s %q, want success through extract and load", x.State, stepsOf(x))
		}
		// The flow's creation and its trigger are in the audit trail,
		// with who made them.
		var audit struct {
			Records []struct {
				RowID  string `json:"row_id"`
				Action string `json:"action"`
				Who    string `json:"who"`
			} `json:"records"`
		}
		if code := b.call(t, "GET", "/api/v1/audit?kind=@flow&id=nightly", nil, &audit); code != 200 {
			t.Fatalf("audit: status %d", code)
		}
		actions := map[string]bool{}
		for _, r := range audit.Records {
			if r.Who == "" {
				t.Errorf("audit record %+v names nobody", r)
			}
			actions[r.Action] = true
		}
		if !actions["create"] || !actions["trigger"] {
			t.Errorf("audit of flow nightly = %+v, want its create and trigger", audit.Records)
		}
		if got := x.StepRuns[1].Params["got"]; got != "success HTTP 200: out of /ok/"+x.ID+"/0 mon" {
			t.Errorf("load's templated param = %q", got)
		}
		if x.Result != "HTTP 200: out of /ok/"+x.ID+"/1" {
			t.Errorf("result = %q, want load's output", x.Result)
		}
		for i := range 2 {
			path := fmt.Sprintf("/ok/%s/%d", x.ID, i)
			if n := h.count(path); n != 1 {
				t.Errorf("step run %d delivered %d times (trigger ids %v), want 1", i, n, h.triggerIDs(path))
			}
		}
		var list struct{ Executions []task.Execution }
		if code := b.call(t, "GET", "/api/v1/flows/nightly/executions", nil, &list); code != http.StatusOK ||
			len(list.Executions) != 1 || list.Executions[0].ID != x.ID {
			t.Errorf("executions list: status %d, %d executions", code, len(list.Executions))
		}
	})

	t.Run("FailureEdge", func(t *testing.T) {
		b.createFlow(t, map[string]any{"id": "fails", "start": "a", "steps": []any{
			step("a", []string{"fail"}, map[string][]string{"success": {"b"}, "failure": {"c"}}),
			step("b", []string{"ok"}, nil), step("c", []string{"ok"}, nil),
		}})
		x := b.waitExecution(t, b.triggerFlow(t, "fails", nil).ID)
		if x.State != task.ExecSuccess || stepsOf(x) != "a:failure c:success" {
			t.Fatalf("execution = %s %q, want a failed then c", x.State, stepsOf(x))
		}
	})

	t.Run("TimeoutEdge", func(t *testing.T) {
		b.createFlow(t, map[string]any{"id": "slow", "start": "a", "steps": []any{
			map[string]any{"id": "a", "targets": []string{"async"}, "timeout": 1,
				"on": map[string][]string{"success": {"b"}, "timeout": {"c"}}},
			step("b", []string{"ok"}, nil), step("c", []string{"ok"}, nil),
		}})
		x := b.waitExecution(t, b.triggerFlow(t, "slow", nil).ID)
		if x.State != task.ExecSuccess || stepsOf(x) != "a:timeout c:success" {
			t.Fatalf("execution = %s %q, want a timed out then c", x.State, stepsOf(x))
		}
	})

	t.Run("AllVersusAny", func(t *testing.T) {
		for _, mode := range []string{"all", "any"} {
			id := "join-" + mode
			b.createFlow(t, map[string]any{"id": id, "start": "a", "steps": []any{
				map[string]any{"id": "a", "targets": []string{"ok", "fail"}, "result": mode,
					"on": map[string][]string{"success": {"won"}, "failure": {"lost"}}},
				step("won", []string{"ok"}, nil), step("lost", []string{"ok"}, nil),
			}})
			x := b.waitExecution(t, b.triggerFlow(t, id, nil).ID)
			want := map[string]string{"all": "a:failure lost:success", "any": "a:success won:success"}[mode]
			if got := stepsOf(x); got != want {
				t.Errorf("result %s: steps %q, want %q", mode, got, want)
			}
		}
	})

	t.Run("NoEdgeEnds", func(t *testing.T) {
		b.createFlow(t, map[string]any{"id": "ends", "start": "a", "steps": []any{
			step("a", []string{"fail"}, map[string][]string{"success": {"b"}}), step("b", []string{"ok"}, nil),
		}})
		x := b.waitExecution(t, b.triggerFlow(t, "ends", nil).ID)
		if x.State != task.ExecFailure || stepsOf(x) != "a:failure" {
			t.Fatalf("execution = %s %q, want failure after a alone", x.State, stepsOf(x))
		}
	})

	t.Run("StopInterruptsAndRefusesLateFeedback", func(t *testing.T) {
		b.createFlow(t, map[string]any{"id": "stoppable", "start": "a", "steps": []any{
			step("a", []string{"async"}, map[string][]string{"success": {"b"}}), step("b", []string{"ok"}, nil),
		}})
		x := b.triggerFlow(t, "stoppable", nil)
		path := "/async/" + x.ID + "/0"
		eventually(t, "step a accepted", func() bool {
			sr := b.execution(t, x.ID).StepRuns[0]
			return len(sr.Runs) == 1 && sr.Runs[0].State == task.RunAccepted
		})
		// While the execution is unfinished the flow is running, in its
		// own answer and in the list; the others are idle.
		if st := b.flowState(t, "stoppable"); st != task.FlowRunning {
			t.Errorf("flow state during an execution = %q, want running", st)
		}
		if st := b.listedFlowStates(t); st["stoppable"] != task.FlowRunning || st["nightly"] != task.FlowIdle {
			t.Errorf("listed flow states = %v, want stoppable running, nightly idle", st)
		}
		var stopped task.Execution
		if code := b.call(t, "POST", "/api/v1/executions/"+x.ID+"/stop", nil, &stopped); code != http.StatusOK ||
			stopped.State != task.ExecInterrupted {
			t.Fatalf("stop: status %d, state %s", code, stopped.State)
		}
		if st := b.flowState(t, "stoppable"); st != task.FlowIdle {
			t.Errorf("flow state after the stop = %q, want idle", st)
		}
		if code := b.call(t, "POST", "/api/v1/runs/"+h.triggerID(path)+"/feedback", map[string]any{"status": 0}, nil); code != http.StatusConflict {
			t.Errorf("late feedback: status %d, want 409", code)
		}
		if code := b.call(t, "POST", "/api/v1/executions/"+x.ID+"/stop", nil, nil); code != http.StatusConflict {
			t.Errorf("stop again: status %d, want 409", code)
		}
		if got := b.execution(t, x.ID); got.State != task.ExecInterrupted || stepsOf(got) != "a:interrupted" {
			t.Errorf("execution after late feedback = %s %q", got.State, stepsOf(got))
		}
		// The stop is in the audit trail once, with who did it; the reads
		// of the execution before and after it are not.
		var audit struct {
			Records []struct {
				Action string `json:"action"`
				Who    string `json:"who"`
			} `json:"records"`
		}
		if code := b.call(t, "GET", "/api/v1/audit?kind=@flow&id=stoppable", nil, &audit); code != http.StatusOK {
			t.Fatalf("audit: status %d", code)
		}
		stops := 0
		for _, r := range audit.Records {
			if r.Action == "stop" {
				stops++
				if r.Who == "" {
					t.Errorf("stop audited without who")
				}
			}
		}
		if stops != 1 {
			t.Errorf("audit of flow stoppable has %d stop records (%+v), want 1", stops, audit.Records)
		}
	})

	t.Run("BuiltinStartAndStopFlow", func(t *testing.T) {
		for _, tg := range []map[string]any{
			{"id": "starter", "kind": "builtin", "state": "running", "builtin": map[string]any{"action": "start_flow", "flows": []string{"inner"}}},
			{"id": "stopper", "kind": "builtin", "state": "running", "builtin": map[string]any{"action": "stop_flow", "flows": []string{"inner"}}},
		} {
			if code := b.call(t, "POST", "/api/v1/targets", tg, nil); code != http.StatusCreated {
				t.Fatalf("create target %s: status %d", tg["id"], code)
			}
		}
		var e struct{ Error, Field string }
		bad := map[string]any{"id": "bad-starter", "kind": "builtin", "state": "running", "builtin": map[string]any{"action": "start_flow"}}
		if code := b.call(t, "POST", "/api/v1/targets", bad, &e); code != http.StatusBadRequest || e.Field != "builtin.flows" {
			t.Errorf("start_flow without flows: status %d, %+v; want 400 on builtin.flows", code, e)
		}
		b.createFlow(t, map[string]any{"id": "inner", "start": "wait", "steps": []any{step("wait", []string{"async"}, nil)}})
		b.createFlow(t, map[string]any{"id": "outer", "start": "s", "steps": []any{step("s", []string{"starter"}, nil)}})
		b.createFlow(t, map[string]any{"id": "halt", "start": "s", "steps": []any{step("s", []string{"stopper"}, nil)}})
		if x := b.waitExecution(t, b.triggerFlow(t, "outer", nil).ID); x.State != task.ExecSuccess {
			t.Fatalf("outer execution = %s %q", x.State, stepsOf(x))
		}
		var list struct{ Executions []task.Execution }
		if code := b.call(t, "GET", "/api/v1/flows/inner/executions", nil, &list); code != http.StatusOK ||
			len(list.Executions) != 1 || list.Executions[0].State != task.ExecRunning {
			t.Fatalf("inner executions after start_flow: status %d, %+v", code, list.Executions)
		}
		inner := list.Executions[0].ID
		if x := b.waitExecution(t, b.triggerFlow(t, "halt", nil).ID); x.State != task.ExecSuccess {
			t.Fatalf("halt execution = %s %q", x.State, stepsOf(x))
		}
		if got := b.execution(t, inner); got.State != task.ExecInterrupted {
			t.Errorf("inner execution after stop_flow = %s, want interrupted", got.State)
		}
	})

	t.Run("RowTargetsFlow", func(t *testing.T) { testRowTargetsFlow(t, b, h) })
	t.Run("Schedule", func(t *testing.T) { testFlowSchedule(t, b, h) })

	t.Run("Cycles", func(t *testing.T) {
		loop := map[string]any{"id": "loop", "start": "a", "steps": []any{
			step("a", []string{"ok"}, map[string][]string{"success": {"a"}})}}
		var e struct{ Error, Field string }
		if code := b.call(t, "POST", "/api/v1/flows", loop, &e); code != http.StatusBadRequest || e.Field != "max_depth" {
			t.Fatalf("cycle without max_depth: status %d, %+v; want 400 on max_depth", code, e)
		}
		loop["max_depth"] = 3
		b.createFlow(t, loop)
		x := b.waitExecution(t, b.triggerFlow(t, "loop", nil).ID)
		if x.State != task.ExecInterrupted || stepsOf(x) != "a:success a:success a:success" || !strings.Contains(x.Reason, "max_depth") {
			t.Fatalf("execution = %s %q (%s), want cut after 3 step runs", x.State, stepsOf(x), x.Reason)
		}
	})

	t.Run("Validation", func(t *testing.T) {
		cases := []struct {
			flow  map[string]any
			field string
		}{
			{map[string]any{"id": "v1", "start": "a", "steps": []any{step("a", []string{"ok"}, map[string][]string{"success": {"nope"}})}}, "steps[0].on.success[0]"},
			{map[string]any{"id": "v2", "start": "a", "steps": []any{step("a", nil, nil)}}, "steps[0].targets"},
			{map[string]any{"id": "v3", "start": "a", "steps": []any{map[string]any{"id": "a", "targets": []string{"ok"}, "result": "most"}}}, "steps[0].result"},
		}
		for _, c := range cases {
			var e struct{ Error, Field string }
			if code := b.call(t, "POST", "/api/v1/flows", c.flow, &e); code != http.StatusBadRequest || e.Field != c.field {
				t.Errorf("flow %v: status %d, %+v; want 400 on %s", c.flow["id"], code, e, c.field)
			}
		}
		b.createFlow(t, map[string]any{"id": "nostart", "steps": []any{step("a", []string{"ok"}, nil)}})
		if code := b.call(t, "POST", "/api/v1/flows/nostart/trigger", nil, nil); code != http.StatusConflict {
			t.Errorf("trigger without a start step: status %d, want 409", code)
		}
		if code := b.call(t, "PUT", "/api/v1/flows/nostart", map[string]any{"version": 5, "start": "a",
			"steps": []any{step("a", []string{"ok"}, nil)}}, nil); code != http.StatusConflict {
			t.Errorf("PUT at a stale version: status %d, want 409", code)
		}
		if code := b.call(t, "DELETE", "/api/v1/flows/nostart", nil, nil); code != http.StatusNoContent {
			t.Errorf("DELETE: status %d, want 204", code)
		}
	})

	// Last: it checks the ends of every execution above.
	t.Run("Events", func(t *testing.T) { testFlowEvents(t, b, es) })
}

// testFlowRestart: a node stops while a step waits for its
// target's feedback; the feedback comes while no engine listens for run
// changes; the next node on the same store resumes the execution from its
// record, and every step is delivered exactly once (counted at the hook).
func testFlowRestart(t *testing.T, store func(*config.Config)) {
	h := startFlowHook(t)
	b := setup(t, flowConfig(store))
	flowTargets(t, b, h)
	b.createFlow(t, map[string]any{"id": "restart", "start": "a", "steps": []any{
		step("a", []string{"async"}, map[string][]string{"success": {"b"}}), step("b", []string{"ok"}, nil),
	}})
	x := b.triggerFlow(t, "restart", nil)
	eventually(t, "step a accepted", func() bool {
		sr := b.execution(t, x.ID).StepRuns[0]
		return len(sr.Runs) == 1 && sr.Runs[0].State == task.RunAccepted
	})
	b.stop()

	b2 := setup(t, flowConfig(store))
	if code := b2.call(t, "POST", "/api/v1/runs/"+h.triggerID("/async/"+x.ID+"/0")+"/feedback",
		map[string]any{"status": 0, "output": "loaded"}, nil); code != http.StatusOK {
		t.Fatalf("feedback after restart: status %d", code)
	}
	got := b2.waitExecution(t, x.ID)
	if got.State != task.ExecSuccess || stepsOf(got) != "a:success b:success" || got.StepRuns[1].Params["flow_step_run"] != "" {
		t.Errorf("execution after restart = %s %q", got.State, stepsOf(got))
	}
	want := map[string]int{"/async/" + x.ID + "/0": 1, "/ok/" + x.ID + "/1": 1}
	if calls := h.snapshot(); fmt.Sprint(calls) != fmt.Sprint(want) {
		t.Errorf("deliveries = %v, want each step once: %v", calls, want)
	}
}

func (b *testBundle) flowState(t *testing.T, id string) task.FlowState {
	t.Helper()
	var fl task.Flow
	if code := b.call(t, "GET", "/api/v1/flows/"+id, nil, &fl); code != http.StatusOK {
		t.Fatalf("get flow %s: status %d", id, code)
	}
	return fl.State
}

func (b *testBundle) listedFlowStates(t *testing.T) map[string]task.FlowState {
	t.Helper()
	var page struct{ Flows []task.Flow }
	if code := b.call(t, "GET", "/api/v1/flows?limit=500", nil, &page); code != http.StatusOK {
		t.Fatalf("list flows: status %d", code)
	}
	out := make(map[string]task.FlowState, len(page.Flows))
	for _, fl := range page.Flows {
		out[fl.ID] = fl.State
	}
	return out
}

// executionsOf returns a flow's executions, newest first.
func (b *testBundle) executionsOf(t *testing.T, id string) []task.Execution {
	t.Helper()
	var list struct{ Executions []task.Execution }
	if code := b.call(t, "GET", "/api/v1/flows/"+id+"/executions?limit=100", nil, &list); code != http.StatusOK {
		t.Fatalf("executions of %s: status %d", id, code)
	}
	return list.Executions
}

// testRowTargetsFlow: a table row whose targets name flow:rowflow starts
// an execution at its fire, with the row's params; its steps reach the
// hook once each; a second delivery of the same run (what a node resuming
// the run after a crash does) finds the same execution.
func testRowTargetsFlow(t *testing.T, b *testBundle, h *flowHook) {
	b.createFlow(t, map[string]any{"id": "rowflow", "start": "a", "steps": []any{
		map[string]any{"id": "a", "targets": []string{"ok"}, "params": map[string]string{"from": "{{params.title}}"},
			"on": map[string][]string{"success": {"b"}}},
		step("b", []string{"ok"}, nil),
	}})
	var bad task.Row
	if code := b.call(t, "POST", "/api/v1/scenarios/memos/rows", map[string]any{
		"content": "bad", "when": "in 1s", "targets": "flow:-bad"}, &bad); code != http.StatusCreated {
		t.Fatalf("create row: status %d", code)
	}
	if got := b.waitRow(t, bad.ID, 10*time.Second, func(r *task.Row) bool { return r.IsFetched == 1 }); got.IsActive != task.RowError ||
		!strings.HasPrefix(got.Error, "targets") || !strings.Contains(got.Error, "flow:-bad") {
		t.Errorf("row targeting flow:-bad: is_active %d, error %q; want an error naming targets and flow:-bad", got.IsActive, got.Error)
	}
	var row task.Row
	if code := b.call(t, "POST", "/api/v1/scenarios/memos/rows", map[string]any{
		"content": "start the flow", "title": "row", "when": "in 1s", "targets": "flow:rowflow"}, &row); code != http.StatusCreated {
		t.Fatalf("create row: status %d", code)
	}
	var run *task.Run
	eventually(t, "the row's run to finish", func() bool {
		runs := b.runs(t, row.ID)
		if len(runs) == 1 && runs[0].State.Final() {
			run = runs[0]
		}
		return run != nil
	})
	if run.State != task.RunDone || run.Target != "flow:rowflow" {
		t.Fatalf("row's run = %s to %s (%s), want done to flow:rowflow", run.State, run.Target, run.Error)
	}
	var list []task.Execution
	eventually(t, "rowflow's execution to finish", func() bool {
		list = b.executionsOf(t, "rowflow")
		return len(list) == 1 && list[0].State.Final()
	})
	x := list[0]
	if x.State != task.ExecSuccess || stepsOf(&x) != "a:success b:success" || x.TriggerID != run.TriggerID {
		t.Fatalf("execution = %s %q from %q, want success through a and b from the row's run %s", x.State, stepsOf(&x), x.TriggerID, run.TriggerID)
	}
	if !strings.Contains(run.Output, x.ID) {
		t.Errorf("row's run output %q does not name execution %s", run.Output, x.ID)
	}
	if got := x.StepRuns[0].Params["from"]; got != "row" {
		t.Errorf("step a's param from = %q, want the row's param (row)", got)
	}
	// The same run delivered again starts nothing new.
	id, err := b.srv.startFlow(t.Context(), "rowflow", run.TriggerID, row.ID, map[string]string{"title": "row"})
	if err != nil || id != x.ID {
		t.Errorf("re-delivery of run %s: execution %q, %v; want %s", run.TriggerID, id, err, x.ID)
	}
	if n := len(b.executionsOf(t, "rowflow")); n != 1 {
		t.Errorf("rowflow has %d executions after a re-delivery, want 1", n)
	}
	for i := range 2 {
		if path := fmt.Sprintf("/ok/%s/%d", x.ID, i); h.count(path) != 1 {
			t.Errorf("step run %d delivered %d times, want 1", i, h.count(path))
		}
	}
}

// testFlowSchedule: a flow with a schedule is triggered on it; an edit
// that drops the schedule stops the fires; a bad schedule or zone is
// refused naming the field.
func testFlowSchedule(t *testing.T, b *testBundle, h *flowHook) {
	for field, fl := range map[string]map[string]any{
		"schedule": {"id": "badsched", "start": "a", "schedule": "every banana", "steps": []any{step("a", []string{"ok"}, nil)}},
		"tz":       {"id": "badtz", "start": "a", "schedule": "every 1s", "tz": "Mars/Olympus", "steps": []any{step("a", []string{"ok"}, nil)}},
	} {
		var e struct{ Error, Field string }
		if code := b.call(t, "POST", "/api/v1/flows", fl, &e); code != http.StatusBadRequest || e.Field != field {
			t.Errorf("flow with a bad %s: status %d, %+v; want 400 on %s", field, code, e, field)
		}
	}
	b.createFlow(t, map[string]any{"id": "ticking", "start": "a", "schedule": "every 1s", "tz": "Asia/Shanghai",
		"steps": []any{step("a", []string{"ok"}, nil)}})
	var done []task.Execution
	eventually(t, "two scheduled executions of ticking", func() bool {
		done = done[:0]
		for _, x := range b.executionsOf(t, "ticking") {
			if x.State.Final() {
				done = append(done, x)
			}
		}
		return len(done) >= 2
	})
	for _, x := range done {
		if x.State != task.ExecSuccess || x.TriggerID == "" {
			t.Errorf("scheduled execution %s = %s from trigger %q, want success from a fire", x.ID, x.State, x.TriggerID)
		}
		if path := "/ok/" + x.ID + "/0"; h.count(path) != 1 {
			t.Errorf("scheduled execution %s delivered step a %d times, want 1", x.ID, h.count(path))
		}
	}
	var fl task.Flow
	if code := b.call(t, "GET", "/api/v1/flows/ticking", nil, &fl); code != http.StatusOK || fl.Schedule != "every 1s" || fl.TZ != "Asia/Shanghai" {
		t.Fatalf("get ticking: status %d, schedule %q tz %q", code, fl.Schedule, fl.TZ)
	}
	// The GET answer goes back as it is, less its schedule.
	fl.Schedule, fl.TZ = "", ""
	if code := b.call(t, "PUT", "/api/v1/flows/ticking", fl, nil); code != http.StatusOK {
		t.Fatalf("put ticking without a schedule: status %d", code)
	}
	// A fire already under way when the edit landed may still finish;
	// after that, none.
	time.Sleep(1500 * time.Millisecond)
	before := len(b.executionsOf(t, "ticking"))
	time.Sleep(2500 * time.Millisecond)
	if after := len(b.executionsOf(t, "ticking")); after != before {
		t.Errorf("ticking went from %d to %d executions after its schedule was removed", before, after)
	}
}

// bulkSink is a real Elasticsearch bulk endpoint stand-in keeping every
// document it was sent.
type bulkSink struct {
	srv  *httptest.Server
	mu   sync.Mutex
	docs []map[string]any
}

func startBulkSink(t *testing.T) *bulkSink {
	t.Helper()
	s := &bulkSink{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		lines := strings.Split(strings.TrimSpace(string(body)), "\n")
		s.mu.Lock()
		for i := 1; i < len(lines); i += 2 {
			var d map[string]any
			if json.Unmarshal([]byte(lines[i]), &d) == nil {
				s.docs = append(s.docs, d)
			}
		}
		s.mu.Unlock()
		_, _ = w.Write([]byte(`{"errors":false,"items":[]}`))
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// flowCounts counts what a sink's flow documents say: "execution:<state>"
// and "step:<outcome>", and how often each execution's end came.
func (s *bulkSink) flowCounts() (map[string]int, map[string]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	counts, ends := map[string]int{}, map[string]int{}
	for _, d := range s.docs {
		state, _ := d["state"].(string)
		switch d["event"] {
		case "flow.execution":
			counts["execution:"+state]++
			ends[fmt.Sprint(d["execution_id"])]++
		case "flow.step":
			counts["step:"+state]++
		}
	}
	return counts, ends
}

// metricValues reads the flow counters of GET /metrics as
// "execution:<state>" and "step:<outcome>".
func (b *testBundle) metricValues(t *testing.T) map[string]int {
	t.Helper()
	resp, err := http.Get(b.base + "/metrics")
	if err != nil {
		t.Fatalf("metrics: %v", err)
	}
	defer resp.Body.Close()
	text, _ := io.ReadAll(resp.Body)
	out := map[string]int{}
	for _, line := range strings.Split(string(text), "\n") {
		var kind, label string
		switch {
		case strings.HasPrefix(line, `cronsheet_flow_executions_total{state="`):
			kind, label = "execution", strings.TrimPrefix(line, `cronsheet_flow_executions_total{state="`)
		case strings.HasPrefix(line, `cronsheet_flow_step_outcomes_total{outcome="`):
			kind, label = "step", strings.TrimPrefix(line, `cronsheet_flow_step_outcomes_total{outcome="`)
		default:
			continue
		}
		name, value, _ := strings.Cut(label, `"} `)
		n, err := strconv.Atoi(value)
		if err != nil {
			t.Fatalf("metric line %q: %v", line, err)
		}
		out[kind+":"+name] = n
	}
	return out
}

// testFlowEvents: once every execution of the run ended, /metrics counts
// the executions by final state and the step runs by outcome exactly as
// the executions' records do, and the event sink got one document for
// each execution's end and each step run's.
func testFlowEvents(t *testing.T, b *testBundle, es *bulkSink) {
	want := map[string]int{}
	eventually(t, "every execution to end", func() bool {
		clear(want)
		for id := range b.listedFlowStates(t) {
			for _, x := range b.executionsOf(t, id) {
				if !x.State.Final() {
					return false
				}
				want["execution:"+string(x.State)]++
				for _, sr := range x.StepRuns {
					want["step:"+string(sr.Outcome)]++
				}
			}
		}
		return true
	})
	if want["execution:success"] == 0 || want["step:failure"] == 0 || want["execution:interrupted"] == 0 {
		t.Fatalf("the run has too few kinds of ends to check: %v", want)
	}
	if got := b.metricValues(t); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("flow metrics = %v, want %v (from the executions' records)", got, want)
	}
	eventually(t, "the flow events at the sink", func() bool {
		got, _ := es.flowCounts()
		return fmt.Sprint(got) == fmt.Sprint(want)
	})
	if _, ends := es.flowCounts(); len(ends) != want["execution:success"]+want["execution:failure"]+
		want["execution:timeout"]+want["execution:interrupted"] {
		t.Errorf("sink has the ends of %d executions, want each once", len(ends))
	} else {
		for id, n := range ends {
			if n != 1 {
				t.Errorf("execution %s ended %d times at the sink", id, n)
			}
		}
	}
}

// TestFlowDumpRoundTrip: flows and their executions go through export
// and import into another store as they were; a second import stores
// nothing. On SQLite.
func TestFlowDumpRoundTrip(t *testing.T) {
	testFlowDumpRoundTrip(t, func(*config.Config) {}, func(*config.Config) {})
}

// TestFlowDumpRoundTripOnMongo: the same on the mongo driver.
func TestFlowDumpRoundTripOnMongo(t *testing.T) {
	uri := mongotest.URI(t, "flows on the mongo driver")
	testFlowDumpRoundTrip(t, useMongo(t, uri), useMongo(t, uri))
}

func testFlowDumpRoundTrip(t *testing.T, from, to func(*config.Config)) {
	h := startFlowHook(t)
	b := setup(t, flowConfig(from))
	flowTargets(t, b, h)
	b.createFlow(t, map[string]any{"id": "dumped", "start": "a", "schedule": "daily 02:00", "tz": "Europe/Paris",
		"steps": []any{step("a", []string{"ok"}, map[string][]string{"success": {"b"}}), step("b", []string{"ok"}, nil)}})
	var fl task.Flow
	if code := b.call(t, "PUT", "/api/v1/flows/dumped", map[string]any{"description": "edited", "start": "a", "schedule": "daily 02:00",
		"tz": "Europe/Paris", "steps": []any{step("a", []string{"ok"}, map[string][]string{"success": {"b"}}), step("b", []string{"ok"}, nil)}}, &fl); code != http.StatusOK {
		t.Fatalf("put: status %d", code)
	}
	x := b.waitExecution(t, b.triggerFlow(t, "dumped", map[string]string{"day": "tue"}).ID)
	var buf strings.Builder
	n, err := ExportStore(t.Context(), b.srv.store, &buf)
	if err != nil || n.Flows != 1 || n.Executions != 1 {
		t.Fatalf("export: %+v, %v; want 1 flow and 1 execution", n, err)
	}

	b2 := setup(t, flowConfig(to))
	got, err := ImportStore(t.Context(), b2.srv.store, strings.NewReader(buf.String()))
	if err != nil || got.Stored.Flows != 1 || got.Stored.Executions != 1 {
		t.Fatalf("import: %+v, %v", got, err)
	}
	var fl2 task.Flow
	if code := b2.call(t, "GET", "/api/v1/flows/dumped", nil, &fl2); code != http.StatusOK {
		t.Fatalf("get imported flow: status %d", code)
	}
	fl.State, fl2.State = "", ""
	if a, b := mustJSON(t, fl), mustJSON(t, fl2); a != b {
		t.Errorf("imported flow = %s\nwant %s", b, a)
	}
	if a, b := mustJSON(t, x), mustJSON(t, b2.execution(t, x.ID)); a != b {
		t.Errorf("imported execution = %s\nwant %s", b, a)
	}
	again, err := ImportStore(t.Context(), b2.srv.store, strings.NewReader(buf.String()))
	if err != nil || again.Stored.Flows != 0 || again.Stored.Executions != 0 || again.Read.Executions != 1 {
		t.Errorf("second import: %+v, %v; want nothing stored", again, err)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
