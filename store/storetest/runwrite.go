package storetest

import (
	"errors"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// testWriteRuns writes fire records, run updates and outcomes in one
// call (store.RunWriter): the records come first, so an update or an
// outcome of a run recorded by the same call stores it; an outcome of a
// run recorded earlier is stored; an update at a moved fence is refused;
// a record or outcome of a missing task stores nothing; a second record
// of a fired slot is refused as by RecordFires.
func testWriteRuns(b *bundle) {
	rw, ok := b.s.(store.RunWriter)
	if !ok {
		b.t.Fatal("the driver does not write runs together (store.RunWriter)")
	}
	b.addTask(newTask("t1", "r1"))
	b.addTask(newTask("t2", "r2"))
	s0, s1, next := at(time.Hour), at(2*time.Hour), at(25*time.Hour)
	old := newRun("w-old", "t2", s0, "")
	b.recordFire(old, firedStatus("t2", s0, next))
	fired := func(r *task.Run) store.FireRecord {
		return store.FireRecord{Run: r, Status: firedStatus(r.TaskID, r.Slot, next)}
	}
	dup := newRun("w-dup", "t2", s0, "") // old's slot again
	recs := []store.FireRecord{
		fired(newRun("w-1", "t1", s1, "")),
		fired(newRun("w-2", "t2", s1, "")),
		fired(newRun("w-gone", "gone", s1, "")),
		fired(dup),
	}
	done := func(r task.Run, status string) store.FireRecord {
		r.State, r.FinishedAt, r.Output = task.RunDone, r.Slot.Add(time.Second), "200 OK"
		return store.FireRecord{Run: &r, Status: store.TaskStatusParams{TaskID: r.TaskID, LastStatus: status}}
	}
	outcomes := []store.FireRecord{
		done(*recs[0].Run, "done"), // recorded by this call
		done(*old, "done"),         // recorded before
		done(*recs[2].Run, "done"), // of a missing task
	}
	renewed := *recs[1].Run // recorded by this call, re-asserted
	renewed.State, renewed.Deadline = task.RunRunning, s1.Add(time.Minute)
	fenced := *old
	fenced.Fence = 7
	updates := []*task.Run{&renewed, &fenced}
	res, err := rw.WriteRuns(b.ctx, store.RunBatch{Fires: recs, Updates: updates, Outcomes: outcomes})
	b.noErr("WriteRuns", err)
	if len(res.Fires) != len(recs) || len(res.Updated) != len(updates) || len(res.Finished) != len(outcomes) {
		b.t.Fatalf("WriteRuns gave %d, %d and %d results for %d records, %d updates and %d outcomes",
			len(res.Fires), len(res.Updated), len(res.Finished), len(recs), len(updates), len(outcomes))
	}
	if res.Updated[0] != nil || !errors.Is(res.Updated[1], task.ErrFenced) {
		b.t.Errorf("updates = %v, want the first stored, the second task.ErrFenced", res.Updated)
	}
	for i, r := range res.Fires[:2] {
		if !r.Inserted || r.Err != nil {
			b.t.Errorf("record %s: %+v, want inserted", recs[i].Run.TriggerID, r)
		}
	}
	if r := res.Fires[2]; r.Inserted || !errors.Is(r.Err, task.ErrNotFound) {
		b.t.Errorf("record of a missing task: %+v, want ErrNotFound", r)
	}
	if r := res.Fires[3]; r.Inserted || r.Err != nil {
		b.t.Errorf("record of a fired slot: %+v, want a duplicate (not inserted, no error)", r)
	}
	if res.Finished[0] != nil || res.Finished[1] != nil {
		b.t.Errorf("outcomes = %v, want the first two stored", res.Finished)
	}
	if !errors.Is(res.Finished[2], task.ErrNotFound) {
		b.t.Errorf("outcome of a missing task: %v, want ErrNotFound", res.Finished[2])
	}
	for id, want := range map[string]task.RunState{"w-1": task.RunDone, "w-old": task.RunDone, "w-2": task.RunRunning} {
		got, err := b.s.GetRun(b.ctx, id)
		b.noErr("GetRun "+id, err)
		if got.State != want {
			b.t.Errorf("run %s is %s, want %s", id, got.State, want)
		}
	}
	for _, id := range []string{"w-gone", "w-dup"} {
		if _, err := b.s.GetRun(b.ctx, id); !errors.Is(err, task.ErrNotFound) {
			b.t.Errorf("run %s was stored: %v", id, err)
		}
	}
	b.checkWrittenStatuses(s1, next)
}

// checkWrittenStatuses checks the tasks' statuses after testWriteRuns's
// call: each fire's, then the outcomes' over them.
func (b *bundle) checkWrittenStatuses(s1, next time.Time) {
	// t1's status: the fire's, then the outcome's over it.
	if tk := b.getTask("t1"); tk.LastStatus != "done" || !tk.LastFire.Equal(s1) || !tk.NextFire.Equal(next) {
		b.t.Errorf("task t1: last status %q, last fire %v, next %v; want done, %v, %v", tk.LastStatus, tk.LastFire, tk.NextFire, s1, next)
	}
	// t2's: the fire's, then the outcome of its older slot over it
	// (the records are written first).
	if tk := b.getTask("t2"); tk.LastStatus != "done" || !tk.LastFire.Equal(s1) {
		b.t.Errorf("task t2: last status %q, last fire %v; want done, %v", tk.LastStatus, tk.LastFire, s1)
	}
}
