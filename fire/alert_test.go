package fire_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"cronsheet/fire"
	"cronsheet/store"
	"cronsheet/task"
)

// TestAlert: after alert.after consecutive failed runs, each alert target
// gets one alert run (recorded in the task's ledger, carrying the
// failure), at most once per interval; the task's own status is left as
// its runs made it.
func TestAlert(t *testing.T) {
	t.Parallel()
	b := setup(t)
	pager := b.withTargets(t, httpTarget("pager", task.TargetRunning, 0))
	tk := newTask("flaky")
	tk.MaxRetries = 0
	tk.Alert = &task.Alert{Targets: []string{"pager", "gone"}, To: "+15550000000", After: 2}
	armed := b.add(t, tk, node)
	b.exec.set(func(context.Context, int, task.Delivery) (string, error) {
		return "", task.Permanent(errors.New("410 gone"))
	})

	b.fire(t, b.firer, armed, slot(1))
	if r := b.finalRun(t, "flaky", slot(1)); r.State != task.RunDead {
		t.Fatalf("slot 1 = %+v, want dead", r)
	}
	b.fire(t, b.firer, armed, slot(2))
	b.finalRun(t, "flaky", slot(2))
	eventually(t, "the alert to reach the pager", func() bool { return len(pager.seen()) == 1 })
	b.fire(t, b.firer, armed, slot(3)) // a third failure, within the interval
	b.finalRun(t, "flaky", slot(3))
	shutdown(t, b.firer)

	calls := pager.seen()
	if len(calls) != 1 {
		t.Fatalf("pager called %d times, want 1 (after 2 failures, then suppressed)", len(calls))
	}
	d := calls[0].d
	if d.TriggerType != task.TriggerAlert || d.Params["alert_failures"] != "2" || d.Params[task.ParamTo] != "+15550000000" ||
		!strings.Contains(d.Params["alert_message"], "410 gone") || !d.Slot.Equal(slot(2)) {
		t.Errorf("alert delivery = %+v", d)
	}
	alerts := b.byTarget(t, "flaky", slot(2))
	if r := alerts["alert:pager"]; r == nil || r.State != task.RunDone || r.TriggerType != task.TriggerAlert {
		t.Errorf("alert run to the pager = %+v, want done", r)
	}
	if r := alerts["alert:gone"]; r == nil || r.State != task.RunDead || !strings.Contains(r.Error, "not found") {
		t.Errorf("alert run to a missing target = %+v, want dead, not found", r)
	}
	if got := b.task(t, "flaky"); got.LastStatus != string(task.RunDead) {
		t.Errorf("task last status = %q, want dead (alerts leave it)", got.LastStatus)
	}
	if n := len(b.byTarget(t, "flaky", slot(3))); n != 1 {
		t.Errorf("slot 3 has %d runs, want only its own (the alert was suppressed)", n)
	}
}

// TestAbsenceAlert: a task watching for absence whose expected slot did
// not fire within Absent alerts its targets once for that slot, whichever
// of two nodes watches, however often they watch; a task not yet that
// late, or not watching, does not alert.
func TestAbsenceAlert(t *testing.T) {
	t.Parallel()
	b := setup(t)
	pager := b.withTargets(t, httpTarget("pager", task.TargetRunning, 0))
	now := time.Now()
	add := func(id string, absent, late time.Duration) time.Time {
		tk := newTask(id)
		tk.Alert = &task.Alert{Targets: []string{"pager"}, Absent: absent}
		b.add(t, tk, "nobody")
		due := now.Add(-late).Truncate(time.Second)
		if err := b.store.SetTaskStatus(t.Context(), store.TaskStatusParams{TaskID: id, NextFire: due, SetNextFire: true}); err != nil {
			t.Fatal(err)
		}
		return due
	}
	missed := add("missed", 30*time.Second, time.Minute)
	add("ontime", 30*time.Second, 15*time.Second)
	add("unwatched", 0, time.Hour)

	other := b.newFirer(t)
	var wg sync.WaitGroup
	for range 3 {
		for _, f := range []*fire.Firer{b.firer, other} {
			wg.Go(func() {
				if _, err := f.WatchAbsence(t.Context(), 100); err != nil {
					t.Errorf("WatchAbsence: %v", err)
				}
			})
		}
	}
	wg.Wait()
	eventually(t, "the absence alert to reach the pager", func() bool { return len(pager.seen()) >= 1 })
	for _, f := range []*fire.Firer{b.firer, other} {
		if _, err := f.WatchAbsence(t.Context(), 100); err != nil {
			t.Fatal(err)
		}
	}
	shutdown(t, b.firer)
	shutdown(t, other)
	calls := pager.seen()
	if len(calls) != 1 {
		t.Fatalf("pager called %d times, want 1 (one absent slot, two nodes watching)", len(calls))
	}
	d := calls[0].d
	if d.TaskID != "missed" || d.TriggerType != task.TriggerAlert || d.Params["alert_state"] != "absent" ||
		!d.Slot.Equal(missed) || !strings.Contains(d.Params["alert_message"], "did not fire") {
		t.Errorf("absence alert delivery = %+v, want task missed, slot %s", d, missed)
	}
	if r := b.byTarget(t, "missed", missed)["absent:pager"]; r == nil || r.State != task.RunDone {
		t.Errorf("absence alert run = %+v, want done under absent:pager", r)
	}
}
