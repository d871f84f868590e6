package fire_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"cronsheet/fire"
	"cronsheet/store"
	"cronsheet/task"
)

// triggerOne triggers a task without targets by hand and returns its one
// run, failing the test otherwise.
func triggerOne(t *testing.T, f *fire.Firer, id string, at time.Time) *task.Run {
	t.Helper()
	runs, err := f.Trigger(t.Context(), fire.TriggerParams{TaskID: id, At: at})
	if err != nil || len(runs) != 1 {
		t.Fatalf("Trigger(%s) = %+v, %v; want one run", id, runs, err)
	}
	return runs[0]
}

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

		run := triggerOne(t, b.firer, "manual", manualAt)
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
		run := triggerOne(t, b.firer, "once", manualAt)
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
		b.setState(t, "stopped", task.StateStopped)
		run := triggerOne(t, b.firer, "stopped", manualAt)
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
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				id := "refused-" + tc.name
				tc.prepare(t, id)
				runs, err := b.firer.Trigger(ctx, fire.TriggerParams{TaskID: id, At: manualAt})
				if !errors.Is(err, tc.want) || runs != nil {
					t.Errorf("Trigger = %+v, %v; want an error wrapping %v", runs, err, tc.want)
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

	t.Run("ClosedIsRecordedRejected", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.add(t, newTask("closed"), node)
		b.setState(t, "closed", task.StateClosed)
		run := triggerOne(t, b.firer, "closed", manualAt)
		if run.State != task.RunRejected || !strings.Contains(run.Error, "closed") || run.FinishedAt.IsZero() {
			t.Errorf("run = %+v, want rejected because the task is closed", run)
		}
		shutdown(t, b.firer)
		if n := len(b.exec.seen()); n != 0 {
			t.Errorf("executor ran %d times for a closed task, want 0", n)
		}
		if r := b.run(t, "closed", run.Slot); r == nil || r.State != task.RunRejected || r.TriggerID != run.TriggerID {
			t.Errorf("ledger run = %+v, want the rejected record", r)
		}
	})

	t.Run("ScheduledTypeRefused", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.add(t, newTask("sched"), node)
		_, err := b.firer.Trigger(t.Context(), fire.TriggerParams{TaskID: "sched", At: manualAt, Type: task.TriggerSchedule})
		if !errors.Is(err, task.ErrInvalid) {
			t.Errorf("Trigger with type schedule = %v, want task.ErrInvalid", err)
		}
		big := map[string]string{}
		for i := range task.MaxParams + 1 {
			big[fmt.Sprint("k", i)] = "v"
		}
		_, err = b.firer.Trigger(t.Context(), fire.TriggerParams{TaskID: "sched", At: manualAt, Params: big})
		if !errors.Is(err, task.ErrInvalid) {
			t.Errorf("Trigger with %d params = %v, want task.ErrInvalid", len(big), err)
		}
	})

	t.Run("SameInstantFiresOnce", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.add(t, newTask("twice"), node)
		other := b.newFirer(t) // another process, say another node's API

		first := triggerOne(t, b.firer, "twice", manualAt)
		// The same millisecond, through this firer and through another one.
		for i, f := range []*fire.Firer{b.firer, other} {
			runs, err := f.Trigger(t.Context(), fire.TriggerParams{TaskID: "twice", At: manualAt.Add(time.Microsecond)})
			if !errors.Is(err, task.ErrConflict) || runs != nil {
				t.Errorf("Trigger %d at the same instant = %+v, %v; want task.ErrConflict", i+2, runs, err)
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
