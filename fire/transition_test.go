package fire_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cronsheet/fire"
	"cronsheet/store"
	"cronsheet/task"
)

// observed records what a Firer's Config.OnRun and OnFire hear.
type observed struct {
	mu     sync.Mutex
	states map[string][]task.RunState // per trigger id, in order
	fired  map[string][]task.RunState // OnFire's, per trigger id
}

func (o *observed) onFire(_ *task.Task, _ *task.Target, r task.Run) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.fired == nil {
		o.fired = map[string][]task.RunState{}
	}
	o.fired[r.TriggerID] = append(o.fired[r.TriggerID], r.State)
}

func (o *observed) firedOf(id string) []task.RunState {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]task.RunState(nil), o.fired[id]...)
}

func (o *observed) onRun(_ *task.Task, _ *task.Target, r task.Run) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.states[r.TriggerID] = append(o.states[r.TriggerID], r.State)
}

func (o *observed) of(id string) []task.RunState {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]task.RunState(nil), o.states[id]...)
}

// observedFirer returns a Firer of node over b's store whose OnRun o
// hears, on the clock time.Now plus *skew.
func (b *testBundle) observedFirer(t *testing.T, o *observed, skew *atomic.Int64) *fire.Firer {
	t.Helper()
	f := fire.New(slog.New(slog.DiscardHandler), fire.Config{Node: node, OnRun: o.onRun, OnFire: o.onFire}, b.store, b.execs,
		func() time.Time { return time.Now().Add(time.Duration(skew.Load())) })
	t.Cleanup(func() { _ = f.Shutdown(context.Background()) })
	return f
}

func sameStates(a, b []task.RunState) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestTransitions(t *testing.T) {
	t.Parallel()

	// The target's final report comes while its HTTP call is still under
	// way: the run ends done with the report, the until_success task is
	// done with no next fire, and the answer that follows writes nothing
	// and is told to no one.
	t.Run("FeedbackBeforeAnswerUsesUpSchedule", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		e := b.withTargets(t, httpTarget("fb", task.TargetRunning, 30))
		o := &observed{states: map[string][]task.RunState{}}
		f := b.observedFirer(t, o, new(atomic.Int64))
		e.set(func(ctx context.Context, _ int, d task.Delivery) (string, error) {
			_, err := f.Feedback(ctx, store.FeedbackParams{TriggerID: d.TriggerID,
				Feedback: task.Feedback{At: time.Now(), Status: 0, Output: "reported"}})
			return "answered", err
		})
		tk := taskWithTargets("until", "fb")
		tk.ExecuteType = task.UntilSuccess
		armed := b.add(t, tk, node)
		if out, _ := b.fire(t, f, armed, slot(1)); out != fire.Fired {
			t.Fatalf("Fire = %v, want Fired", out)
		}
		shutdown(t, f)
		r := b.byTarget(t, "until", slot(1))["fb"]
		if r == nil || r.State != task.RunDone || r.Output != "reported" || len(r.Feedback) != 1 {
			t.Fatalf("run = %+v, want done by the report with its output", r)
		}
		if n := len(e.seen()); n != 1 {
			t.Errorf("deliveries = %d, want 1", n)
		}
		got := b.task(t, "until")
		if got.IsDone != 1 || !got.NextFire.IsZero() || got.LastStatus != string(task.RunDone) {
			t.Errorf("task: is_done %d, next_fire %v, last_status %q; want done, none, done", got.IsDone, got.NextFire, got.LastStatus)
		}
		if states := o.of(r.TriggerID); !sameStates(states, []task.RunState{task.RunRunning, task.RunDone}) {
			t.Errorf("OnRun heard %v, want [running done]: the fire and the end, once", states)
		}
		if fired := o.firedOf(r.TriggerID); !sameStates(fired, []task.RunState{task.RunRunning}) {
			t.Errorf("OnFire heard %v, want [running]: the fire only", fired)
		}
	})

	// A failure report before the answer ends the run dead and leaves the
	// until_success task scheduled; the answer's success does not undo it.
	t.Run("FailureReportBeforeAnswer", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		e := b.withTargets(t, httpTarget("fb", task.TargetRunning, 30))
		o := &observed{states: map[string][]task.RunState{}}
		f := b.observedFirer(t, o, new(atomic.Int64))
		e.set(func(ctx context.Context, _ int, d task.Delivery) (string, error) {
			_, err := f.Feedback(ctx, store.FeedbackParams{TriggerID: d.TriggerID,
				Feedback: task.Feedback{At: time.Now(), Status: 3, Message: "broke"}})
			return "answered", err
		})
		tk := taskWithTargets("until", "fb")
		tk.ExecuteType = task.UntilSuccess
		b.fire(t, f, b.add(t, tk, node), slot(1))
		shutdown(t, f)
		r := b.byTarget(t, "until", slot(1))["fb"]
		if r == nil || r.State != task.RunDead || r.Error != "broke" {
			t.Fatalf("run = %+v, want dead with the report's message", r)
		}
		if got := b.task(t, "until"); got.IsDone != 0 || got.LastStatus != string(task.RunDead) {
			t.Errorf("task: is_done %d, last_status %q; want not done, dead", got.IsDone, got.LastStatus)
		}
		if states := o.of(r.TriggerID); !sameStates(states, []task.RunState{task.RunRunning, task.RunDead}) {
			t.Errorf("OnRun heard %v, want [running dead]", states)
		}
	})

	// An accepted run: a final report ends it (told once); one without a
	// report times out through the Firer (told once); one cancelled as
	// accepted ends cancelled, and a second cancel is refused.
	t.Run("AcceptedRunsEnd", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.withTargets(t, httpTarget("a", task.TargetRunning, 30), httpTarget("b", task.TargetRunning, 30),
			httpTarget("c", task.TargetRunning, 30))
		o := &observed{states: map[string][]task.RunState{}}
		skew := new(atomic.Int64)
		f := b.observedFirer(t, o, skew)
		b.fire(t, f, b.add(t, taskWithTargets("acc", "a", "b", "c"), node), slot(1))
		ctx := t.Context()
		runs := map[string]*task.Run{}
		eventually(t, "all three runs accepted", func() bool {
			runs = b.byTarget(t, "acc", slot(1))
			return len(runs) == 3 && runs["a"].State == task.RunAccepted && runs["b"].State == task.RunAccepted &&
				runs["c"].State == task.RunAccepted
		})
		if _, err := f.Feedback(ctx, store.FeedbackParams{TriggerID: runs["a"].TriggerID,
			Feedback: task.Feedback{At: time.Now(), Progress: true, Message: "half"}}); err != nil {
			t.Fatalf("progress report: %v", err)
		}
		if r, err := f.Feedback(ctx, store.FeedbackParams{TriggerID: runs["a"].TriggerID,
			Feedback: task.Feedback{At: time.Now()}}); err != nil || r.State != task.RunDone {
			t.Fatalf("final report = %+v, %v; want done", r, err)
		}
		if err := f.CancelAccepted(ctx, runs["c"], "stopped"); err != nil {
			t.Fatalf("CancelAccepted: %v", err)
		}
		if err := f.CancelAccepted(ctx, runs["c"], "again"); !errors.Is(err, task.ErrConflict) {
			t.Errorf("second CancelAccepted = %v, want task.ErrConflict: the run is cancelled", err)
		}
		skew.Store(int64(31 * time.Second))
		if n, err := f.ExpireAccepted(ctx, 10); n != 1 || err != nil {
			t.Fatalf("ExpireAccepted = %d, %v; want 1 (b's run)", n, err)
		}
		want := map[string][]task.RunState{
			"a": {task.RunRunning, task.RunAccepted, task.RunDone},
			"b": {task.RunRunning, task.RunAccepted, task.RunTimeout},
			"c": {task.RunRunning, task.RunAccepted, task.RunCancelled},
		}
		for tg, states := range want {
			if got := o.of(runs[tg].TriggerID); !sameStates(got, states) {
				t.Errorf("OnRun heard %v for %s, want %v", got, tg, states)
			}
		}
	})
}
