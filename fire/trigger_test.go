package fire_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// manualAt is the instant of the manual triggers; the sub-millisecond part
// is dropped from the slot.
var manualAt = fireAnchor.Add(25*time.Second + 123*time.Millisecond + 456*time.Microsecond)

func TestTrigger(t *testing.T) {
	t.Parallel()

	t.Run("DeliveredAndRecordedAsManual", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		// Claimed by another node: a manual trigger needs no claim.
		b.add(t, newTask("manual"), "node-b")
		if err := b.store.SetTaskStatus(t.Context(), store.TaskStatusParams{TaskID: "manual", NextFire: slot(3)}); err != nil {
			t.Fatalf("SetTaskStatus: %v", err)
		}

		run, err := b.firer.Trigger(t.Context(), "manual", manualAt)
		if err != nil {
			t.Fatalf("Trigger: %v", err)
		}
		at := manualAt.Truncate(time.Millisecond)
		if run.TriggerType != task.TriggerManual || !run.Slot.Equal(at) || run.TaskID != "manual" ||
			run.Target != string(task.ChannelSMS) || run.Attempt != 1 || run.Node != node || run.TriggerID == "" {
			t.Errorf("returned run = %+v, want a manual run of slot %s", run, fmtTime(at))
		}
		r := b.finalRun(t, "manual", at)
		if r.State != task.RunDone || r.TriggerType != task.TriggerManual || r.TriggerID != run.TriggerID {
			t.Errorf("stored run = %+v, want done manual run %s", r, run.TriggerID)
		}
		shutdown(t, b.firer)
		calls := b.exec.seen()
		if len(calls) != 1 || calls[0].d.TriggerID != run.TriggerID || calls[0].d.Body != "water the plants" {
			t.Fatalf("executor calls = %+v, want one delivery of %s", calls, run.TriggerID)
		}
		// The row shows the manual fire; the next scheduled fire stays.
		checkStatus(t, b, "manual", at, slot(3), task.RunDone, 0)
	})

	t.Run("ManualRunDoesNotFinishOnceTask", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		tk := newTask("once")
		tk.ExecuteType = task.Once
		b.add(t, tk, node)
		run, err := b.firer.Trigger(t.Context(), "once", manualAt)
		if err != nil {
			t.Fatalf("Trigger: %v", err)
		}
		if r := b.finalRun(t, "once", run.Slot); r.State != task.RunDone {
			t.Fatalf("manual run = %+v, want done", r)
		}
		shutdown(t, b.firer)
		if got := b.task(t, "once"); got.IsDone != 0 {
			t.Errorf("once task is_done = %d after a manual run, want 0: its scheduled slot is still to come", got.IsDone)
		}
	})

	t.Run("StoppedTaskFires", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.add(t, newTask("stopped"), node)
		stopped := newTask("stopped")
		stopped.State = task.StateStopped
		if got := b.edit(t, stopped); got.State != task.StateStopped {
			t.Fatalf("task state = %s, want stopped", got.State)
		}
		run, err := b.firer.Trigger(t.Context(), "stopped", manualAt)
		if err != nil {
			t.Fatalf("Trigger of a stopped task: %v", err)
		}
		if r := b.finalRun(t, "stopped", run.Slot); r.State != task.RunDone || r.TriggerType != task.TriggerManual {
			t.Errorf("run = %+v, want a done manual run", r)
		}
	})

	t.Run("Refused", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		ctx := t.Context()
		tests := []struct {
			name    string
			prepare func(t *testing.T, id string)
			want    error
		}{
			{"Missing", func(t *testing.T, id string) {}, task.ErrNotFound},
			{"Disabled", func(t *testing.T, id string) {
				b.add(t, newTask(id), node)
				off := newTask(id)
				off.IsEnable = 0
				if got := b.edit(t, off); got.IsEnable != 0 {
					t.Fatalf("task is_enable = %d, want 0", got.IsEnable)
				}
			}, task.ErrConflict},
			{"Done", func(t *testing.T, id string) {
				b.add(t, newTask(id), node)
				if err := b.store.SetTaskStatus(ctx, store.TaskStatusParams{TaskID: id, Done: true}); err != nil {
					t.Fatalf("SetTaskStatus: %v", err)
				}
			}, task.ErrConflict},
			{"Closed", func(t *testing.T, id string) {
				b.add(t, newTask(id), node)
				closed := newTask(id)
				closed.State = task.StateClosed
				if got := b.edit(t, closed); got.State != task.StateClosed {
					t.Fatalf("task state = %s, want closed", got.State)
				}
			}, task.ErrConflict},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				id := "refused-" + tc.name
				tc.prepare(t, id)
				run, err := b.firer.Trigger(ctx, id, manualAt)
				if !errors.Is(err, tc.want) || run != nil {
					t.Errorf("Trigger = %+v, %v; want an error wrapping %v", run, err, tc.want)
				}
				if runs := b.runs(t, id); len(runs) != 0 {
					t.Errorf("ledger = %+v, want no run", runs)
				}
			})
		}
		shutdown(t, b.firer)
		if n := len(b.exec.seen()); n != 0 {
			t.Errorf("executor ran %d times, want 0", n)
		}
	})

	t.Run("SameInstantFiresOnce", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.add(t, newTask("twice"), node)
		other := b.newFirer(t) // another process, say another node's API

		first, err := b.firer.Trigger(t.Context(), "twice", manualAt)
		if err != nil {
			t.Fatalf("first Trigger: %v", err)
		}
		// The same millisecond, through this firer and through another one.
		for i, f := range []interface {
			Trigger(context.Context, string, time.Time) (*task.Run, error)
		}{b.firer, other} {
			run, err := f.Trigger(t.Context(), "twice", manualAt.Add(time.Microsecond))
			if !errors.Is(err, task.ErrConflict) || run != nil {
				t.Errorf("Trigger %d at the same instant = %+v, %v; want task.ErrConflict", i+2, run, err)
			}
		}
		shutdown(t, b.firer)
		shutdown(t, other)
		if calls := b.exec.seen(); len(calls) != 1 || calls[0].d.TriggerID != first.TriggerID {
			t.Errorf("executor calls = %+v, want one delivery of %s", calls, first.TriggerID)
		}
		if runs := b.runs(t, "twice"); len(runs) != 1 || runs[0].State != task.RunDone {
			t.Errorf("ledger = %+v, want one done run", runs)
		}
	})
}
