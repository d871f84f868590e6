package fire_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"cronsheet/task"
)

// TestOverlap: a slot that comes while the task's previous run is still
// being delivered follows the task's overlap policy.
func TestOverlap(t *testing.T) {
	t.Parallel()

	t.Run("SkipIsTheDefaultForRepeatingSchedules", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		armed := b.add(t, newTask("slow"), node) // every 10s, no overlap given
		g := newGate()
		b.exec.set(func(ctx context.Context, n int, _ task.Delivery) (string, error) { return "", g.wait(ctx, n) })
		b.fire(t, b.firer, armed, slot(1))
		g.awaitStart(t)
		b.fire(t, b.firer, armed, slot(2))
		r := b.run(t, "slow", slot(2))
		if r.State != task.RunSkipped || !strings.Contains(r.Error, "overlap: skip") {
			t.Errorf("slot 2 run = %+v, want skipped with the reason", r)
		}
		close(g.release)
		shutdown(t, b.firer)
		if n := len(b.exec.seen()); n != 1 {
			t.Errorf("executor called %d times, want 1", n)
		}
		if r := b.run(t, "slow", slot(1)); r.State != task.RunDone {
			t.Errorf("slot 1 run = %+v, want done", r)
		}
	})

	t.Run("QueueDeliversOneAtATimeInSlotOrder", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		tk := newTask("queued")
		tk.Overlap = task.OverlapQueue
		armed := b.add(t, tk, node)
		var mu sync.Mutex
		running, most := 0, 0
		var order []time.Time
		g := newGate()
		b.exec.set(func(ctx context.Context, n int, d task.Delivery) (string, error) {
			mu.Lock()
			running++
			most = max(most, running)
			order = append(order, d.Slot)
			mu.Unlock()
			defer func() { mu.Lock(); running--; mu.Unlock() }()
			if n == 1 {
				return "", g.wait(ctx, n)
			}
			return "", nil
		})
		b.fire(t, b.firer, armed, slot(1))
		g.awaitStart(t)
		b.fire(t, b.firer, armed, slot(2))
		// The queue holds one scheduled slot (TestQueueHoldsOnePendingSlot);
		// a missed slot replayed queues behind it, in slot order.
		b.fireMissed(t, b.firer, armed, slot(3))
		for _, k := range []int{2, 3} {
			if r := b.run(t, "queued", slot(k)); r.State != task.RunPending {
				t.Errorf("slot %d run while slot 1 runs = %+v, want pending", k, r)
			}
		}
		close(g.release)
		for _, k := range []int{1, 2, 3} {
			if r := b.finalRun(t, "queued", slot(k)); r.State != task.RunDone {
				t.Errorf("slot %d run = %+v, want done", k, r)
			}
		}
		shutdown(t, b.firer)
		mu.Lock()
		defer mu.Unlock()
		if most != 1 {
			t.Errorf("%d deliveries ran at once, want 1", most)
		}
		if len(order) != 3 || !order[0].Equal(slot(1)) || !order[1].Equal(slot(2)) || !order[2].Equal(slot(3)) {
			t.Errorf("delivery order = %v, want slots 1, 2, 3", order)
		}
	})

	t.Run("AllowOverlaps", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		tk := newTask("parallel")
		tk.Overlap = task.OverlapAllow
		armed := b.add(t, tk, node)
		g := newGate()
		b.exec.set(func(ctx context.Context, n int, _ task.Delivery) (string, error) { return "", g.wait(ctx, n) })
		b.fire(t, b.firer, armed, slot(1))
		g.awaitStart(t)
		b.fire(t, b.firer, armed, slot(2))
		g.awaitStart(t) // the second delivery starts while the first waits
		close(g.release)
		shutdown(t, b.firer)
		for _, k := range []int{1, 2} {
			if r := b.run(t, "parallel", slot(k)); r.State != task.RunDone {
				t.Errorf("slot %d run = %+v, want done", k, r)
			}
		}
	})
}

// TestPastEndIsDone: the run of a periodic task's last slot before its
// end makes the task done when it finishes.
func TestPastEndIsDone(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tk := newTask("ending")
	tk.EndTime = slot(2).Add(5 * time.Second)
	armed := b.add(t, tk, node)
	b.fire(t, b.firer, armed, slot(1))
	b.finalRun(t, "ending", slot(1))
	if got := b.task(t, "ending"); got.IsDone != 0 {
		t.Fatalf("done after slot 1, before its end: %+v", got)
	}
	b.fire(t, b.firer, armed, slot(2))
	b.finalRun(t, "ending", slot(2))
	shutdown(t, b.firer)
	if got := b.task(t, "ending"); got.IsDone != 1 {
		t.Errorf("task after its last slot = is_done %d, want 1", got.IsDone)
	}
}

// TestQueueHoldsOnePendingSlot: under overlap
// queue, one slot waits behind the run in progress; the slots that come
// while one waits are recorded skipped with the reason (counted in the
// ledger), not queued without bound.
func TestQueueHoldsOnePendingSlot(t *testing.T) {
	t.Parallel()
	fb := setupFaults(t, 0, 0)
	hold := make(chan struct{})
	fb.rc.hold = hold
	tk := hookTask("slowq")
	tk.Overlap = task.OverlapQueue
	armed := fb.add(t, tk, node)
	fb.fire(t, fb.firer, armed, slot(1))
	fb.rc.awaitCall(t)
	for k := 2; k <= 5; k++ {
		fb.fire(t, fb.firer, armed, slot(k))
	}
	if r := fb.run(t, "slowq", slot(2)); r.State != task.RunPending {
		t.Errorf("slot 2 run while slot 1 is delivered = %s, want pending", r.State)
	}
	for k := 3; k <= 5; k++ {
		if r := fb.run(t, "slowq", slot(k)); r.State != task.RunSkipped || !strings.Contains(r.Error, "overlap: queue") {
			t.Errorf("slot %d run while slot 2 waits = %s (%q), want skipped with the reason", k, r.State, r.Error)
		}
	}
	close(hold)
	for k := 1; k <= 2; k++ {
		if r := fb.finalRun(t, "slowq", slot(k)); r.State != task.RunDone {
			t.Errorf("slot %d run = %s, want done", k, r.State)
		}
	}
	shutdown(t, fb.firer)
	for k := 1; k <= 2; k++ {
		if r := fb.run(t, "slowq", slot(k)); fb.rc.received(r.TriggerID) != 1 {
			t.Errorf("slot %d delivered %d times, want 1", k, fb.rc.received(r.TriggerID))
		}
	}
	if n := fb.rc.total(); n != 2 {
		t.Errorf("receiver got %d calls, want 2 (slots 1 and 2)", n)
	}
}
