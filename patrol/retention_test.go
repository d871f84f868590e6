package patrol_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"cronsheet/internal/apitest"
	"cronsheet/patrol"
	"cronsheet/store"
	"cronsheet/task"
)

// fill stores, relative to now: 10 tasks × 30 finished runs and one
// running run each; 50 outbox messages and 50 audit records a minute
// apart; 20 finished flow executions and one running (the oldest); 20
// done jobs, then 2 pending ones.
func fill(t *testing.T, st store.Product, now time.Time) {
	t.Helper()
	ctx := t.Context()
	ago := func(i int) time.Time { return now.Add(-time.Duration(i)*time.Minute - 30*time.Second) }
	for k := range 10 {
		id := fmt.Sprintf("t%d", k)
		for i := range 31 {
			r := &task.Run{TriggerID: fmt.Sprintf("%s-%02d", id, i), TaskID: id, Slot: ago(40 - i), Target: "hook",
				TriggerType: task.TriggerSchedule, State: task.RunDone, Attempt: 1, FiredAt: ago(40 - i), FinishedAt: ago(30 - i)}
			if i == 30 {
				r.State, r.FinishedAt = task.RunRunning, time.Time{}
			}
			must(t, "InsertRun", ignoreBool(st.InsertRun(ctx, r)))
		}
	}
	for i := range 50 {
		must(t, "AddOutbox", st.AddOutbox(ctx, &task.OutboxMessage{TaskID: "t0", TriggerID: fmt.Sprintf("o%d", i),
			Channel: task.ChannelEmail, To: "a@example.com", CreatedAt: ago(i)}))
		must(t, "AddAudit", st.AddAudit(ctx, &store.AuditRecord{Scenario: "memos", RowID: "r1", Action: store.AuditUpdate, At: ago(i)}))
	}
	for i := range 21 {
		e := &task.Execution{ID: fmt.Sprintf("x%02d", i), FlowID: "f", Flow: &task.Flow{ID: "f"}, State: task.ExecSuccess, StartedAt: ago(i)}
		if i == 20 {
			e.State = task.ExecRunning
		}
		must(t, "CreateExecution", st.CreateExecution(ctx, e))
	}
	for i := range 22 {
		id := fmt.Sprintf("job%02d", i)
		must(t, "CreateJob", st.CreateJob(ctx, &task.Task{TaskID: id, Scenario: task.JobScenario, TaskType: task.ChannelHTTP,
			ExecuteType: task.Once, Targets: []string{task.JobTargetID}, State: task.StateRunning, IsEnable: 1,
			Job: &task.Job{Method: task.JobPOST, Name: "https://example.com/" + id, DueAt: now}}))
		if i < 20 {
			must(t, "SetTaskStatus", st.SetTaskStatus(ctx, store.TaskStatusParams{TaskID: id, Done: true}))
		}
	}
}

func ignoreBool(_ bool, err error) error { return err }

func must(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// TestRetentionPatrolBoundsEachKind runs two retention patrols at once on
// one store: each kind ends within its bound, what is live stays, and the
// two patrols' counts add up to what went.
func TestRetentionPatrolBoundsEachKind(t *testing.T) {
	st := apitest.OpenStore(t)
	now := time.Now().UTC().Truncate(time.Millisecond)
	fill(t, st, now)
	cfg := patrol.RetentionConfig{Batch: 7, Now: func() time.Time { return now },
		Rules: map[store.RetentionKind]patrol.RetentionRule{
			store.RetainRuns:           {MaxCount: 100},
			store.RetainOutbox:         {MaxAge: 20 * time.Minute},
			store.RetainAudit:          {MaxCount: 10},
			store.RetainFlowExecutions: {MaxCount: 5},
			store.RetainJobs:           {MaxCount: 5},
		}}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	results := make([]patrol.RetentionResult, 2)
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Go(func() {
			var err error
			results[i], err = patrol.NewRetention(logger, cfg, st).RunOnce(t.Context())
			if err != nil {
				t.Errorf("patrol %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	want := map[store.RetentionKind]int{store.RetainRuns: 200, store.RetainOutbox: 30, store.RetainAudit: 40,
		store.RetainFlowExecutions: 15, store.RetainJobs: 17}
	for kind, n := range want {
		if got := results[0][kind] + results[1][kind]; got != n {
			t.Errorf("%s: the two patrols deleted %d + %d, want %d in all", kind, results[0][kind], results[1][kind], n)
		}
	}
	ctx := t.Context()
	runs := countRuns(ctx, t, st)
	if runs[task.RunDone] != 100 || runs[task.RunRunning] != 10 {
		t.Errorf("runs left: %v, want 100 done (the bound) and the 10 running", runs)
	}
	if ms, err := st.ListOutbox(ctx, 0, 1000); err != nil || len(ms) != 20 {
		t.Errorf("outbox left: %d (%v), want the 20 younger than 20m", len(ms), err)
	}
	if rs, err := st.QueryAudit(ctx, store.AuditQuery{Limit: store.MaxAuditPage}); err != nil || len(rs) != 10 {
		t.Errorf("audit left: %d (%v), want 10", len(rs), err)
	}
	xs, err := st.ListExecutions(ctx, "f", 100)
	if err != nil || len(xs) != 6 {
		t.Errorf("executions left: %d (%v), want the newest 5 and the running one", len(xs), err)
	}
	if _, err := st.GetExecution(ctx, "x20"); err != nil {
		t.Errorf("the running execution: %v, want it kept", err)
	}
	for _, id := range []string{"job20", "job21"} {
		if _, err := st.GetTask(ctx, id); err != nil {
			t.Errorf("pending %s: %v, want it kept", id, err)
		}
	}
	if js, err := st.ListJobs(ctx, store.ListJobsParams{Limit: 100}); err != nil || len(js) != 5 {
		t.Errorf("jobs left: %d (%v), want 5", len(js), err)
	}
}

// countRuns counts every run by state.
func countRuns(ctx context.Context, t *testing.T, st store.Product) map[task.RunState]int {
	t.Helper()
	out := map[task.RunState]int{}
	q := store.RunQuery{Limit: 500}
	for {
		rs, err := st.QueryRuns(ctx, q)
		must(t, "QueryRuns", err)
		for _, r := range rs {
			out[r.State]++
		}
		if len(rs) < q.Limit {
			return out
		}
		last := rs[len(rs)-1]
		q.Before = store.RunCursor{FiredAt: last.FiredAt, TriggerID: last.TriggerID}
	}
}
