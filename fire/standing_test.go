package fire_test

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"cronsheet/fire"
	"cronsheet/task"
)

// TestStandingAfterSlotWait: the Gate checks the node's
// standing before a delivery waits for a delivery slot (MaxDeliveries);
// a process that lost its node id during that wait makes no call once the
// slot is free: Config.Standing is asked after the wait. The run stays
// unfinished, for the id's new process.
func TestStandingAfterSlotWait(t *testing.T) {
	t.Parallel()
	fb := setupFaults(t, 0, 0)
	hold := make(chan struct{})
	fb.rc.hold = hold
	var lost atomic.Bool
	gated := make(chan string, 4)
	f := fire.New(slog.New(slog.DiscardHandler), fire.Config{
		Node: node, BackoffBase: time.Millisecond, BackoffMax: 5 * time.Millisecond, MaxDeliveries: 1,
		Gate: func(ctx context.Context, tk *task.Task, _ *task.Target) (func(), error) {
			gated <- tk.TaskID // the server's gate checks standing here: still held
			return func() {}, nil
		},
		Standing: func(context.Context) error {
			if lost.Load() {
				return errors.New("node id lost")
			}
			return nil
		},
	}, fb.store, fb.execs, nil)
	first := fb.add(t, hookTask("first"), node)
	fb.fire(t, f, first, slot(1))
	id := fb.rc.awaitCall(t) // holds the one delivery slot
	second := fb.add(t, hookTask("second"), node)
	fb.fire(t, f, second, slot(1))
	for got := <-gated; got != "second"; got = <-gated {
	}
	// The second delivery passed the gate and waits for the slot: the
	// node id is lost now, then the slot frees.
	lost.Store(true)
	close(hold)
	shutdown(t, f)
	if n, all := fb.rc.received(id), fb.rc.total(); n != 1 || all != 1 {
		t.Errorf("receiver got %d calls in all (%d for the first run), want only the first run's", all, n)
	}
	if r := fb.run(t, "second", slot(1)); r.State != task.RunRunning || r.Node != node {
		t.Errorf("waiting run = %s owned by %s, want running, owned here (for the id's new process)", r.State, r.Node)
	}
}
