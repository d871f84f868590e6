package storetest

import (
	"errors"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// testTakeOverQueuedRun: a queued run (pending, never attempted) taken
// over keeps its state and attempt count, so its new owner delivers it as
// attempt 1; its old owner's start of its turn (the fenced write to
// running) is refused, the new owner's goes through, and the end of a
// queued run (cancelled, its task stopped) is fenced the same way.
func testTakeOverQueuedRun(b *bundle) {
	b.addTask(newTask("t1", "r1"))
	q := newRun("tr-q", "t1", at(0), "email") // pending, attempt 1, node-a
	q.Fence = 1
	b.insertRun(q)

	taken, err := b.s.TakeOverRun(b.ctx, store.TakeOverParams{TriggerID: "tr-q", Fence: 1, Node: "node-b"})
	b.noErr("TakeOverRun of a queued run", err)
	if taken.State != task.RunPending || taken.Attempt != 1 || taken.Fence != 2 || taken.Node != "node-b" {
		b.t.Fatalf("TakeOverRun of a queued run = %s, want pending at attempt 1, fence 2, node-b", mustJSON(taken))
	}

	old := *q
	old.State, old.Deadline = task.RunRunning, at(time.Minute)
	if err := b.s.UpdateRun(b.ctx, &old); !errors.Is(err, task.ErrFenced) {
		b.t.Errorf("old owner's start of the queued run = %v, want task.ErrFenced", err)
	}
	old.State, old.Deadline, old.FinishedAt, old.Error = task.RunCancelled, time.Time{}, at(time.Second), "the task was stopped"
	if err := b.s.FinishRun(b.ctx, &old, store.TaskStatusParams{TaskID: "t1", LastStatus: "cancelled"}); !errors.Is(err, task.ErrFenced) {
		b.t.Errorf("old owner's end of the queued run = %v, want task.ErrFenced", err)
	}

	start := *taken
	start.State, start.Deadline = task.RunRunning, at(time.Minute)
	b.noErr("new owner's start of the queued run", b.s.UpdateRun(b.ctx, &start))
	got, err := b.s.GetRun(b.ctx, "tr-q")
	b.noErr("GetRun", err)
	if got.State != task.RunRunning || got.Attempt != 1 || got.Fence != 2 || got.Node != "node-b" {
		b.t.Errorf("after the new owner's start: %s, want running at attempt 1, fence 2, node-b", mustJSON(got))
	}
}
