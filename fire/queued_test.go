package fire_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"cronsheet/fire"
	"cronsheet/task"
)

// queuedTask is an every-10s test task under overlap queue.
func queuedTask(id string) *task.Task {
	tk := newTask(id)
	tk.Overlap = task.OverlapQueue
	return tk
}

// slotsSeen returns the slots of tk's deliveries the executor saw.
func slotsSeen(calls []call, id string) []time.Time {
	var out []time.Time
	for _, c := range calls {
		if c.d.TaskID == id {
			out = append(out, c.d.Slot)
		}
	}
	return out
}

// TestQueuedRunEndsWithItsTask: runs queued behind a delivery (overlap
// queue) whose task is switched off, stopped or closed meanwhile end
// cancelled with the reason when their turn comes, and are never
// delivered.
func TestQueuedRunEndsWithItsTask(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, why string
		stop      func(t *testing.T, b *testBundle, tk *task.Task)
	}{
		{"SwitchedOff", "switched off", func(t *testing.T, b *testBundle, tk *task.Task) {
			off := *tk
			off.IsEnable = 0
			b.edit(t, &off)
		}},
		{"Stopped", "stopped", func(t *testing.T, b *testBundle, tk *task.Task) { b.setState(t, tk.TaskID, task.StateStopped) }},
		{"Closed", "closed", func(t *testing.T, b *testBundle, tk *task.Task) { b.setState(t, tk.TaskID, task.StateClosed) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			armed := b.add(t, queuedTask("q"), node)
			g := newGate()
			b.exec.set(func(ctx context.Context, n int, _ task.Delivery) (string, error) { return "", g.wait(ctx, n) })
			b.fire(t, b.firer, armed, slot(1))
			g.awaitStart(t)
			b.fire(t, b.firer, armed, slot(2))
			b.fireMissed(t, b.firer, armed, slot(3)) // queued too: the queue holds one scheduled slot
			for _, k := range []int{2, 3} {
				if r := b.run(t, "q", slot(k)); r.State != task.RunPending {
					t.Fatalf("slot %d run while slot 1 runs = %+v, want pending", k, r)
				}
			}
			c.stop(t, b, armed)
			close(g.release)
			for _, k := range []int{2, 3} {
				r := b.finalRun(t, "q", slot(k))
				if r.State != task.RunCancelled || !strings.Contains(r.Error, c.why) || r.Attempt != 1 {
					t.Errorf("slot %d run = %+v, want cancelled at attempt 1, saying the task was %s", k, r, c.why)
				}
			}
			if r := b.finalRun(t, "q", slot(1)); r.State != task.RunDone {
				t.Errorf("slot 1 run = %+v, want done (it was in progress)", r)
			}
			shutdown(t, b.firer)
			if got := slotsSeen(b.exec.seen(), "q"); len(got) != 1 || !got[0].Equal(slot(1)) {
				t.Errorf("delivered slots %s, want only slot 1", fmtTimes(got))
			}
		})
	}
}

// TestQueuedRunReleaseRacesClose: the turn of a queued run comes at the
// same moment as its task is closed. Whichever comes first, a run still
// pending when the close was answered is never delivered.
func TestQueuedRunReleaseRacesClose(t *testing.T) {
	t.Parallel()
	b := setup(t)
	const n = 20
	var mu sync.Mutex
	release := map[string]chan struct{}{}
	started := make(chan string, n)
	b.exec.set(func(ctx context.Context, _ int, d task.Delivery) (string, error) {
		if !d.Slot.Equal(slot(1)) {
			return "", nil
		}
		mu.Lock()
		ch := release[d.TaskID]
		mu.Unlock()
		started <- d.TaskID
		select {
		case <-ch:
			return "", nil
		case <-ctx.Done():
			return "", ctx.Err()
		}
	})
	pendingAtClose := map[string]bool{}
	for i := range n {
		id := fmt.Sprintf("race%02d", i)
		mu.Lock()
		release[id] = make(chan struct{})
		mu.Unlock()
		armed := b.add(t, queuedTask(id), node)
		b.fire(t, b.firer, armed, slot(1))
		if got := <-started; got != id {
			t.Fatalf("delivery of %s started, want %s", got, id)
		}
		b.fire(t, b.firer, armed, slot(2))
		mu.Lock()
		ch := release[id]
		mu.Unlock()
		var wg sync.WaitGroup
		wg.Go(func() { close(ch) })
		b.setState(t, id, task.StateClosed)
		pendingAtClose[id] = b.run(t, id, slot(2)).State == task.RunPending
		wg.Wait()
		b.finalRun(t, id, slot(2))
	}
	shutdown(t, b.firer)
	delivered := map[string]bool{}
	for _, c := range b.exec.seen() {
		if c.d.Slot.Equal(slot(2)) {
			delivered[c.d.TaskID] = true
		}
	}
	ended := 0
	for id, pending := range pendingAtClose {
		if pending && delivered[id] {
			t.Errorf("%s: slot 2 was pending when the close was answered, and was delivered", id)
		}
		if pending {
			ended++
		}
	}
	t.Logf("%d of %d queued runs were pending at the close", ended, n)
}

// TestMissedSlotsAllDelivered: the missed slots an arming replays
// (misfire all) are all delivered, one at a time in slot order, under the
// default overlap policy (skip), which drops only scheduled slots.
func TestMissedSlotsAllDelivered(t *testing.T) {
	t.Parallel()
	b := setup(t)
	tk := newTask("catchup") // overlap not given: skip
	tk.Misfire = task.MisfireAll
	armed := b.add(t, tk, node)
	g := newGate()
	var mu sync.Mutex
	running, most := 0, 0
	b.exec.set(func(ctx context.Context, n int, _ task.Delivery) (string, error) {
		mu.Lock()
		running++
		most = max(most, running)
		mu.Unlock()
		defer func() { mu.Lock(); running--; mu.Unlock() }()
		if n == 1 {
			return "", g.wait(ctx, n)
		}
		return "", nil
	})
	const missed = 5
	for k := 1; k <= missed; k++ {
		out, _, err := b.firer.Fire(t.Context(), fire.Params{Armed: armed, Slot: slot(k), Trigger: task.TriggerMisfire,
			NextFire: slot(k + 1)})
		if err != nil || out != fire.Fired {
			t.Fatalf("Fire(misfire %d) = %v, %v; want Fired", k, out, err)
		}
		if k == 1 {
			g.awaitStart(t) // the first is in progress while the others fire
		}
	}
	close(g.release)
	for k := 1; k <= missed; k++ {
		if r := b.finalRun(t, "catchup", slot(k)); r.State != task.RunDone {
			t.Errorf("missed slot %d run = %+v, want done", k, r)
		}
	}
	shutdown(t, b.firer)
	got := slotsSeen(b.exec.seen(), "catchup")
	if len(got) != missed {
		t.Fatalf("delivered slots %s, want all %d missed slots", fmtTimes(got), missed)
	}
	for k, s := range got {
		if !s.Equal(slot(k + 1)) {
			t.Errorf("delivery order %s, want slot order", fmtTimes(got))
			break
		}
	}
	if most != 1 {
		t.Errorf("%d deliveries ran at once, want 1", most)
	}
}

// TestRescuedQueuedRun: a queued run whose node is gone was never
// attempted: the node that takes it over delivers it at attempt 1, also
// with no retries left to spend; when its task was closed meanwhile it
// ends cancelled, undelivered.
func TestRescuedQueuedRun(t *testing.T) {
	t.Parallel()
	queued := func(id string) *task.Run {
		return &task.Run{TriggerID: "tr_" + id, TaskID: id, Slot: slot(2), Target: string(task.ChannelSMS),
			TriggerType: task.TriggerSchedule, State: task.RunPending, Attempt: 1, Node: "node-dead", FiredAt: slot(2)}
	}

	t.Run("DeliveredAtItsAttempt", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		tk := queuedTask("rescued")
		tk.MaxRetries = 0
		tk = b.add(t, tk, node)
		b.insertRun(t, queued("rescued"))
		if n, err := b.firer.Resume(t.Context(), tk); err != nil || n != 1 {
			t.Fatalf("Resume = %d, %v; want 1", n, err)
		}
		r := b.finalRun(t, "rescued", slot(2))
		shutdown(t, b.firer)
		if r.State != task.RunDone || r.Attempt != 1 || r.Node != node {
			t.Errorf("run = %+v, want done at attempt 1 by %s", r, node)
		}
		calls := b.exec.seen()
		if len(calls) != 1 || calls[0].d.Attempt != 1 {
			t.Errorf("calls = %+v, want one delivery at attempt 1", calls)
		}
	})

	t.Run("QueuedBehindTheRunBeforeIt", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		tk := b.add(t, queuedTask("behind"), node)
		b.insertRun(t, &task.Run{TriggerID: "tr_before", TaskID: "behind", Slot: slot(1), Target: string(task.ChannelSMS),
			TriggerType: task.TriggerSchedule, State: task.RunRunning, Attempt: 1, Node: "node-dead", FiredAt: slot(1)})
		b.insertRun(t, queued("behind"))
		var mu sync.Mutex
		running, most := 0, 0
		b.exec.set(func(context.Context, int, task.Delivery) (string, error) {
			mu.Lock()
			running++
			most = max(most, running)
			mu.Unlock()
			time.Sleep(20 * time.Millisecond) // long enough for an overlap to show
			mu.Lock()
			running--
			mu.Unlock()
			return "", nil
		})
		if n, err := b.firer.Resume(t.Context(), tk); err != nil || n != 2 {
			t.Fatalf("Resume = %d, %v; want 2", n, err)
		}
		b.finalRun(t, "behind", slot(1))
		b.finalRun(t, "behind", slot(2))
		shutdown(t, b.firer)
		if got := slotsSeen(b.exec.seen(), "behind"); len(got) != 2 {
			t.Errorf("delivered slots %s, want 2", fmtTimes(got))
		}
		if most != 1 {
			t.Errorf("%d deliveries ran at once, want 1 (overlap queue)", most)
		}
	})

	t.Run("TaskClosed", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		tk := b.add(t, queuedTask("closed"), node)
		b.insertRun(t, queued("closed"))
		b.setState(t, "closed", task.StateClosed)
		if _, err := b.firer.Resume(t.Context(), tk); err != nil {
			t.Fatalf("Resume: %v", err)
		}
		r := b.finalRun(t, "closed", slot(2))
		shutdown(t, b.firer)
		if r.State != task.RunCancelled || !strings.Contains(r.Error, "closed") {
			t.Errorf("run = %+v, want cancelled: its task was closed", r)
		}
		if n := len(b.exec.seen()); n != 0 {
			t.Errorf("executor ran %d times, want 0", n)
		}
	})
}

// TestEndQueued: EndQueued ends a closed task's queued runs at once, while
// the delivery before them still runs, and leaves a running task's queue
// alone.
func TestEndQueued(t *testing.T) {
	t.Parallel()
	b := setup(t)
	armed := b.add(t, queuedTask("q"), node)
	g := newGate()
	b.exec.set(func(ctx context.Context, n int, _ task.Delivery) (string, error) { return "", g.wait(ctx, n) })
	b.fire(t, b.firer, armed, slot(1))
	g.awaitStart(t)
	b.fire(t, b.firer, armed, slot(2))
	b.fireMissed(t, b.firer, armed, slot(3)) // queued too: the queue holds one scheduled slot
	if n := b.firer.EndQueued(t.Context(), "q"); n != 0 {
		t.Errorf("EndQueued of a running task = %d, want 0", n)
	}
	if r := b.run(t, "q", slot(2)); r.State != task.RunPending {
		t.Errorf("slot 2 run after EndQueued of a running task = %+v, want pending", r)
	}
	b.setState(t, "q", task.StateClosed)
	if n := b.firer.EndQueued(t.Context(), "q"); n != 2 {
		t.Errorf("EndQueued of a closed task = %d, want 2", n)
	}
	for _, k := range []int{2, 3} {
		if r := b.run(t, "q", slot(k)); r.State != task.RunCancelled || !strings.Contains(r.Error, "closed") {
			t.Errorf("slot %d run while slot 1 still runs = %+v, want cancelled: the task was closed", k, r)
		}
	}
	if !b.firer.Busy("q") {
		t.Error("Busy = false while slot 1 is delivered")
	}
	close(g.release)
	b.finalRun(t, "q", slot(1))
	shutdown(t, b.firer)
	if got := slotsSeen(b.exec.seen(), "q"); len(got) != 1 {
		t.Errorf("delivered slots %s, want only slot 1", fmtTimes(got))
	}
}
