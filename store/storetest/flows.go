package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// RunFlows is the conformance suite of store.Flows: flows with versions,
// executions compared and set, the listings resumption uses, and step
// tasks. SkipConcurrency skips only its concurrency case.
func RunFlows(t *testing.T, newStore func(t *testing.T) store.Product, opts ...Option) {
	t.Helper()
	cfg := configOf(opts)
	runGroups(t, newStore, []group{
		{"Flows", []testCase{
			{name: "CreateGetUpdateDelete", fn: testFlowLifecycle},
			{name: "ListPages", fn: testListFlows},
			{name: "Labels", fn: testFlowLabels},
		}},
		{"Executions", []testCase{
			{name: "CompareAndSet", fn: testExecutionCAS},
			{name: "Listings", fn: testExecutionListings},
			{name: "ConcurrentAdvances", fn: testExecutionRace, skip: cfg.skipConcurrency},
		}},
		{"StepTasks", []testCase{
			{name: "EnsureTaskOnce", fn: testEnsureTask},
			{name: "RetireTasks", fn: testRetireTasks},
		}},
	})
}

func (b *bundle) flows() store.Flows {
	return b.s
}

func sampleFlow(id string) *task.Flow {
	return &task.Flow{ID: id, Description: "nightly load", Start: "extract", MaxDepth: 5, Steps: []*task.Step{
		{ID: "extract", Targets: []string{"hook", "ls"}, Params: map[string]string{"day": "{{params.day}}"},
			Result: task.ResultAny, Timeout: 30,
			On: map[task.Outcome][]string{task.OutcomeSuccess: {"load"}, task.OutcomeFailure: {"alert"}}},
		{ID: "load", Targets: []string{"hook"}},
		{ID: "alert", Targets: []string{"mail-ops"}},
	}}
}

func testFlowLifecycle(b *bundle) {
	fs := b.flows()
	f := sampleFlow("nightly")
	if err := fs.CreateFlow(b.ctx, f); err != nil {
		b.t.Fatalf("CreateFlow: %v", err)
	}
	if f.Version != 1 || f.CreatedAt.IsZero() {
		b.t.Errorf("created flow: version %d, created %v; want 1 and a time", f.Version, f.CreatedAt)
	}
	if err := fs.CreateFlow(b.ctx, sampleFlow("nightly")); !errors.Is(err, task.ErrConflict) {
		b.t.Errorf("CreateFlow of a taken id = %v, want ErrConflict", err)
	}
	got, err := fs.GetFlow(b.ctx, "nightly")
	if err != nil {
		b.t.Fatalf("GetFlow: %v", err)
	}
	if got.Start != "extract" || len(got.Steps) != 3 || got.Steps[0].Result != task.ResultAny ||
		got.Steps[0].On[task.OutcomeFailure][0] != "alert" || got.Steps[0].Params["day"] != "{{params.day}}" || got.MaxDepth != 5 {
		b.t.Errorf("GetFlow = %+v, want the flow stored", got)
	}
	got.Description = "changed"
	if _, err := fs.UpdateFlow(b.ctx, got, 7); !errors.Is(err, task.ErrConflict) {
		b.t.Errorf("UpdateFlow at a stale version = %v, want ErrConflict", err)
	}
	up, err := fs.UpdateFlow(b.ctx, got, 1)
	if err != nil || up.Version != 2 || up.Description != "changed" {
		b.t.Fatalf("UpdateFlow = %+v, %v; want version 2, changed", up, err)
	}
	if _, err := fs.UpdateFlow(b.ctx, sampleFlow("none"), 0); !errors.Is(err, task.ErrNotFound) {
		b.t.Errorf("UpdateFlow of a missing flow = %v, want ErrNotFound", err)
	}
	if err := fs.DeleteFlow(b.ctx, "nightly"); err != nil {
		b.t.Fatalf("DeleteFlow: %v", err)
	}
	if err := fs.DeleteFlow(b.ctx, "nightly"); !errors.Is(err, task.ErrNotFound) {
		b.t.Errorf("DeleteFlow again = %v, want ErrNotFound", err)
	}
	if _, err := fs.GetFlow(b.ctx, "nightly"); !errors.Is(err, task.ErrNotFound) {
		b.t.Errorf("GetFlow after delete = %v, want ErrNotFound", err)
	}
}

func testListFlows(b *bundle) {
	fs := b.flows()
	for _, id := range []string{"c", "a", "b"} {
		if err := fs.CreateFlow(b.ctx, sampleFlow(id)); err != nil {
			b.t.Fatalf("CreateFlow %s: %v", id, err)
		}
	}
	page, err := fs.ListFlows(b.ctx, "", 2)
	if err != nil || len(page) != 2 || page[0].ID != "a" || page[1].ID != "b" {
		b.t.Fatalf("ListFlows first page = %v, %v; want a, b", flowIDs(page), err)
	}
	page, err = fs.ListFlows(b.ctx, "b", 2)
	if err != nil || len(page) != 1 || page[0].ID != "c" {
		b.t.Fatalf("ListFlows after b = %v, %v; want c", flowIDs(page), err)
	}
}

func flowIDs(fs []*task.Flow) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.ID
	}
	return out
}

func sampleExecution(id, flowID string, started time.Time) *task.Execution {
	return &task.Execution{ID: id, FlowID: flowID, Flow: sampleFlow(flowID), State: task.ExecRunning,
		Params: map[string]string{"day": "mon"}, StartedAt: started,
		StepRuns: []*task.StepRun{{Index: 0, Step: "extract", Prev: -1, Slot: started, Deadline: started.Add(time.Minute)}}}
}

func testExecutionCAS(b *bundle) {
	fs := b.flows()
	e := sampleExecution("x1", "nightly", at(0))
	if err := fs.CreateExecution(b.ctx, e); err != nil || e.Version != 1 {
		b.t.Fatalf("CreateExecution = %v, version %d; want nil, 1", err, e.Version)
	}
	if err := fs.CreateExecution(b.ctx, sampleExecution("x1", "nightly", at(0))); !errors.Is(err, task.ErrConflict) {
		b.t.Errorf("CreateExecution of a taken id = %v, want ErrConflict", err)
	}
	stale, err := fs.GetExecution(b.ctx, "x1")
	if err != nil {
		b.t.Fatalf("GetExecution: %v", err)
	}
	if stale.Params["day"] != "mon" || len(stale.StepRuns) != 1 || !stale.StepRuns[0].Slot.Equal(at(0)) || stale.Flow.Start != "extract" {
		b.t.Errorf("GetExecution = %+v, want it as stored", stale)
	}
	e.StepRuns[0].Outcome, e.StepRuns[0].Output = task.OutcomeSuccess, "42"
	e.StepRuns[0].Runs = []task.StepTargetRun{{Target: "hook", TriggerID: "t1", State: task.RunDone}}
	if err := fs.UpdateExecution(b.ctx, e); err != nil || e.Version != 2 {
		b.t.Fatalf("UpdateExecution = %v, version %d; want nil, 2", err, e.Version)
	}
	stale.State = task.ExecInterrupted
	if err := fs.UpdateExecution(b.ctx, stale); !errors.Is(err, task.ErrConflict) {
		b.t.Errorf("UpdateExecution at a stale version = %v, want ErrConflict", err)
	}
	got, err := fs.GetExecution(b.ctx, "x1")
	if err != nil || got.State != task.ExecRunning || got.StepRuns[0].Outcome != task.OutcomeSuccess ||
		got.StepRuns[0].Runs[0].TriggerID != "t1" || got.Version != 2 {
		b.t.Errorf("GetExecution after updates = %+v, %v; want the first update only", got, err)
	}
	if _, err := fs.GetExecution(b.ctx, "none"); !errors.Is(err, task.ErrNotFound) {
		b.t.Errorf("GetExecution of a missing id = %v, want ErrNotFound", err)
	}
	missing := sampleExecution("none", "nightly", at(0))
	missing.Version = 1
	if err := fs.UpdateExecution(b.ctx, missing); !errors.Is(err, task.ErrNotFound) {
		b.t.Errorf("UpdateExecution of a missing id = %v, want ErrNotFound", err)
	}
}

func testExecutionListings(b *bundle) {
	fs := b.flows()
	for i, id := range []string{"x1", "x2", "x3"} {
		if err := fs.CreateExecution(b.ctx, sampleExecution(id, "nightly", at(time.Duration(i)*time.Minute))); err != nil {
			b.t.Fatalf("CreateExecution %s: %v", id, err)
		}
	}
	if err := fs.CreateExecution(b.ctx, sampleExecution("y1", "other", at(time.Hour))); err != nil {
		b.t.Fatalf("CreateExecution y1: %v", err)
	}
	done, err := fs.GetExecution(b.ctx, "x2")
	if err != nil {
		b.t.Fatalf("GetExecution: %v", err)
	}
	done.State = task.ExecSuccess
	if err := fs.UpdateExecution(b.ctx, done); err != nil {
		b.t.Fatalf("UpdateExecution: %v", err)
	}
	list, err := fs.ListExecutions(b.ctx, "nightly", 10)
	if got := execIDs(list); err != nil || fmt.Sprint(got) != "[x3 x2 x1]" {
		b.t.Errorf("ListExecutions = %v, %v; want [x3 x2 x1]", got, err)
	}
	running, err := fs.RunningExecutions(b.ctx, 10)
	if got := execIDs(running); err != nil || fmt.Sprint(got) != "[x1 x3 y1]" {
		b.t.Errorf("RunningExecutions = %v, %v; want [x1 x3 y1]", got, err)
	}
	running, err = fs.RunningExecutions(b.ctx, 1)
	if got := execIDs(running); err != nil || fmt.Sprint(got) != "[x1]" {
		b.t.Errorf("RunningExecutions limit 1 = %v, %v; want [x1]", got, err)
	}
}

func execIDs(es []*task.Execution) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}

// testExecutionRace: N writers update the same version; exactly one wins.
func testExecutionRace(b *bundle) {
	fs := b.flows()
	if err := fs.CreateExecution(b.ctx, sampleExecution("x1", "nightly", at(0))); err != nil {
		b.t.Fatalf("CreateExecution: %v", err)
	}
	const n = 8
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		wins []int
	)
	for i := range n {
		wg.Go(func() {
			e, err := fs.GetExecution(b.ctx, "x1")
			if err != nil {
				b.t.Errorf("GetExecution: %v", err)
				return
			}
			e.Version = 1 // every writer read version 1
			e.Reason = fmt.Sprint(i)
			switch err := fs.UpdateExecution(b.ctx, e); {
			case err == nil:
				mu.Lock()
				wins = append(wins, i)
				mu.Unlock()
			case !errors.Is(err, task.ErrConflict):
				b.t.Errorf("UpdateExecution: %v", err)
			}
		})
	}
	wg.Wait()
	got, err := fs.GetExecution(b.ctx, "x1")
	if err != nil {
		b.t.Fatalf("GetExecution: %v", err)
	}
	if len(wins) != 1 || got.Version != 2 || got.Reason != fmt.Sprint(wins[0]) {
		b.t.Errorf("winners %v, stored version %d reason %q; want exactly one winner, version 2, its reason", wins, got.Version, got.Reason)
	}
}

func testEnsureTask(b *bundle) {
	fs := b.flows()
	mk := func(para string) *task.Task {
		return &task.Task{TaskID: "flow.nightly.1.extract", Scenario: "flows", TaskType: task.ChannelHTTP,
			TaskPara: para, ExecuteType: task.Once, TTL: 30 * time.Second, MaxRetries: 1, Misfire: task.MisfireOnce,
			Targets: []string{"hook", "ls"}, State: task.StateStopped, IsEnable: 1}
	}
	if err := fs.EnsureTask(b.ctx, mk("first")); err != nil {
		b.t.Fatalf("EnsureTask: %v", err)
	}
	if err := fs.EnsureTask(b.ctx, mk("second")); err != nil {
		b.t.Fatalf("EnsureTask again: %v", err)
	}
	got, err := b.s.GetTask(b.ctx, "flow.nightly.1.extract")
	if err != nil {
		b.t.Fatalf("GetTask: %v", err)
	}
	if got.TaskPara != "first" || len(got.Targets) != 2 || got.State != task.StateStopped || got.IsEnable != 1 || got.Job != nil {
		b.t.Errorf("step task = %+v; want the first one, stopped, enabled, two targets", got)
	}
	if err := fs.EnsureTask(b.ctx, &task.Task{}); !errors.Is(err, task.ErrInvalid) {
		b.t.Errorf("EnsureTask without an id = %v, want ErrInvalid", err)
	}
}
