package storetest

import (
	"errors"
	"fmt"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// testRecordFiresMany records a burst larger than a driver's statement
// chunks in one call: every new slot is stored once, a second record of a
// slot already in the same call is a duplicate (the ledger gate holds
// inside one call as across calls), and records whose task is missing,
// spread among the others, store nothing.
func testRecordFiresMany(b *bundle) {
	b.addTask(newTask("t1", "r1"))
	b.addTask(newTask("t2", "r2"))
	const n = 230
	var recs []store.FireRecord
	for i := range n {
		slot := at(time.Duration(i+1) * time.Minute)
		id := "t1"
		if i%2 == 1 {
			id = "t2"
		}
		recs = append(recs, store.FireRecord{Run: newRun(fmt.Sprintf("many-%03d", i), id, slot, ""),
			Status: store.TaskStatusParams{TaskID: id}})
	}
	// The slot of record 5 again, far from it (beyond a chunk of 100),
	// and records of a missing task between the others.
	again := *recs[5].Run
	again.TriggerID = "many-again"
	recs = append(recs[:150], append([]store.FireRecord{{Run: &again, Status: store.TaskStatusParams{TaskID: again.TaskID}}}, recs[150:]...)...)
	for _, pos := range []int{0, 120, 200} {
		gone := store.FireRecord{Run: newRun(fmt.Sprintf("gone-%d", pos), "gone", recs[pos].Run.Slot, ""),
			Status: store.TaskStatusParams{TaskID: "gone"}}
		recs = append(recs[:pos], append([]store.FireRecord{gone}, recs[pos:]...)...)
	}
	res, err := b.s.RecordFires(b.ctx, recs)
	b.noErr("RecordFires", err)
	if len(res) != len(recs) {
		b.t.Fatalf("RecordFires gave %d results for %d records", len(res), len(recs))
	}
	inserted := 0
	for i, r := range res {
		id, tid := recs[i].Run.TriggerID, recs[i].Status.TaskID
		switch {
		case tid == "gone":
			if r.Inserted || !errors.Is(r.Err, task.ErrNotFound) {
				b.t.Errorf("%s (missing task): %+v, want ErrNotFound", id, r)
			}
		case id == "many-again":
			if r.Inserted || r.Err != nil {
				b.t.Errorf("%s (a slot recorded earlier in the call): %+v, want a duplicate", id, r)
			}
		case !r.Inserted || r.Err != nil:
			b.t.Errorf("%s: %+v, want inserted", id, r)
		default:
			inserted++
		}
	}
	if inserted != n {
		b.t.Errorf("%d records inserted, want %d", inserted, n)
	}
	stored := 0
	for _, id := range []string{"t1", "t2", "gone"} {
		runs, err := b.s.ListRuns(b.ctx, id, time.Time{}, n)
		b.noErr("ListRuns "+id, err)
		stored += len(runs)
	}
	if stored != n {
		b.t.Errorf("%d runs stored, want %d", stored, n)
	}
	if _, err := b.s.GetRun(b.ctx, "many-again"); !errors.Is(err, task.ErrNotFound) {
		b.t.Errorf("the duplicate's run was stored: %v", err)
	}
	// The same call again: every slot is fired by these very records (a
	// retry after a lost answer), so each is inserted (ours) and nothing
	// is stored twice.
	res, err = b.s.RecordFires(b.ctx, recs)
	b.noErr("RecordFires again", err)
	for i, r := range res {
		own := recs[i].Status.TaskID != "gone" && recs[i].Run.TriggerID != "many-again"
		if own && (!r.Inserted || r.Err != nil) {
			b.t.Errorf("retry of %s: %+v, want inserted (its own run)", recs[i].Run.TriggerID, r)
		}
		if !own && r.Inserted {
			b.t.Errorf("retry of %s: %+v, want not inserted", recs[i].Run.TriggerID, r)
		}
	}
}

// testFinishRunsBatch finishes a batch mixing every outcome
// (store.RunFinisher): finished runs commit with their task's status, a
// missing task or run and a fenced run store nothing and are reported, and
// a fired_at that differs from the stored one is written.
func testFinishRunsBatch(b *bundle) {
	rf, ok := b.s.(store.RunFinisher)
	if !ok {
		b.t.Skip("the driver finishes runs one at a time")
	}
	tk := b.addTask(newTask("t1", "r1"))
	b.addTask(newTask("t2", "r2"))
	s1, s2, next := at(time.Hour), at(2*time.Hour), at(25*time.Hour)
	for _, r := range []*task.Run{newRun("fin-1", "t1", s1, ""), newRun("fin-2", "t2", s1, ""), newRun("fin-3", "t1", s2, "")} {
		b.recordFire(r, firedStatus(r.TaskID, r.Slot, next))
	}
	done := func(id, taskID string, slot time.Time) *task.Run {
		r := newRun(id, taskID, slot, "")
		r.State, r.FinishedAt, r.Output = task.RunDone, slot.Add(time.Second), "200 OK"
		return r
	}
	moved := done("fin-2", "t2", s1)
	moved.FiredAt = s1.Add(3 * time.Second)
	fenced := done("fin-3", "t1", s2)
	fenced.Fence = 7
	recs := []store.FireRecord{
		{Run: done("fin-1", "t1", s1), Status: store.TaskStatusParams{TaskID: "t1", LastStatus: "done"}},
		{Run: moved, Status: store.TaskStatusParams{TaskID: "t2", LastStatus: "done"}},
		{Run: done("fin-1", "t1", s1), Status: store.TaskStatusParams{TaskID: "gone", LastStatus: "done"}},
		{Run: done("nope", "t1", s1), Status: store.TaskStatusParams{TaskID: "t1", LastStatus: "missing"}},
		{Run: fenced, Status: store.TaskStatusParams{TaskID: "t1", LastStatus: "fenced"}},
	}
	errs, err := rf.FinishRuns(b.ctx, recs)
	b.noErr("FinishRuns", err)
	if len(errs) != len(recs) || errs[0] != nil || errs[1] != nil {
		b.t.Fatalf("FinishRuns = %v, want the first two stored", errs)
	}
	for i, want := range map[int]error{2: task.ErrNotFound, 3: task.ErrNotFound, 4: task.ErrFenced} {
		if !errors.Is(errs[i], want) {
			b.t.Errorf("record %d: %v, want %v", i, errs[i], want)
		}
	}
	for _, want := range []*task.Run{recs[0].Run, moved} {
		got, err := b.s.GetRun(b.ctx, want.TriggerID)
		b.noErr("GetRun", err)
		if got.State != task.RunDone || got.Output != "200 OK" || !got.FinishedAt.Equal(want.FinishedAt) || !got.FiredAt.Equal(want.FiredAt) {
			b.t.Errorf("run %s = %+v, want done at %v, fired at %v", want.TriggerID, got, want.FinishedAt, want.FiredAt)
		}
	}
	if got, err := b.s.GetRun(b.ctx, "fin-3"); err != nil || got.State != task.RunPending {
		b.t.Errorf("the fenced run = %+v, %v; want it unchanged (pending)", got, err)
	}
	b.checkStatus("batch", "t1", "r1", tk.Version, fireStatus{next, s2, "done", 0})
}
