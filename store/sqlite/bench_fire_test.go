package sqlite_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"cronsheet/store"
	"cronsheet/store/sqlite"
	"cronsheet/task"
)

// The fire path's benchmarks. Each write benchmark has a OneTx case, the
// method that folds the writes into one transaction, and a Separate case,
// the calls it replaces, one transaction each.

// BenchmarkGetTask reads one task of 100 (the firer re-reads its task at
// every fire).
func BenchmarkGetTask(b *testing.B) {
	s := openTemp(b)
	defer s.Close()
	addBenchTasks(b, s, 100)
	ctx := b.Context()
	for b.Loop() {
		if _, err := s.GetTask(ctx, "t-000042"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRecordFire records a fire of a new slot: the ledger gate plus
// the task's and row's status.
func BenchmarkRecordFire(b *testing.B) {
	separate := func(s *sqlite.Store) func(context.Context, *task.Run, store.TaskStatusParams) (bool, error) {
		return func(ctx context.Context, r *task.Run, st store.TaskStatusParams) (bool, error) {
			ok, err := s.InsertRun(ctx, r)
			if err != nil || !ok {
				return ok, err
			}
			return true, s.SetTaskStatus(ctx, st)
		}
	}
	for _, mode := range []string{"OneTx", "Separate"} {
		b.Run(mode, func(b *testing.B) {
			s := openTemp(b)
			defer s.Close()
			addBenchTasks(b, s, 100)
			record := s.RecordFire
			if mode == "Separate" {
				record = separate(s)
			}
			ctx := b.Context()
			slot := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			i := 0
			for b.Loop() {
				i++
				r := &task.Run{TriggerID: fmt.Sprintf("tr-%d", i), TaskID: "t-000042",
					Slot: slot.Add(time.Duration(i) * time.Second), Target: "email",
					TriggerType: task.TriggerSchedule, State: task.RunRunning, Attempt: 1, FiredAt: time.Now()}
				ok, err := record(ctx, r, store.TaskStatusParams{TaskID: "t-000042", NextFire: r.Slot.Add(time.Second),
					SetNextFire: true, LastFire: r.Slot, LastStatus: string(task.RunRunning)})
				if err != nil || !ok {
					b.Fatalf("record fire = %v, %v", ok, err)
				}
			}
		})
	}
}

// BenchmarkFinishRun stores a run's outcome plus the task's and row's
// status.
func BenchmarkFinishRun(b *testing.B) {
	for _, mode := range []string{"OneTx", "Separate"} {
		b.Run(mode, func(b *testing.B) {
			s := openTemp(b)
			defer s.Close()
			addBenchTasks(b, s, 100)
			finish := s.FinishRun
			if mode == "Separate" {
				finish = func(ctx context.Context, r *task.Run, st store.TaskStatusParams) error {
					if err := s.UpdateRun(ctx, r); err != nil {
						return err
					}
					return s.SetTaskStatus(ctx, st)
				}
			}
			ctx := b.Context()
			slot := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			r := &task.Run{TriggerID: "tr-0", TaskID: "t-000042", Slot: slot, Target: "email",
				TriggerType: task.TriggerSchedule, State: task.RunRunning, Attempt: 1, FiredAt: slot}
			if _, err := s.InsertRun(ctx, r); err != nil {
				b.Fatal(err)
			}
			i := 0
			for b.Loop() {
				i++
				r.State, r.Attempt, r.FinishedAt, r.Output = task.RunDone, i, time.Now(), "250 OK"
				if err := finish(ctx, r, store.TaskStatusParams{TaskID: "t-000042", LastStatus: string(task.RunDone)}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSetTaskStatuses arms a batch of 500 tasks (their next fire).
func BenchmarkSetTaskStatuses(b *testing.B) {
	const n = 500
	for _, mode := range []string{"OneTx", "Separate"} {
		b.Run(mode, func(b *testing.B) {
			s := openTemp(b)
			defer s.Close()
			addBenchTasks(b, s, n)
			ctx := b.Context()
			ps := make([]store.TaskStatusParams, n)
			for b.Loop() {
				next := time.Now().Add(time.Hour)
				for i := range ps {
					ps[i] = store.TaskStatusParams{TaskID: fmt.Sprintf("t-%06d", i), NextFire: next, SetNextFire: true}
				}
				if mode == "OneTx" {
					if err := s.SetTaskStatuses(ctx, ps); err != nil {
						b.Fatal(err)
					}
					continue
				}
				for _, p := range ps {
					if err := s.SetTaskStatus(ctx, p); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "tasks/s")
		})
	}
}

// BenchmarkRecordFires records 500 fires of 500 tasks in one group commit,
// as a burst of fires due in the same second does.
func BenchmarkRecordFires(b *testing.B) {
	const n = 500
	s := openTemp(b)
	defer s.Close()
	addBenchTasks(b, s, n)
	ctx := b.Context()
	slot := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	round := 0
	for b.Loop() {
		round++
		recs := make([]store.FireRecord, n)
		for i := range recs {
			id := fmt.Sprintf("t-%06d", i)
			r := &task.Run{TriggerID: fmt.Sprintf("tr-%d-%d", round, i), TaskID: id,
				Slot: slot.Add(time.Duration(round) * time.Second), Target: "email",
				TriggerType: task.TriggerSchedule, State: task.RunRunning, Attempt: 1, FiredAt: time.Now()}
			recs[i] = store.FireRecord{Run: r, Status: store.TaskStatusParams{TaskID: id, LastFire: r.Slot,
				LastStatus: string(task.RunRunning)}}
		}
		res, err := s.RecordFires(ctx, recs)
		if err != nil {
			b.Fatal(err)
		}
		for _, r := range res {
			if !r.Inserted || r.Err != nil {
				b.Fatalf("record = %+v", r)
			}
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "fires/s")
}

// BenchmarkFinishRuns finishes 500 runs of 500 tasks in one group commit,
// as a burst of deliveries ending together does. Recording the fires the
// runs come from is not timed.
func BenchmarkFinishRuns(b *testing.B) {
	const n = 500
	s := openTemp(b)
	defer s.Close()
	addBenchTasks(b, s, n)
	ctx := b.Context()
	slot := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	round := 0
	for b.Loop() {
		b.StopTimer()
		round++
		recs := make([]store.FireRecord, n)
		for i := range recs {
			id := fmt.Sprintf("t-%06d", i)
			r := &task.Run{TriggerID: fmt.Sprintf("tr-%d-%d", round, i), TaskID: id,
				Slot: slot.Add(time.Duration(round) * time.Second), Target: "email",
				TriggerType: task.TriggerSchedule, State: task.RunRunning, Attempt: 1, FiredAt: time.Now(), Fence: 1}
			recs[i] = store.FireRecord{Run: r, Status: store.TaskStatusParams{TaskID: id, LastFire: r.Slot,
				LastStatus: string(task.RunRunning)}}
		}
		if _, err := s.RecordFires(ctx, recs); err != nil {
			b.Fatal(err)
		}
		for i := range recs {
			recs[i].Run.State, recs[i].Run.FinishedAt, recs[i].Run.Output = task.RunDone, time.Now(), "HTTP 200: ok"
			recs[i].Status = store.TaskStatusParams{TaskID: recs[i].Run.TaskID, LastStatus: string(task.RunDone)}
		}
		b.StartTimer()
		errs, err := s.FinishRuns(ctx, recs)
		if err != nil {
			b.Fatal(err)
		}
		for _, err := range errs {
			if err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "runs/s")
}

// BenchmarkTaskHeads reads the heads of 10,000 tasks in one call, as a
// bucket of jobs due at one instant does before its fires start.
func BenchmarkTaskHeads(b *testing.B) {
	const n = 10000
	s := openTemp(b)
	defer s.Close()
	addBenchTasks(b, s, n)
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("t-%06d", i)
	}
	ctx := b.Context()
	for b.Loop() {
		heads, err := s.TaskHeads(ctx, ids)
		if err != nil || len(heads) != n {
			b.Fatalf("TaskHeads: %d heads, %v", len(heads), err)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "heads/s")
}
