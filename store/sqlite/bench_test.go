package sqlite_test

import (
	"fmt"
	"testing"
	"time"

	"cronsheet/store"
	"cronsheet/store/sqlite"
	"cronsheet/task"
)

// benchTask returns a small enabled task of row rowID.
func benchTask(id, rowID string) *task.Task {
	return &task.Task{
		TaskID: id, Scenario: "memos", RowID: rowID, TaskType: task.ChannelEmail,
		TaskPara: "water the plants", Params: map[string]string{task.ParamTo: "a@example.com"},
		ExecuteType: task.Periodic, CronPara: "every 5m", TTL: time.Minute, MaxRetries: 3,
		Misfire: task.MisfireOnce, State: task.StateRunning, IsEnable: 1,
	}
}

// addBenchTasks creates n enabled tasks, each with its row.
func addBenchTasks(tb testing.TB, s *sqlite.Store, n int) {
	tb.Helper()
	ctx := tb.Context()
	for i := range n {
		id := fmt.Sprintf("t-%06d", i)
		if err := s.InsertRow(ctx, &task.Row{Scenario: "memos", ID: id, IsActive: 1}); err != nil {
			tb.Fatal(err)
		}
		err := s.ApplySync(ctx, store.ApplySyncParams{Scenario: "memos", RowID: id, RowVersion: 1,
			Task: benchTask(id, id), IsActive: 1, Now: time.Now()})
		if err != nil {
			tb.Fatal(err)
		}
	}
}

// BenchmarkClaim claims batches of 50 out of 2,000 due tasks; when all are
// claimed they are released with the timer stopped.
func BenchmarkClaim(b *testing.B) {
	const tasks, batch = 2000, 50
	s := openTemp(b)
	defer s.Close()
	addBenchTasks(b, s, tasks)
	ctx := b.Context()
	claimed := 0
	for b.Loop() {
		got, err := s.ClaimTasks(ctx, store.ClaimParams{Owner: "node-a", LeaseUntil: time.Now().Add(time.Minute), Limit: batch})
		if err != nil {
			b.Fatal(err)
		}
		claimed += len(got)
		if len(got) < batch {
			b.StopTimer()
			if _, err := s.ReleaseExpired(ctx, time.Now().Add(time.Hour)); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	}
	b.ReportMetric(float64(claimed)/b.Elapsed().Seconds(), "tasks/s")
}

// BenchmarkInsertRun measures the ledger gate: New inserts a fresh key each
// time, Duplicate hits a key that is already there.
func BenchmarkInsertRun(b *testing.B) {
	slot := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b.Run("New", func(b *testing.B) {
		s := openTemp(b)
		defer s.Close()
		i := 0
		for b.Loop() {
			i++
			r := &task.Run{TriggerID: fmt.Sprintf("tr-%d", i), TaskID: "t1", Slot: slot.Add(time.Duration(i) * time.Second),
				Target: "email", TriggerType: task.TriggerSchedule, State: task.RunRunning, Attempt: 1}
			if ok, err := s.InsertRun(b.Context(), r); err != nil || !ok {
				b.Fatalf("InsertRun = %v, %v", ok, err)
			}
		}
	})
	b.Run("Duplicate", func(b *testing.B) {
		s := openTemp(b)
		defer s.Close()
		r := &task.Run{TriggerID: "tr-0", TaskID: "t1", Slot: slot, Target: "email",
			TriggerType: task.TriggerSchedule, State: task.RunRunning, Attempt: 1}
		if _, err := s.InsertRun(b.Context(), r); err != nil {
			b.Fatal(err)
		}
		i := 0
		for b.Loop() {
			i++
			r.TriggerID = fmt.Sprintf("tr-%d", i)
			if ok, err := s.InsertRun(b.Context(), r); err != nil || ok {
				b.Fatalf("InsertRun duplicate = %v, %v", ok, err)
			}
		}
	})
}

// BenchmarkApplySync measures the sync patrol's write: Update re-syncs one
// row with a changed text (the claim is kept), Reschedule with a changed
// schedule (the claim is reset).
func BenchmarkApplySync(b *testing.B) {
	for _, mode := range []string{"Update", "Reschedule"} {
		b.Run(mode, func(b *testing.B) {
			s := openTemp(b)
			defer s.Close()
			addBenchTasks(b, s, 100)
			ctx := b.Context()
			i := 0
			for b.Loop() {
				i++
				tk := benchTask("t-000042", "t-000042")
				tk.TaskPara = fmt.Sprintf("text %d", i)
				if mode == "Reschedule" {
					tk.CronPara = fmt.Sprintf("every %dm", i%2+1)
				}
				err := s.ApplySync(ctx, store.ApplySyncParams{Scenario: "memos", RowID: "t-000042", RowVersion: 1,
					Task: tk, IsActive: 1, Now: time.Now()})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkCreateJobs stores new jobs 500 per call (a batch submission's
// group), one after another on a growing table.
func BenchmarkCreateJobs(b *testing.B) {
	s := openTemp(b)
	defer s.Close()
	due := time.Now().Add(time.Hour)
	k := 0
	for b.Loop() {
		ts := make([]*task.Task, 500)
		for i := range ts {
			k++
			ts[i] = &task.Task{TaskID: fmt.Sprintf("job_%012d", k), Scenario: task.JobScenario, TaskType: task.ChannelHTTP,
				ExecuteType: task.Once, State: task.StateRunning, IsEnable: 1,
				Job: &task.Job{Method: task.JobGET, Name: "https://example.com/", DueAt: due}}
		}
		errs, err := s.CreateJobs(b.Context(), ts, nil)
		if err != nil {
			b.Fatal(err)
		}
		if errs[0] != nil || errs[len(errs)-1] != nil {
			b.Fatalf("CreateJobs: first job %v, last %v", errs[0], errs[len(errs)-1])
		}
	}
	b.ReportMetric(float64(500*b.N)/b.Elapsed().Seconds(), "jobs/s")
}
