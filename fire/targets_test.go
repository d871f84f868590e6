package fire_test

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"cronsheet/executors"
	"cronsheet/fire"
	"cronsheet/store"
	"cronsheet/task"
)

// withTargets registers a scriptExec for targets of kind http and stores
// the given targets.
func (b *testBundle) withTargets(t *testing.T, targets ...*task.Target) *scriptExec {
	t.Helper()
	e := &scriptExec{}
	b.execs.Register(task.ChannelHTTP, e2f(e))
	for _, tg := range targets {
		if err := b.store.CreateTarget(t.Context(), tg); err != nil {
			t.Fatalf("CreateTarget(%s): %v", tg.ID, err)
		}
	}
	return e
}

func e2f(e *scriptExec) executors.Executor { return executors.ExecutorFunc(e.execute) }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func httpTarget(id string, state task.TargetState, feedback int) *task.Target {
	return &task.Target{ID: id, Kind: task.ChannelHTTP, State: state, FeedbackTimeout: feedback,
		HTTP: &task.HTTPTarget{Method: "POST", URL: "http://127.0.0.1:1/" + id}}
}

func taskWithTargets(id string, targets ...string) *task.Task {
	tk := newTask(id)
	tk.Targets = targets
	return tk
}

// byTarget returns the runs of a task's slot keyed by target.
func (b *testBundle) byTarget(t *testing.T, id string, slot time.Time) map[string]*task.Run {
	t.Helper()
	out := map[string]*task.Run{}
	for _, r := range b.runs(t, id) {
		if r.Slot.Equal(slot) {
			out[r.Target] = r
		}
	}
	return out
}

func TestTargets(t *testing.T) {
	t.Parallel()

	t.Run("EachTargetGetsItsOwnRun", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		e := b.withTargets(t, httpTarget("a", task.TargetRunning, 0), httpTarget("b", task.TargetRunning, 0))
		armed := b.add(t, taskWithTargets("two", "a", "b"), node)
		if out, _ := b.fire(t, b.firer, armed, slot(1)); out != fire.Fired {
			t.Fatalf("Fire = %v, want Fired", out)
		}
		shutdown(t, b.firer)
		runs := b.byTarget(t, "two", slot(1))
		if len(runs) != 2 || runs["a"].State != task.RunDone || runs["b"].State != task.RunDone ||
			runs["a"].TriggerID == runs["b"].TriggerID {
			t.Fatalf("runs = %+v, want two done runs with their own trigger ids", runs)
		}
		calls := e.seen()
		if len(calls) != 2 {
			t.Fatalf("deliveries = %d, want 2", len(calls))
		}
		for _, c := range calls {
			if c.d.Target == nil || c.d.Channel != task.ChannelHTTP || c.d.TriggerID != runs[c.d.Target.ID].TriggerID ||
				c.d.LedgerKey() != "two:"+itoa(slot(1).UnixMilli())+":"+c.d.Target.ID {
				t.Errorf("delivery = %+v, want the run of its target", c.d)
			}
		}
	})

	t.Run("PausedTargetRejectsScheduledTakesManual", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		e := b.withTargets(t, httpTarget("on", task.TargetRunning, 0), httpTarget("paused", task.TargetPaused, 0),
			httpTarget("preset", task.TargetPreset, 0))
		armed := b.add(t, taskWithTargets("mix", "on", "paused", "preset"), node)
		b.fire(t, b.firer, armed, slot(1))
		runs, err := b.firer.Trigger(t.Context(), fire.TriggerParams{TaskID: "mix", At: manualAt, Params: map[string]string{"who": "ann"}})
		if err != nil || len(runs) != 3 {
			t.Fatalf("Trigger = %+v, %v; want three runs", runs, err)
		}
		shutdown(t, b.firer)
		sched := b.byTarget(t, "mix", slot(1))
		if sched["on"].State != task.RunDone ||
			sched["paused"].State != task.RunRejected || !strings.Contains(sched["paused"].Error, "paused") ||
			sched["preset"].State != task.RunRejected || !strings.Contains(sched["preset"].Error, "preset") {
			t.Errorf("scheduled runs = on %+v / paused %+v / preset %+v", sched["on"], sched["paused"], sched["preset"])
		}
		manual := b.byTarget(t, "mix", manualAt.Truncate(time.Millisecond))
		if manual["on"].State != task.RunDone || manual["paused"].State != task.RunDone ||
			manual["preset"].State != task.RunRejected {
			t.Errorf("manual runs = on %+v / paused %+v / preset %+v", manual["on"], manual["paused"], manual["preset"])
		}
		// Deliveries: on (scheduled), on and paused (manual), with the
		// one-off param only on the manual ones.
		got := map[string]int{}
		for _, c := range e.seen() {
			key := c.d.Target.ID + "/" + string(c.d.TriggerType)
			got[key]++
			if (c.d.TriggerType == task.TriggerManual) != (c.d.Params["who"] == "ann") || c.d.Params[task.ParamTo] == "" {
				t.Errorf("delivery %s params = %v", key, c.d.Params)
			}
		}
		if len(got) != 3 || got["on/schedule"] != 1 || got["on/manual"] != 1 || got["paused/manual"] != 1 {
			t.Errorf("deliveries = %v", got)
		}
	})

	t.Run("MissingTargetIsDead", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.withTargets(t)
		armed := b.add(t, taskWithTargets("ghost", "nobody"), node)
		b.fire(t, b.firer, armed, slot(1))
		r := b.byTarget(t, "ghost", slot(1))["nobody"]
		if r == nil || r.State != task.RunDead || !strings.Contains(r.Error, "not found") {
			t.Errorf("run = %+v, want dead: target not found", r)
		}
	})

	t.Run("AcceptedWaitsForFeedback", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.withTargets(t, httpTarget("fb", task.TargetRunning, 30), httpTarget("fb2", task.TargetRunning, 30))
		armed := b.add(t, taskWithTargets("fb", "fb", "fb2"), node)
		before := time.Now()
		b.fire(t, b.firer, armed, slot(1))
		shutdown(t, b.firer)
		runs := b.byTarget(t, "fb", slot(1))
		for _, r := range runs {
			if r.State != task.RunAccepted || r.Deadline.Before(before.Add(29*time.Second)) || !r.FinishedAt.IsZero() {
				t.Fatalf("run = %+v, want accepted with a deadline 30s on", r)
			}
		}
		if got := b.task(t, "fb"); got.LastStatus != string(task.RunAccepted) {
			t.Errorf("task last_status = %q, want accepted", got.LastStatus)
		}
		// Progress, then the final report: done.
		ctx := t.Context()
		id := runs["fb"].TriggerID
		if _, err := b.store.AddFeedback(ctx, store.FeedbackParams{TriggerID: id, Feedback: task.Feedback{At: time.Now(), Status: 0, Message: "half", Progress: true}}); err != nil {
			t.Fatalf("progress feedback: %v", err)
		}
		r, err := b.store.AddFeedback(ctx, store.FeedbackParams{TriggerID: id, Feedback: task.Feedback{At: time.Now(), Status: 0, Message: "all done"}})
		if err != nil || r.State != task.RunDone || len(r.Feedback) != 2 {
			t.Fatalf("final feedback = %+v, %v; want done with two reports", r, err)
		}
		// The other gets none: it times out at its deadline.
		expired, err := b.store.ExpireAccepted(ctx, runs["fb2"].Deadline.Add(time.Millisecond), 10, nil)
		if err != nil || len(expired) != 1 || expired[0].TriggerID != runs["fb2"].TriggerID {
			t.Fatalf("ExpireAccepted = %+v, %v; want the run of fb2", expired, err)
		}
		if r := b.byTarget(t, "fb", slot(1))["fb2"]; r.State != task.RunTimeout {
			t.Errorf("run without feedback = %+v, want timeout", r)
		}
	})
}
