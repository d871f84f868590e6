package fire_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"cronsheet/fire"
	"cronsheet/store"
	"cronsheet/task"
)

// stopWhileRecording is a store whose first fire record is slow (held
// for hold) and during which stop runs: a task switched off or stopped
// while its fire's ledger write was retried or waited on a busy store.
type stopWhileRecording struct {
	fire.Store
	once sync.Once
	stop func()
	hold time.Duration
}

func (s *stopWhileRecording) RecordFires(ctx context.Context, recs []store.FireRecord) ([]store.FireResult, error) {
	res, err := s.Store.RecordFires(ctx, recs)
	s.once.Do(func() {
		s.stop()
		time.Sleep(s.hold)
	})
	return res, err
}

// TestSlowRecordRereadsTask: a fire whose ledger record took
// long (a retried group commit) and whose task was switched off or
// stopped meanwhile is not delivered: its run reads the task again before
// the call and ends cancelled with the reason; the receiver gets nothing,
// though the fire was decided before the stop.
func TestSlowRecordRereadsTask(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		stop func(fb *faultBundle, t *testing.T, id string)
	}{
		{"Stopped", func(fb *faultBundle, t *testing.T, id string) { fb.setState(t, id, task.StateStopped) }},
		{"SwitchedOff", func(fb *faultBundle, t *testing.T, id string) {
			tk := fb.task(t, id)
			tk.IsEnable = 0
			fb.edit(t, tk)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			fb := setupFaults(t, 0, 0)
			id := "slow-record-" + c.name
			st := &stopWhileRecording{Store: fb.faults, stop: func() { c.stop(fb, t, id) }, hold: 300 * time.Millisecond}
			firer := fire.New(slog.New(slog.DiscardHandler), fire.Config{Node: node, BackoffBase: time.Millisecond,
				BackoffMax: 5 * time.Millisecond, OnRun: fb.seen.onRun, OnFire: fb.seen.onFire}, st, fb.execs, nil)
			armed := fb.add(t, hookTask(id), node)
			out, _, err := firer.Fire(t.Context(), fire.Params{Armed: armed, Slot: slot(1), Trigger: task.TriggerSchedule, NextFire: slot(2)})
			if err != nil || out != fire.Fired {
				t.Fatalf("Fire = %v, %v; want Fired (recorded before the stop)", out, err)
			}
			r := fb.finalRun(t, id, slot(1))
			shutdown(t, firer)
			if r.State != task.RunCancelled || fb.rc.total() != 0 {
				t.Errorf("run %s %q, receiver got %d calls; want cancelled and none", r.State, r.Error, fb.rc.total())
			}
		})
	}
}
