package builtin_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"cronsheet/builtin"
	"cronsheet/store"
	"cronsheet/store/sqlite"
	"cronsheet/task"
)

var anchor = time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)

func open(t *testing.T) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// addTask stores an enabled task through a row, as the sync patrol does.
func addTask(t *testing.T, st *sqlite.Store, id string) {
	t.Helper()
	ctx := t.Context()
	row := &task.Row{Scenario: "memos", ID: id, Fields: map[string]any{"x": 1}, IsActive: 1}
	if err := st.InsertRow(ctx, row); err != nil {
		t.Fatalf("InsertRow: %v", err)
	}
	tk := &task.Task{TaskID: id, Scenario: "memos", TaskType: task.ChannelOutbox, ExecuteType: task.Periodic,
		CronPara: "every 10s", TZ: "UTC", TTL: time.Second, Misfire: task.MisfireOnce, State: task.StateRunning,
		IsEnable: 1, Anchor: anchor}
	if err := st.ApplySync(ctx, store.ApplySyncParams{Scenario: "memos", RowID: id, RowVersion: row.Version, Task: tk, IsActive: 1}); err != nil {
		t.Fatalf("ApplySync: %v", err)
	}
}

// triggers records the tasks a trigger_task delivery triggers.
type triggers struct {
	mu    sync.Mutex
	calls map[string]map[string]string
}

func (tr *triggers) trigger(_ context.Context, id string, params map[string]string) error {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if id == "missing" {
		return task.ErrNotFound
	}
	if tr.calls == nil {
		tr.calls = map[string]map[string]string{}
	}
	tr.calls[id] = params
	return nil
}

func delivery(b *task.BuiltinTarget) task.Delivery {
	return task.Delivery{TaskID: "ctl", TriggerID: "tr_x", Slot: anchor, Attempt: 1, TriggerType: task.TriggerSchedule,
		Target: &task.Target{ID: "ctl", Kind: task.ChannelBuiltin, State: task.TargetRunning, Builtin: b}}
}

func TestPauseAndResume(t *testing.T) {
	t.Parallel()
	st := open(t)
	addTask(t, st, "a")
	addTask(t, st, "b")
	woke := 0
	e := builtin.New(builtin.Deps{Store: st, Trigger: (&triggers{}).trigger, Wake: func() { woke++ }, Now: func() time.Time { return anchor }})
	out, err := e.Execute(t.Context(), delivery(&task.BuiltinTarget{Action: task.BuiltinPauseTask, Tasks: []string{"a", "b"}}))
	if err != nil || !strings.Contains(out, "a, b") {
		t.Fatalf("pause = %q, %v", out, err)
	}
	for _, id := range []string{"a", "b"} {
		if tk, _ := st.GetTask(t.Context(), id); tk.State != task.StateStopped {
			t.Errorf("task %s state = %s after pause_task, want stopped", id, tk.State)
		}
	}
	_, err = e.Execute(t.Context(), delivery(&task.BuiltinTarget{Action: task.BuiltinResumeTask, Tasks: []string{"a", "missing"}}))
	if !task.IsPermanent(err) || !errors.Is(err, task.ErrNotFound) {
		t.Errorf("resume with a missing task = %v, want a permanent not-found error", err)
	}
	if tk, _ := st.GetTask(t.Context(), "a"); tk.State != task.StateRunning {
		t.Errorf("task a state = %s after resume_task, want running (the missing one must not stop the others)", tk.State)
	}
	if woke != 2 {
		t.Errorf("patrols woken %d times, want once per action that changed a task (2)", woke)
	}
}

func TestTriggerTask(t *testing.T) {
	t.Parallel()
	tr := &triggers{}
	e := builtin.New(builtin.Deps{Store: open(t), Trigger: tr.trigger})
	out, err := e.Execute(t.Context(), delivery(&task.BuiltinTarget{Action: task.BuiltinTriggerTask, Tasks: []string{"x", "y"}}))
	if err != nil || out != "triggered: x, y" {
		t.Fatalf("trigger_task = %q, %v", out, err)
	}
	if tr.calls["x"][builtin.FlowDepthParam] != "1" || tr.calls["y"] == nil {
		t.Errorf("triggered = %v, want x and y at flow depth 1", tr.calls)
	}
	// A chain of flows stops at MaxFlowDepth.
	d := delivery(&task.BuiltinTarget{Action: task.BuiltinTriggerTask, Tasks: []string{"z"}})
	d.TriggerType = task.TriggerFlow
	d.Params = map[string]string{builtin.FlowDepthParam: "8"}
	if _, err := e.Execute(t.Context(), d); !task.IsPermanent(err) || !strings.Contains(err.Error(), "loop") {
		t.Errorf("trigger_task at depth 8 = %v, want a permanent refusal", err)
	}
	if tr.calls["z"] != nil {
		t.Error("z was triggered past the depth bound")
	}
}

func TestCleanupRuns(t *testing.T) {
	t.Parallel()
	st := open(t)
	ctx := t.Context()
	addTask(t, st, "c")
	now := anchor.Add(48 * time.Hour)
	// Five finished runs a day apart, the newest 1h old, and one unfinished old run.
	for i := range 5 {
		slot := now.Add(-time.Hour - time.Duration(i)*24*time.Hour)
		r := &task.Run{TriggerID: "tr_done" + string(rune('a'+i)), TaskID: "c", Slot: slot, Target: "outbox",
			TriggerType: task.TriggerSchedule, State: task.RunDone, Attempt: 1, FiredAt: slot, FinishedAt: slot}
		if _, err := st.InsertRun(ctx, r); err != nil {
			t.Fatalf("InsertRun: %v", err)
		}
	}
	old := now.Add(-30 * 24 * time.Hour)
	if _, err := st.InsertRun(ctx, &task.Run{TriggerID: "tr_open", TaskID: "c", Slot: old, Target: "outbox",
		TriggerType: task.TriggerSchedule, State: task.RunFailed, Attempt: 1, FiredAt: old}); err != nil {
		t.Fatalf("InsertRun: %v", err)
	}
	e := builtin.New(builtin.Deps{Store: st, Trigger: (&triggers{}).trigger, Now: func() time.Time { return now }})
	// Keep at most 3 per task and nothing older than 2 days: runs 1h, 25h
	// old stay (49h and older go by age, the 4th and 5th by count too).
	out, err := e.Execute(ctx, delivery(&task.BuiltinTarget{Action: task.BuiltinCleanupRuns, KeepAge: 48 * 3600, KeepCount: 3}))
	if err != nil || out != "deleted 3 runs" {
		t.Fatalf("cleanup_runs = %q, %v; want 3 deleted", out, err)
	}
	runs, err := st.ListRuns(ctx, "c", time.Time{}, 100)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range runs {
		ids = append(ids, r.TriggerID)
	}
	if strings.Join(ids, ",") != "tr_donea,tr_doneb,tr_open" {
		t.Errorf("runs left = %v, want the two newest done runs and the unfinished one", ids)
	}
}
