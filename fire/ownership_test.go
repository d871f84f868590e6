package fire_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"cronsheet/fire"
	"cronsheet/store"
	"cronsheet/task"
)

// firerOf returns a Firer of node over the bundle's store and executors
// that sees exactly the nodes live returns as alive.
func (b *testBundle) firerOf(t *testing.T, node string, live func() []string, grace time.Duration) *fire.Firer {
	t.Helper()
	return b.peerFirer(t, node, func() fire.Peers { return fire.Peers{Live: live()} }, grace, nil)
}

// peerFirer is firerOf with the registry's whole view (live and quiet
// nodes) and a clock (nil: the wall clock).
func (b *testBundle) peerFirer(t *testing.T, node string, peers func() fire.Peers, grace time.Duration, now func() time.Time) *fire.Firer {
	t.Helper()
	f := fire.New(slog.New(slog.DiscardHandler), fire.Config{
		Node: node, BackoffBase: time.Millisecond, BackoffMax: 5 * time.Millisecond, RescueGrace: grace,
		Peers: func(context.Context) (fire.Peers, error) { return peers(), nil },
	}, b.store, b.execs, now)
	t.Cleanup(func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_ = f.Shutdown(ctx)
	})
	return f
}

// TestTakeOver: a node that is taken for dead while it is still
// delivering (its heartbeat late) loses the run: the rescuer's delivery
// is the one recorded, the old deliverer's outcome is refused by the
// fence and it makes no further attempt. Both deliveries carry the same
// trigger id.
func TestTakeOver(t *testing.T) {
	t.Parallel()
	for _, oldOutcome := range []string{"succeeds", "fails"} {
		t.Run("OldDelivery"+oldOutcome, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			armed := b.add(t, newTask("taken"), node)
			g := newGate()
			b.exec.set(func(ctx context.Context, n int, _ task.Delivery) (string, error) {
				if n > 1 {
					return "rescued", nil // the rescuer's attempt
				}
				if err := g.wait(ctx, n); err != nil {
					return "", err
				}
				if oldOutcome == "fails" {
					return "", errors.New("503 from the old owner's attempt")
				}
				return "old", nil
			})
			b.fire(t, b.firer, armed, slot(1))
			g.awaitStart(t)

			// node-b sees node-a gone and rescues the run.
			rescuer := b.firerOf(t, "node-b", func() []string { return []string{"node-b"} }, time.Hour)
			if n, err := rescuer.Rescue(t.Context(), 100); err != nil || n != 1 {
				t.Fatalf("Rescue = %d, %v; want 1", n, err)
			}
			r := b.finalRun(t, "taken", slot(1))
			if r.State != task.RunDone || r.Node != "node-b" || r.Fence != 2 || r.Output != "rescued" || r.Attempt != 2 {
				t.Fatalf("run after the rescue = %+v, want done by node-b at fence 2, attempt 2", r)
			}
			// The old owner's attempt ends now; its outcome must not land.
			close(g.release)
			shutdown(t, b.firer)
			shutdown(t, rescuer)
			got := b.run(t, "taken", slot(1))
			if got.State != task.RunDone || got.Node != "node-b" || got.Output != "rescued" || got.Error != "" {
				t.Errorf("run after the old owner's attempt = %+v, want node-b's outcome kept", got)
			}
			calls := b.exec.seen()
			if len(calls) != 2 {
				t.Fatalf("executor called %d times, want 2 (the old attempt and the rescue, no retry)", len(calls))
			}
			if calls[0].d.TriggerID != calls[1].d.TriggerID {
				t.Errorf("trigger ids %s and %s, want the same", calls[0].d.TriggerID, calls[1].d.TriggerID)
			}
		})
	}
}

// TestQuietNodeInFlight: a node that stopped beating but may still run
// (quiet: another host, or stalled) keeps the attempt it has in flight
// until the run's deadline has passed by fire.InFlightMargin: the
// rescuer leaves it, the old attempt's outcome is recorded, and the hook
// is called once. Past that, the run is taken over (the attempt was cut by
// its ttl); and a quiet node's run awaiting a retry is taken at once, its
// owner's next attempt refused by the fence.
func TestQuietNodeInFlight(t *testing.T) {
	t.Parallel()
	quiet := func() fire.Peers { return fire.Peers{Live: []string{"node-b"}, Quiet: []string{node}} }

	t.Run("InFlightLeftToItsNode", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		armed := b.add(t, newTask("stalled"), node)
		g := newGate()
		b.exec.set(func(ctx context.Context, n int, _ task.Delivery) (string, error) { return "sent", g.wait(ctx, n) })
		b.fire(t, b.firer, armed, slot(1))
		g.awaitStart(t)
		rescuer := b.peerFirer(t, "node-b", quiet, time.Hour, nil)
		if n, err := rescuer.Rescue(t.Context(), 100); err != nil || n != 0 {
			t.Fatalf("Rescue of a quiet node's attempt in flight = %d, %v; want 0", n, err)
		}
		if n, err := rescuer.Resume(t.Context(), armed); err != nil || n != 1 {
			t.Fatalf("Resume = %d, %v; want 1 unfinished scheduled run", n, err)
		}
		close(g.release)
		shutdown(t, b.firer)
		shutdown(t, rescuer)
		if r := b.run(t, "stalled", slot(1)); r.State != task.RunDone || r.Node != node || r.Fence != 1 {
			t.Errorf("run = %+v, want done by its own node at fence 1", r)
		}
		if n := len(b.exec.seen()); n != 1 {
			t.Errorf("executor called %d times, want once", n)
		}
	})

	t.Run("PastDeadlineTakenOver", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		armed := b.add(t, newTask("cut"), node)
		g := newGate()
		b.exec.set(func(ctx context.Context, n int, _ task.Delivery) (string, error) {
			if n > 1 {
				return "rescued", nil
			}
			return "old", g.wait(ctx, n)
		})
		b.fire(t, b.firer, armed, slot(1))
		g.awaitStart(t)
		later := func() time.Time { return time.Now().Add(task.DefaultTTL + fire.InFlightMargin + time.Second) }
		rescuer := b.peerFirer(t, "node-b", quiet, time.Hour, later)
		if n, err := rescuer.Rescue(t.Context(), 100); err != nil || n != 1 {
			t.Fatalf("Rescue of a quiet node's run past its deadline = %d, %v; want 1", n, err)
		}
		if r := b.finalRun(t, "cut", slot(1)); r.State != task.RunDone || r.Node != "node-b" || r.Output != "rescued" {
			t.Fatalf("run = %+v, want done by node-b", r)
		}
		close(g.release)
		shutdown(t, b.firer)
		shutdown(t, rescuer)
		if r := b.run(t, "cut", slot(1)); r.Node != "node-b" || r.Output != "rescued" {
			t.Errorf("run after the old attempt ended = %+v, want node-b's outcome kept", r)
		}
	})

	t.Run("RetryTakenAtOnce", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.add(t, newTask("retry"), node)
		now := time.Now()
		b.insertRun(t, &task.Run{TriggerID: "tr_retry", TaskID: "retry", Slot: slot(1), Target: string(task.ChannelSMS),
			TriggerType: task.TriggerSchedule, State: task.RunFailed, Attempt: 1, Node: node, Fence: 1,
			FiredAt: now, NextAttempt: now.Add(time.Minute), Deadline: now.Add(2 * time.Minute)})
		rescuer := b.peerFirer(t, "node-b", quiet, time.Hour, nil)
		if n, err := rescuer.Rescue(t.Context(), 100); err != nil || n != 1 {
			t.Fatalf("Rescue of a quiet node's run awaiting its retry = %d, %v; want 1", n, err)
		}
		if r := b.run(t, "retry", slot(1)); r.Node != "node-b" || r.Fence != 2 {
			t.Errorf("run = %+v, want node-b's at fence 2", r)
		}
	})
}

// TestRescue covers what the rescuer takes and what it leaves.
func TestRescue(t *testing.T) {
	t.Parallel()

	t.Run("LeavesLiveOwnersRunsUntilStuck", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.add(t, newTask("busy"), node)
		now := time.Now()
		b.insertRun(t, &task.Run{TriggerID: "tr_busy", TaskID: "busy", Slot: slot(1), Target: string(task.ChannelSMS),
			TriggerType: task.TriggerSchedule, State: task.RunRunning, Attempt: 1, Node: "node-x", Fence: 1,
			FiredAt: now, Deadline: now.Add(time.Minute)})
		live := func() []string { return []string{"node-x", "node-b"} }
		if n, err := b.firerOf(t, "node-b", live, time.Hour).Rescue(t.Context(), 100); err != nil || n != 0 {
			t.Fatalf("Rescue of a live owner's run = %d, %v; want 0", n, err)
		}
		// Past its deadline by more than the grace, it is stuck: taken.
		stuck := b.firerOf(t, "node-c", live, time.Nanosecond)
		b.insertRun(t, &task.Run{TriggerID: "tr_stuck", TaskID: "busy", Slot: slot(2), Target: string(task.ChannelSMS),
			TriggerType: task.TriggerSchedule, State: task.RunRunning, Attempt: 1, Node: "node-x", Fence: 1,
			FiredAt: now.Add(-time.Hour), Deadline: now.Add(-time.Minute)})
		if n, err := stuck.Rescue(t.Context(), 100); err != nil || n != 1 {
			t.Fatalf("Rescue of a stuck run = %d, %v; want 1", n, err)
		}
		if r := b.finalRun(t, "busy", slot(2)); r.State != task.RunDone || r.Node != "node-c" {
			t.Errorf("stuck run = %+v, want done by node-c", r)
		}
		if r := b.run(t, "busy", slot(1)); r.State != task.RunRunning || r.Node != "node-x" || r.Fence != 1 {
			t.Errorf("live owner's run = %+v, want untouched", r)
		}
	})

	t.Run("EarlierProcessOfThisNode", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.add(t, newTask("mine"), node)
		fired := time.Now().Add(-time.Second)
		b.insertRun(t, &task.Run{TriggerID: "tr_mine", TaskID: "mine", Slot: slot(1), Target: string(task.ChannelSMS),
			TriggerType: task.TriggerSchedule, State: task.RunRunning, Attempt: 1, Node: node, Fence: 1,
			FiredAt: fired, Deadline: fired.Add(time.Hour)})
		// A new process of the same node id (started after the fire).
		restarted := b.firerOf(t, node, func() []string { return []string{node} }, time.Hour)
		if n, err := restarted.Rescue(t.Context(), 100); err != nil || n != 1 {
			t.Fatalf("Rescue = %d, %v; want 1", n, err)
		}
		if r := b.finalRun(t, "mine", slot(1)); r.State != task.RunDone || r.Fence != 2 {
			t.Errorf("run = %+v, want done at fence 2", r)
		}
	})

	t.Run("DeletedTaskEndsCancelled", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.insertRun(t, &task.Run{TriggerID: "tr_gone", TaskID: "gone", Slot: slot(1), Target: string(task.ChannelSMS),
			TriggerType: task.TriggerSchedule, State: task.RunFailed, Attempt: 1, Node: "node-dead", Fence: 1,
			FiredAt: slot(1)})
		f := b.firerOf(t, "node-b", func() []string { return []string{"node-b"} }, time.Hour)
		if n, err := f.Rescue(t.Context(), 100); err != nil || n != 1 {
			t.Fatalf("Rescue = %d, %v; want 1", n, err)
		}
		r, err := b.store.GetRun(t.Context(), "tr_gone")
		if err != nil || r.State != task.RunCancelled || r.Error == "" || r.FinishedAt.IsZero() {
			t.Errorf("run of a deleted task = %+v, %v; want cancelled with the reason", r, err)
		}
		if n := len(b.exec.seen()); n != 0 {
			t.Errorf("executor called %d times for a deleted task, want 0", n)
		}
	})

	t.Run("FinishOfDeletedTaskStillRecorded", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		armed := b.add(t, newTask("vanish"), node)
		g := newGate()
		b.exec.set(func(ctx context.Context, n int, _ task.Delivery) (string, error) { return "sent", g.wait(ctx, n) })
		b.fire(t, b.firer, armed, slot(1))
		g.awaitStart(t)
		// The row is deleted and its task purged while the run is in flight.
		if err := b.store.DeleteRow(t.Context(), scenario, "vanish"); err != nil {
			t.Fatal(err)
		}
		if err := b.store.ReleaseTask(t.Context(), "vanish", node); err != nil {
			t.Fatal(err)
		}
		if n, err := b.store.PurgeDeleted(t.Context()); err != nil || n != 1 {
			t.Fatalf("PurgeDeleted = %d, %v", n, err)
		}
		close(g.release)
		shutdown(t, b.firer)
		if r := b.run(t, "vanish", slot(1)); r.State != task.RunDone {
			t.Errorf("run whose task was purged mid-delivery = %+v, want done", r)
		}
	})
}

var _ fire.Store = store.Store(nil)
