package fire_test

import (
	"context"
	"errors"
	"strings"
	"testing"

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
