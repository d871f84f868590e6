package mongo_test

import (
	"fmt"
	"testing"
	"time"

	"cronsheet/store"
	"cronsheet/store/mongo"
	"cronsheet/task"
)

// The store/sqlite benchmarks again, on the mongo driver (run them with
// CRONSHEET_TEST_MONGO_URI set; in CI that is FerretDB over PostgreSQL,
// whose numbers say little about MongoDB):
//
//	go test -run='^$' -bench=. -benchtime=1s ./store/mongo/

func benchTask(id, rowID string) *task.Task {
	return &task.Task{
		TaskID: id, Scenario: "memos", RowID: rowID, TaskType: task.ChannelEmail,
		TaskPara: "water the plants", Params: map[string]string{task.ParamTo: "a@example.com"},
		ExecuteType: task.Periodic, CronPara: "every 5m", TTL: time.Minute, MaxRetries: 3,
		Misfire: task.MisfireOnce, State: task.StateRunning, IsEnable: 1,
	}
}

// openBench opens a store on a database of its own with n tasks and rows.
func openBench(b *testing.B, n int) *mongo.Store {
	b.Helper()
	s := openTemp(b, testURI(b))
	ctx := b.Context()
	for i := range n {
		id := fmt.Sprintf("t-%06d", i)
		if err := s.InsertRow(ctx, &task.Row{Scenario: "memos", ID: id, IsActive: 1}); err != nil {
			b.Fatal(err)
		}
		err := s.ApplySync(ctx, store.ApplySyncParams{Scenario: "memos", RowID: id, RowVersion: 1,
			Task: benchTask(id, id), IsActive: 1, Now: time.Now()})
		if err != nil {
			b.Fatal(err)
		}
	}
	return s
}

func BenchmarkGetTask(b *testing.B) {
	s := openBench(b, 100)
	for b.Loop() {
		if _, err := s.GetTask(b.Context(), "t-000042"); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRecordFire(b *testing.B) {
	s := openBench(b, 100)
	slot := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	i := 0
	for b.Loop() {
		i++
		r := &task.Run{TriggerID: fmt.Sprintf("tr-%d", i), TaskID: "t-000042",
			Slot: slot.Add(time.Duration(i) * time.Second), Target: "email",
			TriggerType: task.TriggerSchedule, State: task.RunRunning, Attempt: 1, FiredAt: time.Now()}
		ok, err := s.RecordFire(b.Context(), r, store.TaskStatusParams{TaskID: "t-000042",
			NextFire: r.Slot.Add(time.Second), SetNextFire: true, LastFire: r.Slot, LastStatus: string(task.RunRunning)})
		if err != nil || !ok {
			b.Fatalf("RecordFire = %v, %v", ok, err)
		}
	}
}

func BenchmarkRecordFires(b *testing.B) {
	const n = 500
	s := openBench(b, n)
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
		res, err := s.RecordFires(b.Context(), recs)
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

func BenchmarkFinishRun(b *testing.B) {
	s := openBench(b, 100)
	slot := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := &task.Run{TriggerID: "tr-0", TaskID: "t-000042", Slot: slot, Target: "email",
		TriggerType: task.TriggerSchedule, State: task.RunRunning, Attempt: 1, FiredAt: slot}
	if _, err := s.InsertRun(b.Context(), r); err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		i++
		r.State, r.Attempt, r.FinishedAt, r.Output = task.RunDone, i, time.Now(), "250 OK"
		if err := s.FinishRun(b.Context(), r, store.TaskStatusParams{TaskID: "t-000042", LastStatus: string(task.RunDone)}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSetTaskStatuses(b *testing.B) {
	const n = 500
	s := openBench(b, n)
	ps := make([]store.TaskStatusParams, n)
	for b.Loop() {
		next := time.Now().Add(time.Hour)
		for i := range ps {
			ps[i] = store.TaskStatusParams{TaskID: fmt.Sprintf("t-%06d", i), NextFire: next, SetNextFire: true}
		}
		if err := s.SetTaskStatuses(b.Context(), ps); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds(), "tasks/s")
}

// BenchmarkClaim claims batches of 10 out of 200 due tasks (50 of 2,000 in
// the SQLite benchmark: on FerretDB v1 each findOneAndUpdate reads every due
// task from PostgreSQL and sorts them in memory, so a batch of 50 out of 500
// already exceeds the 10 s call timeout).
func BenchmarkClaim(b *testing.B) {
	const tasks, batch = 200, 10
	s := openBench(b, tasks)
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

func BenchmarkInsertRun(b *testing.B) {
	slot := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b.Run("New", func(b *testing.B) {
		s := openBench(b, 0)
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
		s := openBench(b, 0)
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

func BenchmarkApplySync(b *testing.B) {
	for _, mode := range []string{"Update", "Reschedule"} {
		b.Run(mode, func(b *testing.B) {
			s := openBench(b, 100)
			i := 0
			for b.Loop() {
				i++
				tk := benchTask("t-000042", "t-000042")
				tk.TaskPara = fmt.Sprintf("text %d", i)
				if mode == "Reschedule" {
					tk.CronPara = fmt.Sprintf("every %dm", i%2+1)
				}
				err := s.ApplySync(b.Context(), store.ApplySyncParams{Scenario: "memos", RowID: "t-000042", RowVersion: 1,
					Task: tk, IsActive: 1, Now: time.Now()})
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
