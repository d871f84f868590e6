package patrol_test

import (
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"cronsheet/internal/apitest"
	"cronsheet/patrol"
	"cronsheet/store"
	"cronsheet/task"
)

// Bounds of BenchmarkRetentionBounded.
const (
	benchRunBound = 10_000
	benchJobBound = 5_000
	benchTotal    = 100_000 // runs, and jobs, passing through
	benchChunk    = 5_000   // stored between two passes
)

// BenchmarkRetentionBounded passes 100k finished runs and 100k finished
// jobs through a store whose retention keeps 10,000 runs and 5,000 jobs,
// with a retention pass after every 5,000 of each, and checks after every
// pass that neither kind is above its bound (docs/BENCHMARKS.md,
// "Retention"). Run it once: -bench RetentionBounded -benchtime 1x.
func BenchmarkRetentionBounded(b *testing.B) {
	for b.Loop() {
		st := apitest.OpenStore(b)
		r := patrol.NewRetention(slog.New(slog.NewTextHandler(io.Discard, nil)), patrol.RetentionConfig{Batch: 500,
			Rules: map[store.RetentionKind]patrol.RetentionRule{
				store.RetainRuns: {MaxCount: benchRunBound}, store.RetainJobs: {MaxCount: benchJobBound},
			}}, st)
		var passTime time.Duration
		passes, deleted := 0, map[store.RetentionKind]int{}
		for n := 0; n < benchTotal; n += benchChunk {
			benchFill(b, st, n)
			start := time.Now()
			res, err := r.RunOnce(b.Context())
			if err != nil {
				b.Fatal(err)
			}
			passTime += time.Since(start)
			passes++
			for k, v := range res {
				deleted[k] += v
			}
			for kind, bound := range map[store.RetentionKind]int{store.RetainRuns: benchRunBound, store.RetainJobs: benchJobBound} {
				over, err := st.RetentionCutoff(b.Context(), kind, bound+1)
				if err != nil {
					b.Fatal(err)
				}
				if !over.IsZero() {
					b.Fatalf("after pass %d: more than %d %s are left", passes, bound, kind)
				}
			}
		}
		b.ReportMetric(float64(passTime.Milliseconds())/float64(passes), "ms/pass")
		b.ReportMetric(float64(deleted[store.RetainRuns]), "runs-deleted")
		b.ReportMetric(float64(deleted[store.RetainJobs]), "jobs-deleted")
	}
}

// benchFill stores benchChunk finished runs (over 100 tasks, one slot
// each) and benchChunk done jobs, numbered from n.
func benchFill(b *testing.B, st store.Product, n int) {
	b.Helper()
	ctx := b.Context()
	now := time.Now().UTC().Truncate(time.Millisecond)
	jobs := make([]*task.Task, benchChunk)
	done := make([]store.TaskStatusParams, benchChunk)
	for i := range benchChunk {
		id := fmt.Sprintf("job%06d", n+i)
		jobs[i] = &task.Task{TaskID: id, Scenario: task.JobScenario, TaskType: task.ChannelHTTP, ExecuteType: task.Once,
			Targets: []string{task.JobTargetID}, State: task.StateRunning, IsEnable: 1,
			Job: &task.Job{Method: task.JobPOST, Name: "https://example.com/" + id, DueAt: now}}
		done[i] = store.TaskStatusParams{TaskID: id, Done: true}
		slot := now.Add(time.Duration(n+i) * time.Millisecond)
		r := &task.Run{TriggerID: fmt.Sprintf("run%06d", n+i), TaskID: fmt.Sprintf("t%02d", i%100), Slot: slot, Target: "hook",
			TriggerType: task.TriggerSchedule, State: task.RunDone, Attempt: 1, FiredAt: slot, FinishedAt: slot}
		if _, err := st.InsertRun(ctx, r); err != nil {
			b.Fatal(err)
		}
	}
	errs, err := st.CreateJobs(ctx, jobs, nil)
	if err == nil {
		err = st.SetTaskStatuses(ctx, done)
	}
	for _, e := range errs {
		if e != nil {
			b.Fatal(e)
		}
	}
	if err != nil {
		b.Fatal(err)
	}
}
