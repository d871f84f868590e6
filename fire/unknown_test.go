package fire_test

import (
	"testing"
	"time"

	"cronsheet/fire"
	"cronsheet/task"
)

// TestFireRecordOutcomeUnknown: a fire whose ledger record was
// stored though every try of its group commit reported an error (the
// last try committed, then failed) is delivered at once, exactly once,
// with the stored run's trigger id; the caller's retry of the slot finds
// it fired and delivers nothing, and no rescuer delivers it again. A
// record that was not stored at all still answers the error, and the
// caller's retry fires the slot once.
func TestFireRecordOutcomeUnknown(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		fault  *fault
		stored bool
	}{
		// The group commit tries four times: three fail before writing,
		// the fourth is stored and reported failed.
		{"StoredButReportedFailed", &fault{before: 3, after: 1}, true},
		{"NotStored", &fault{before: 4}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			fb := setupFaults(t, 0, 0)
			fb.faults.record = c.fault
			armed := fb.add(t, hookTask("unknown-fire"), node)
			p := fire.Params{Armed: armed, Slot: slot(1), Trigger: task.TriggerSchedule, NextFire: slot(2)}
			out, _, err := fb.firer.Fire(t.Context(), p)
			if n := c.fault.failures(); n != 4 {
				t.Fatalf("RecordFires failed %d times, want 4", n)
			}
			switch {
			case c.stored && (err != nil || out != fire.Fired):
				t.Errorf("Fire of a stored record = %v, %v; want Fired", out, err)
			case !c.stored && err == nil:
				t.Errorf("Fire of a record not stored = %v, want its error", out)
			}
			// The caller's retry (arming fires the slot again, a new
			// trigger id): fired now only when nothing was stored.
			again, _, err := fb.firer.Fire(t.Context(), p)
			if want := map[bool]fire.Outcome{true: fire.Duplicate, false: fire.Fired}[c.stored]; err != nil || again != want {
				t.Errorf("retried Fire = %v, %v; want %v", again, err, want)
			}
			r := fb.run(t, "unknown-fire", slot(1))
			select {
			case id := <-fb.rc.started:
				if id != r.TriggerID {
					t.Errorf("receiver got trigger id %s, the ledger holds %s", id, r.TriggerID)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("no delivery within 10 s of the fire; the run is %s (left to the rescuer)", r.State)
			}
			fb.finalRun(t, "unknown-fire", slot(1))
			shutdown(t, fb.firer)
			fb.checkOnce(t, "unknown-fire", 1)
		})
	}
}
