package patrol_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"cronsheet/patrol"
	"cronsheet/store"
)

func TestPublish(t *testing.T) {
	t.Parallel()

	t.Run("ArmsEnabledTasksOnce", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.insertRow(t, scenario, "r1", memo("m1"))
		off := memo("m2")
		off["active"] = 0
		b.insertRow(t, scenario, "r2", off)
		b.insertRow(t, scenario, "r3", memo("m3"))
		b.runSync(t, b.sync)
		err := b.store.SetTaskStatus(t.Context(), store.TaskStatusParams{TaskID: "m3", LastStatus: "done", Done: true})
		if err != nil {
			t.Fatalf("mark m3 done: %v", err)
		}

		if res := b.runPublish(t, b.publish); res != (patrol.PublishResult{Claimed: 1, Armed: 1}) {
			t.Fatalf("publish = %+v, want 1 claimed and armed", res)
		}
		if got := b.armer.Armed(); !slices.Equal(got, []string{"m1"}) {
			t.Errorf("armed = %v, want [m1]", got)
		}
		tk := b.task(t, "m1")
		if tk.IsClaimed != 1 || tk.ClaimedBy != nodeA || !tk.LeaseUntil.Equal(b.clock.Now().Add(lease).Truncate(time.Millisecond)) {
			t.Errorf("m1 claim: %d by %q until %s, want 1 by %s until now+lease", tk.IsClaimed, tk.ClaimedBy, tk.LeaseUntil, nodeA)
		}
		for _, id := range []string{"m2", "m3"} {
			if tk := b.task(t, id); tk.IsClaimed != 0 {
				t.Errorf("task %s is claimed, want disabled and done tasks left alone", id)
			}
		}

		if res := b.runPublish(t, b.publish); res != (patrol.PublishResult{}) {
			t.Errorf("second publish = %+v, want nothing to do", res)
		}
		if got := b.armer.armCalls(); !slices.Equal(got, []string{"m1"}) {
			t.Errorf("Arm calls = %v, want m1 once", got)
		}
	})

	t.Run("ArmErrorCountsFailed", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.seed(t, 3)
		b.armer.failArm("m2", errors.New("scheduler full"))

		if res := b.runPublish(t, b.publish); res != (patrol.PublishResult{Claimed: 3, Armed: 2, Failed: 1}) {
			t.Fatalf("publish = %+v, want 3 claimed, 2 armed, 1 failed", res)
		}
		if got := b.armer.Armed(); !slices.Equal(got, []string{"m1", "m3"}) {
			t.Errorf("armed = %v, want [m1 m3]", got)
		}

		// The failed task stays claimed but unarmed: reconcile frees it and the
		// next publish tries again.
		b.armer.failArm("m2", nil)
		if res := b.runReconcile(t, b.reconcile); res != (patrol.ReconcileResult{Released: 1}) {
			t.Fatalf("reconcile = %+v, want 1 released", res)
		}
		if res := b.runPublish(t, b.publish); res != (patrol.PublishResult{Claimed: 1, Armed: 1}) {
			t.Fatalf("publish after the fix = %+v, want 1 claimed and armed", res)
		}
		if got := b.armer.Armed(); !slices.Equal(got, []string{"m1", "m2", "m3"}) {
			t.Errorf("armed = %v, want all three", got)
		}
	})

	t.Run("ClaimsInBatches", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		ids := b.seed(t, 5)
		p := b.newPublish(nodeA, b.armer, 2)

		if res := b.runPublish(t, p); res != (patrol.PublishResult{Claimed: 5, Armed: 5}) {
			t.Fatalf("publish = %+v, want all 5 claimed and armed in one pass", res)
		}
		calls := b.armer.armCalls()
		slices.Sort(calls)
		if !slices.Equal(calls, ids) {
			t.Errorf("Arm calls = %v, want each of %v once", calls, ids)
		}
	})
}
