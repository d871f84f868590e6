package sqlite_test

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// TestJobDumpRestore: a job goes through DumpTasks and RestoreTask exactly
// (DueAt to the millisecond), and a restored job holding a key holds it
// again, unless another job took it.
func TestJobDumpRestore(t *testing.T) {
	ctx := t.Context()
	src, dst := openTemp(t), openTemp(t)
	t.Cleanup(func() { src.Close(); dst.Close() })
	j1, j2 := migratedJob("j1", "k1"), migratedJob("j2", "k2")
	j1.Job.CC, j1.Job.CCLimit, j1.Job.Body = "cc", 2, "a=1"
	for _, j := range []*task.Task{j1, j2} {
		if err := src.CreateJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	// k2 is taken in the destination by another job.
	if err := dst.CreateJob(ctx, migratedJob("other", "k2")); err != nil {
		t.Fatal(err)
	}
	err := src.DumpTasks(ctx, func(d store.TaskDump) error {
		ok, err := dst.RestoreTask(ctx, d)
		if err != nil || !ok {
			t.Errorf("RestoreTask %s = %v, %v", d.Task.TaskID, ok, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got, err := dst.GetTask(ctx, "j1")
	if err != nil || got.Job == nil || !reflect.DeepEqual(*got.Job, *j1.Job) || got.Version != 1 {
		t.Errorf("restored j1 = %+v (job %+v), %v; want job %+v", got, got.Job, err, j1.Job)
	}
	if got, err := dst.JobByKey(ctx, "k1"); err != nil || got.TaskID != "j1" {
		t.Errorf("JobByKey(k1) after restore = %v, %v; want j1", got, err)
	}
	if got, err := dst.JobByKey(ctx, "k2"); err != nil || got.TaskID != "other" {
		t.Errorf("JobByKey(k2) after restore = %v, %v; want other, which held it", got, err)
	}
}

// TestJobInvalid: what CreateJob, ReplaceJob and AddJobEvents refuse
// before touching the store.
func TestJobInvalid(t *testing.T) {
	ctx := t.Context()
	s := openTemp(t)
	t.Cleanup(func() { s.Close() })
	for name, mod := range map[string]func(*task.Task){
		"no job":        func(j *task.Task) { j.Job = nil },
		"no id":         func(j *task.Task) { j.TaskID = "" },
		"row scenario":  func(j *task.Task) { j.Scenario = "memos" },
		"with a row id": func(j *task.Task) { j.RowID = "r1" },
	} {
		j := migratedJob("j1", "k1")
		mod(j)
		if err := s.CreateJob(ctx, j); !errors.Is(err, task.ErrInvalid) {
			t.Errorf("CreateJob %s = %v, want task.ErrInvalid", name, err)
		}
	}
	if err := s.CreateJob(ctx, nil); !errors.Is(err, task.ErrInvalid) {
		t.Errorf("CreateJob(nil) = %v, want task.ErrInvalid", err)
	}
	if err := s.CreateJob(ctx, migratedJob("j0", "k")); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"", "other"} {
		if err := s.ReplaceJob(ctx, key, "j0", migratedJob("j1", "k")); !errors.Is(err, task.ErrInvalid) {
			t.Errorf("ReplaceJob(%q) by a job holding k = %v, want task.ErrInvalid", key, err)
		}
	}
	evs := []store.JobEvent{{JobID: "j0", At: time.UnixMilli(1), State: task.JobPending}, {State: task.JobDone}}
	if err := s.AddJobEvents(ctx, evs); !errors.Is(err, task.ErrInvalid) {
		t.Errorf("AddJobEvents with an event without job = %v, want task.ErrInvalid", err)
	}
	if got, err := s.JobEvents(ctx, "j0", 10); err != nil || len(got) != 0 {
		t.Errorf("JobEvents after a refused batch = %+v, %v; want none", got, err)
	}
}

// TestCreateJobs: a batch stores every job that CreateJob would store, in
// one transaction, and reports the others (a taken id, a held key, a
// repeated key inside the batch) without leaving any half-written.
func TestCreateJobs(t *testing.T) {
	ctx := t.Context()
	st := openTemp(t)
	t.Cleanup(func() { st.Close() })
	if err := st.CreateJob(ctx, migratedJob("old", "held")); err != nil {
		t.Fatal(err)
	}
	batch := []*task.Task{
		migratedJob("a", ""), migratedJob("old", ""), migratedJob("b", "held"),
		migratedJob("c", "k"), migratedJob("d", "k"), {TaskID: "e"},
	}
	errs, err := st.CreateJobs(ctx, batch, nil)
	if err != nil {
		t.Fatalf("CreateJobs: %v", err)
	}
	want := []error{nil, task.ErrConflict, task.ErrConflict, nil, task.ErrConflict, task.ErrInvalid}
	for i, w := range want {
		if w == nil && errs[i] != nil || w != nil && !errors.Is(errs[i], w) {
			t.Errorf("job %d: %v, want %v", i, errs[i], w)
		}
	}
	for _, id := range []string{"a", "c"} {
		if got, err := st.GetTask(ctx, id); err != nil || got.Version != 1 || got.Job == nil {
			t.Errorf("stored job %s = %+v, %v", id, got, err)
		}
	}
	for _, id := range []string{"b", "d", "e"} {
		if _, err := st.GetTask(ctx, id); !errors.Is(err, task.ErrNotFound) {
			t.Errorf("refused job %s was stored: %v", id, err)
		}
	}
	if holder, err := st.JobByKey(ctx, "held"); err != nil || holder.TaskID != "old" {
		t.Errorf("key held = %+v, %v; want still old's", holder, err)
	}
	if holder, err := st.JobByKey(ctx, "k"); err != nil || holder.TaskID != "c" {
		t.Errorf("key k = %+v, %v; want c's", holder, err)
	}
}

// TestFinishRuns: a group of finishes commits together; a record whose run
// or task is missing is reported alone and stores nothing, the others are
// stored with their task's status.
func TestFinishRuns(t *testing.T) {
	ctx := t.Context()
	st := openTemp(t)
	t.Cleanup(func() { st.Close() })
	for _, id := range []string{"a", "b", "c"} {
		if err := st.CreateJob(ctx, migratedJob(id, "")); err != nil {
			t.Fatal(err)
		}
	}
	slot := time.Now().Truncate(time.Millisecond)
	runs := map[string]*task.Run{}
	for _, id := range []string{"a", "b", "c"} {
		r := &task.Run{TriggerID: "tr_" + id, TaskID: id, Slot: slot, Target: task.JobTargetID,
			TriggerType: task.TriggerSchedule, State: task.RunRunning, Attempt: 1, FiredAt: slot}
		if _, err := st.InsertRun(ctx, r); err != nil {
			t.Fatal(err)
		}
		runs[id] = r
	}
	done := func(r *task.Run) *task.Run {
		c := *r
		c.State, c.FinishedAt, c.Output = task.RunDone, slot.Add(time.Second), "ok"
		return &c
	}
	ghost := &task.Run{TriggerID: "tr_ghost", TaskID: "a", State: task.RunDone}
	fenced := done(runs["c"])
	fenced.Fence = 7 // taken over meanwhile: its fence is not the stored one
	errs, err := st.FinishRuns(ctx, []store.FireRecord{
		{Run: done(runs["a"]), Status: store.TaskStatusParams{TaskID: "a", LastStatus: "done", Done: true}},
		{Run: ghost, Status: store.TaskStatusParams{TaskID: "a", LastStatus: "ghost"}},
		{Run: done(runs["b"]), Status: store.TaskStatusParams{TaskID: "missing-task", LastStatus: "done"}},
		{Run: fenced, Status: store.TaskStatusParams{TaskID: "c", LastStatus: "done", Done: true}},
	})
	if err != nil {
		t.Fatalf("FinishRuns: %v", err)
	}
	if errs[0] != nil || !errors.Is(errs[1], task.ErrNotFound) || !errors.Is(errs[2], task.ErrNotFound) ||
		!errors.Is(errs[3], task.ErrFenced) {
		t.Fatalf("errs = %v, want nil, not found, not found, fenced", errs)
	}
	if r, _ := st.GetRun(ctx, "tr_c"); r.State != task.RunRunning {
		t.Errorf("run c = %+v, want still running: its write was fenced", r)
	}
	if tk, _ := st.GetTask(ctx, "c"); tk.LastStatus == "done" || tk.IsDone == 1 {
		t.Errorf("task c = %+v, want its status untouched by a fenced outcome", tk)
	}
	if r, _ := st.GetRun(ctx, "tr_a"); r.State != task.RunDone || r.Output != "ok" {
		t.Errorf("run a = %+v, want done", r)
	}
	if tk, _ := st.GetTask(ctx, "a"); tk.LastStatus != "done" || tk.IsDone != 1 {
		t.Errorf("task a = %+v, want done (the ghost's status rolled back)", tk)
	}
	if r, _ := st.GetRun(ctx, "tr_b"); r.State != task.RunRunning {
		t.Errorf("run b = %+v, want still running: its status failed, so nothing of it is stored", r)
	}
}
