package storetest

import (
	"errors"
	"fmt"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// fireLedgerCases check Ledger.RecordFire and Ledger.FinishRun.
func fireLedgerCases() []testCase {
	return []testCase{
		{name: "RecordFire", fn: testRecordFire},
		{name: "RecordFires", fn: testRecordFires},
		{name: "RecordFireDuplicateKeepsStatus", fn: testRecordFireDuplicate},
		{name: "RecordFireMissingTaskStoresNothing", fn: testRecordFireMissingTask},
		{name: "FinishRunMirrorsRow", fn: testFinishRun},
		{name: "FinishRunMissingStoresNothing", fn: testFinishRunMissing},
		{name: "FinishRunRetriedCompletesStatus", fn: testFinishRunRetried},
		{name: "LastStatusFollowsNewestSlot", fn: testStatusNewestSlot},
		{name: "RecordFiresMany", fn: testRecordFiresMany},
		{name: "FinishRunsBatch", fn: testFinishRunsBatch},
		{name: "WriteRuns", fn: testWriteRuns},
	}
}

// fireStatus is what a task and its row say about the last fire.
type fireStatus struct {
	next, last time.Time
	status     string
	done       int
}

// checkStatus compares the status of task id and of its row rowID with
// want; the task's version must still be version.
func (b *bundle) checkStatus(stage, id, rowID string, version int64, want fireStatus) {
	b.t.Helper()
	tk := b.getTask(id)
	got := fireStatus{tk.NextFire, tk.LastFire, tk.LastStatus, tk.IsDone}
	if !got.next.Equal(want.next) || !got.last.Equal(want.last) || got.status != want.status || got.done != want.done {
		b.t.Errorf("%s: task %s next=%v last=%v status=%q done=%d, want %v %v %q %d", stage, id,
			got.next, got.last, got.status, got.done, want.next, want.last, want.status, want.done)
	}
	if tk.Version != version {
		b.t.Errorf("%s: task %s version %d, want %d (feedback is not an edit)", stage, id, tk.Version, version)
	}
	r := b.getRow(scenario, rowID)
	if !r.NextFire.Equal(want.next) || !r.LastFire.Equal(want.last) || r.LastStatus != want.status {
		b.t.Errorf("%s: row %s next=%v last=%v status=%q, want %v %v %q", stage, rowID,
			r.NextFire, r.LastFire, r.LastStatus, want.next, want.last, want.status)
	}
}

// recordFire calls RecordFire and fails the test on an error.
func (b *bundle) recordFire(r *task.Run, st store.TaskStatusParams) bool {
	b.t.Helper()
	ok, err := b.s.RecordFire(b.ctx, r, st)
	b.noErr("RecordFire "+r.TriggerID, err)
	return ok
}

// firedStatus is the status a fire of slot records, the next one at next.
func firedStatus(id string, slot, next time.Time) store.TaskStatusParams {
	return store.TaskStatusParams{TaskID: id, NextFire: next, SetNextFire: true, LastFire: slot,
		LastStatus: string(task.RunRunning)}
}

func testRecordFires(b *bundle) {
	tk := b.addTask(newTask("t1", "r1"))
	b.addTask(newTask("t2", "r2"))
	quiet := b.addTask(newTask("t3", "r3"))
	s1, s2, next := at(time.Hour), at(2*time.Hour), at(25*time.Hour)
	if !b.recordFire(newRun("tr-0", "t2", s1, "email"), firedStatus("t2", s1, next)) {
		b.t.Fatal("RecordFire of a new slot = false")
	}
	recs := []store.FireRecord{
		{Run: newRun("tr-1", "t1", s1, "email"), Status: firedStatus("t1", s1, next)},
		{Run: newRun("tr-2", "t2", s1, "email"), Status: firedStatus("t2", s1, next)},     // duplicate slot
		{Run: newRun("tr-3", "gone", s1, "email"), Status: firedStatus("gone", s1, next)}, // missing task
		{Run: newRun("", "t1", s2, "email"), Status: firedStatus("t1", s2, next)},         // invalid
		{Run: newRun("tr-5", "t1", s2, "email"), Status: firedStatus("t1", s2, next)},
		// A status that sets nothing (a delayed job's fire: its feedback is
		// written when the run ends) only checks that the task exists.
		{Run: newRun("tr-6", "t3", s1, "email"), Status: store.TaskStatusParams{TaskID: "t3"}},
		{Run: newRun("tr-7", "gone", s2, "email"), Status: store.TaskStatusParams{TaskID: "gone"}},
	}
	recs[4].Run.Params = map[string]string{"x": "y"}
	recs[4].Run.Deadline = at(3 * time.Hour)
	res, err := b.s.RecordFires(b.ctx, recs)
	b.noErr("RecordFires", err)
	if len(res) != len(recs) {
		b.t.Fatalf("RecordFires gave %d results for %d records", len(res), len(recs))
	}
	if !res[0].Inserted || res[0].Err != nil || !res[4].Inserted || res[4].Err != nil {
		b.t.Errorf("new slots: %+v %+v, want inserted", res[0], res[4])
	}
	if res[1].Inserted || res[1].Err != nil {
		b.t.Errorf("duplicate slot: %+v, want not inserted and no error", res[1])
	}
	if res[2].Inserted || !errors.Is(res[2].Err, task.ErrNotFound) {
		b.t.Errorf("missing task: %+v, want ErrNotFound", res[2])
	}
	if res[3].Inserted || !errors.Is(res[3].Err, task.ErrInvalid) {
		b.t.Errorf("invalid run: %+v, want ErrInvalid", res[3])
	}
	if !res[5].Inserted || res[5].Err != nil {
		b.t.Errorf("new slot, status setting nothing: %+v, want inserted", res[5])
	}
	if res[6].Inserted || !errors.Is(res[6].Err, task.ErrNotFound) {
		b.t.Errorf("missing task, status setting nothing: %+v, want ErrNotFound", res[6])
	}
	for _, id := range []string{"tr-3", "tr-7"} {
		if _, err := b.s.GetRun(b.ctx, id); !errors.Is(err, task.ErrNotFound) {
			b.t.Errorf("the missing task's run %s was stored: %v", id, err)
		}
	}
	b.checkStatus("a status setting nothing", "t3", "r3", quiet.Version,
		fireStatus{quiet.NextFire, quiet.LastFire, quiet.LastStatus, quiet.IsDone})
	b.checkStatus("batch", "t1", "r1", tk.Version, fireStatus{next, s2, "running", 0})
	b.checkRunExtras("RecordFires", recs[4].Run)
	runs, err := b.s.ListRuns(b.ctx, "t1", time.Time{}, 10)
	b.noErr("ListRuns", err)
	if len(runs) != 2 {
		b.t.Errorf("t1 has %d runs, want 2", len(runs))
	}
	if _, err := b.s.RecordFires(b.ctx, make([]store.FireRecord, store.MaxStatusBatch+1)); !errors.Is(err, task.ErrInvalid) {
		b.t.Errorf("RecordFires over the bound: %v, want ErrInvalid", err)
	}
}

func testRecordFire(b *bundle) {
	tk := b.addTask(newTask("t1", "r1"))
	slot, next := at(time.Hour), at(25*time.Hour)
	r := newRun("tr-1", "t1", slot, "email")
	r.State = task.RunRunning
	r.Params = map[string]string{"who": "ann"}
	if !b.recordFire(r, firedStatus("t1", slot, next)) {
		b.t.Fatalf("RecordFire of a new slot = false, want true")
	}
	b.checkRunExtras("RecordFire", r)
	got, err := b.s.GetRun(b.ctx, "tr-1")
	b.noErr("GetRun", err)
	if got.TaskID != "t1" || !got.Slot.Equal(slot) || got.Target != "email" || got.State != task.RunRunning ||
		got.Attempt != 1 || got.Node != "node-a" || !got.FiredAt.Equal(slot) {
		b.t.Errorf("GetRun = %+v, want %+v", got, r)
	}
	b.checkStatus("fired", "t1", "r1", tk.Version, fireStatus{next, slot, "running", 0})

	// An invalid run is rejected before anything is stored.
	_, err = b.s.RecordFire(b.ctx, newRun("", "t1", at(2*time.Hour), "email"), firedStatus("t1", at(2*time.Hour), next))
	b.wantErr("RecordFire without trigger id", err, task.ErrInvalid)
	b.checkStatus("invalid", "t1", "r1", tk.Version, fireStatus{next, slot, "running", 0})
}

func testRecordFireDuplicate(b *bundle) {
	tk := b.addTask(newTask("t1", "r1"))
	slot, next := at(time.Hour), at(25*time.Hour)
	b.recordFire(newRun("tr-1", "t1", slot, "email"), firedStatus("t1", slot, next))

	// A second fire of the same (task, slot, target), e.g. by another node,
	// must not touch the status: not even Done or a cleared next fire.
	dup := store.TaskStatusParams{TaskID: "t1", SetNextFire: true, LastFire: at(3 * time.Hour),
		LastStatus: "other", Done: true}
	if b.recordFire(newRun("tr-2", "t1", slot, "email"), dup) {
		b.t.Errorf("RecordFire of a fired slot = true, want false")
	}
	b.checkStatus("duplicate", "t1", "r1", tk.Version, fireStatus{next, slot, "running", 0})
	_, err := b.s.GetRun(b.ctx, "tr-2")
	b.wantErr("GetRun of the duplicate", err, task.ErrNotFound)
	// The duplicate of an InsertRun is refused the same way.
	b.insertRun(newRun("tr-3", "t1", at(2*time.Hour), "email"))
	if b.recordFire(newRun("tr-4", "t1", at(2*time.Hour), "email"), dup) {
		b.t.Errorf("RecordFire of a slot InsertRun stored = true, want false")
	}
	b.checkStatus("duplicate of InsertRun", "t1", "r1", tk.Version, fireStatus{next, slot, "running", 0})
}

func testRecordFireMissingTask(b *bundle) {
	slot := at(time.Hour)
	ok, err := b.s.RecordFire(b.ctx, newRun("tr-1", "nope", slot, "email"), firedStatus("nope", slot, at(2*time.Hour)))
	b.wantErr("RecordFire of a missing task", err, task.ErrNotFound)
	if ok {
		b.t.Errorf("RecordFire of a missing task = true, want false")
	}
	_, err = b.s.GetRun(b.ctx, "tr-1")
	b.wantErr("GetRun after a failed RecordFire", err, task.ErrNotFound)
	// The slot is still free.
	if !b.insertRun(newRun("tr-2", "nope", slot, "email")) {
		b.t.Errorf("InsertRun after a failed RecordFire = false, want true (the run was rolled back)")
	}
}

func testFinishRun(b *bundle) {
	tk := b.addTask(newTask("t1", "r1"))
	slot, next := at(time.Hour), at(25*time.Hour)
	r := newRun("tr-1", "t1", slot, "email")
	b.recordFire(r, firedStatus("t1", slot, next))

	r.State, r.Attempt, r.FinishedAt, r.Output = task.RunDone, 2, at(time.Hour+time.Second), "250 OK"
	b.noErr("FinishRun", b.s.FinishRun(b.ctx, r, store.TaskStatusParams{TaskID: "t1", LastStatus: string(task.RunDone)}))
	got, err := b.s.GetRun(b.ctx, "tr-1")
	b.noErr("GetRun", err)
	if got.State != task.RunDone || got.Attempt != 2 || !got.FinishedAt.Equal(r.FinishedAt) || got.Output != "250 OK" {
		b.t.Errorf("after FinishRun: %+v, want %+v", got, r)
	}
	b.checkStatus("finished", "t1", "r1", tk.Version, fireStatus{next, slot, "done", 0})

	// A once task: Done with SetNextFire clears next_fire and sets is_done.
	b.noErr("FinishRun done", b.s.FinishRun(b.ctx, r, store.TaskStatusParams{
		TaskID: "t1", LastStatus: string(task.RunDone), Done: true, SetNextFire: true}))
	b.checkStatus("done", "t1", "r1", tk.Version, fireStatus{time.Time{}, slot, "done", 1})
}

// testFinishRunRetried: a retry of a finish whose run was stored but
// whose task status was not (a driver without transactions interrupted
// between the two, or an error that hid the commit) is not refused: the
// run's write is fenced by its fence alone, which a finish does not move,
// so the retry stores the same run and writes the status.
func testFinishRunRetried(b *bundle) {
	tk := b.addTask(newTask("t1", "r1"))
	slot, next := at(time.Hour), at(25*time.Hour)
	r := newRun("tr-1", "t1", slot, "email")
	b.recordFire(r, firedStatus("t1", slot, next))
	r.State, r.FinishedAt = task.RunDone, at(time.Hour+time.Second)
	half := *r
	b.noErr("UpdateRun (the finish's run write)", b.s.UpdateRun(b.ctx, &half))
	b.checkStatus("run finished, status not written", "t1", "r1", tk.Version, fireStatus{next, slot, "running", 0})
	b.noErr("FinishRun retried", b.s.FinishRun(b.ctx, r, store.TaskStatusParams{TaskID: "t1", LastStatus: string(task.RunDone)}))
	b.checkStatus("after the retry", "t1", "r1", tk.Version, fireStatus{next, slot, "done", 0})
}

// testStatusNewestSlot: a task's last status follows its newest run that
// reported one (store.TaskStatusParams.StatusSlot). An older run's
// outcome applied after a newer run's (an outcome retried after an error
// that hid its commit) leaves the newer status; two outcomes of one task
// in one WriteRuns batch end with the newer slot's, whatever order the
// batch holds or the driver applies them in.
func testStatusNewestSlot(b *bundle) {
	tk := b.addTask(newTask("t1", "r1"))
	slots := []time.Time{at(time.Hour), at(2 * time.Hour), at(3 * time.Hour), at(4 * time.Hour)}
	next := at(25 * time.Hour)
	runs := make([]*task.Run, len(slots))
	for i, slot := range slots {
		runs[i] = newRun(fmt.Sprintf("tr-%d", i+1), "t1", slot, "email")
		b.recordFire(runs[i], firedStatus("t1", slot, next))
	}
	outcome := func(r *task.Run, state task.RunState) store.FireRecord {
		w := *r
		w.State, w.FinishedAt = state, r.Slot.Add(time.Second)
		return store.FireRecord{Run: &w, Status: store.TaskStatusParams{TaskID: "t1", LastStatus: string(state), StatusSlot: r.Slot}}
	}
	finish := func(rec store.FireRecord) {
		b.t.Helper()
		b.noErr("FinishRun "+rec.Run.TriggerID, b.s.FinishRun(b.ctx, rec.Run, rec.Status))
	}
	finish(outcome(runs[1], task.RunDone))
	finish(outcome(runs[0], task.RunDead)) // older, later
	b.checkStatus("older outcome after a newer one", "t1", "r1", tk.Version, fireStatus{next, slots[3], "done", 0})
	finish(outcome(runs[1], task.RunDone)) // the same outcome again
	b.checkStatus("same outcome again", "t1", "r1", tk.Version, fireStatus{next, slots[3], "done", 0})

	rw, ok := b.s.(store.RunWriter)
	if !ok {
		return
	}
	res, err := rw.WriteRuns(b.ctx, store.RunBatch{Outcomes: []store.FireRecord{
		outcome(runs[3], task.RunDead), outcome(runs[2], task.RunDone)}})
	b.noErr("WriteRuns", err)
	for i, err := range res.Finished {
		b.noErr(fmt.Sprintf("WriteRuns outcome %d", i), err)
	}
	b.checkStatus("two outcomes in one batch", "t1", "r1", tk.Version, fireStatus{next, slots[3], "dead", 0})
}

func testFinishRunMissing(b *bundle) {
	tk := b.addTask(newTask("t1", "r1"))
	slot, next := at(time.Hour), at(25*time.Hour)
	b.recordFire(newRun("tr-1", "t1", slot, "email"), firedStatus("t1", slot, next))
	want := fireStatus{next, slot, "running", 0}

	// A missing run: the status is not applied.
	err := b.s.FinishRun(b.ctx, newRun("nope", "t1", slot, "email"), store.TaskStatusParams{
		TaskID: "t1", LastStatus: "done", Done: true})
	b.wantErr("FinishRun of a missing run", err, task.ErrNotFound)
	b.checkStatus("missing run", "t1", "r1", tk.Version, want)

	// A missing task: the run is not updated.
	r := newRun("tr-1", "t1", slot, "email")
	r.State = task.RunDone
	err = b.s.FinishRun(b.ctx, r, store.TaskStatusParams{TaskID: "nope", LastStatus: "done"})
	b.wantErr("FinishRun of a missing task", err, task.ErrNotFound)
	got, err := b.s.GetRun(b.ctx, "tr-1")
	b.noErr("GetRun", err)
	if got.State != task.RunPending {
		b.t.Errorf("run state %q after a failed FinishRun, want %q (rolled back)", got.State, task.RunPending)
	}
}

// testSetTaskStatuses checks Tasks.SetTaskStatuses.
func testSetTaskStatuses(b *bundle) {
	ids := b.addTasks("t", 4)
	versions := map[string]int64{}
	for _, id := range ids {
		versions[id] = b.getTask(id).Version
	}
	b.noErr("SetTaskStatuses none", b.s.SetTaskStatuses(b.ctx, nil))

	var ps []store.TaskStatusParams
	for i, id := range ids {
		ps = append(ps, store.TaskStatusParams{TaskID: id, NextFire: at(time.Duration(i+1) * time.Hour), SetNextFire: true})
	}
	ps[3] = store.TaskStatusParams{TaskID: ids[3], Done: true, SetNextFire: true, LastStatus: "done"}
	b.noErr("SetTaskStatuses", b.s.SetTaskStatuses(b.ctx, ps))
	for i, id := range ids[:3] {
		b.checkStatus("armed", id, "row-"+id, versions[id], fireStatus{next: at(time.Duration(i+1) * time.Hour)})
	}
	b.checkStatus("armed", ids[3], "row-"+ids[3], versions[ids[3]], fireStatus{status: "done", done: 1})

	// One missing task: none of the batch is applied.
	bad := []store.TaskStatusParams{
		{TaskID: ids[0], NextFire: at(9 * time.Hour)},
		{TaskID: "nope", NextFire: at(9 * time.Hour)},
	}
	b.wantErr("SetTaskStatuses with a missing task", b.s.SetTaskStatuses(b.ctx, bad), task.ErrNotFound)
	b.checkStatus("rolled back", ids[0], "row-"+ids[0], versions[ids[0]], fireStatus{next: at(time.Hour)})

	// Too many at once.
	big := make([]store.TaskStatusParams, store.MaxStatusBatch+1)
	for i := range big {
		big[i] = store.TaskStatusParams{TaskID: fmt.Sprintf("t-%d", i)}
	}
	b.wantErr("SetTaskStatuses over the bound", b.s.SetTaskStatuses(b.ctx, big), task.ErrInvalid)
}
