package patrol_test

import (
	"cronsheet/store"
	"slices"
	"strings"
	"testing"
	"time"

	"cronsheet/patrol"
)

func TestReconcile(t *testing.T) {
	t.Parallel()

	t.Run("DisabledTaskDisarmedAndReleased", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.seed(t, 2)
		b.runPublish(t, b.publish)
		// As the armer leaves it: a next fire shown on the task and row.
		if err := b.store.SetTaskStatus(t.Context(), store.TaskStatusParams{TaskID: "m1", NextFire: start.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		off := memo("m1")
		off["active"] = 0
		b.editRow(t, "r1", off)
		b.runSync(t, b.sync)

		if res := b.runReconcile(t, b.reconcile); res != (patrol.ReconcileResult{Disarmed: 1}) {
			t.Fatalf("reconcile = %+v, want 1 disarmed", res)
		}
		if tk, row := b.task(t, "m1"), b.row(t, scenario, "r1"); !tk.NextFire.IsZero() || !row.NextFire.IsZero() {
			t.Errorf("switched off: next fire %v on the task, %v on the row; want none", tk.NextFire, row.NextFire)
		}
		if got := b.armer.Armed(); !slices.Equal(got, []string{"m2"}) {
			t.Errorf("armed = %v, want [m2]", got)
		}
		if tk := b.task(t, "m1"); tk.IsClaimed != 0 || tk.ClaimedBy != "" {
			t.Errorf("m1 claim = %d by %q, want released", tk.IsClaimed, tk.ClaimedBy)
		}
		if res := b.runPublish(t, b.publish); res != (patrol.PublishResult{}) {
			t.Errorf("publish = %+v, want the disabled task left alone", res)
		}
		if res := b.runReconcile(t, b.reconcile); res != (patrol.ReconcileResult{}) {
			t.Errorf("second reconcile = %+v, want nothing to do", res)
		}
	})

	t.Run("ClaimedButNotArmedIsReleased", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.seed(t, 2)
		b.runPublish(t, b.publish)

		// This node restarts: same node id, an empty scheduler.
		restarted := newRecordingArmer()
		r := b.newReconcile(nodeA, restarted)
		if res := b.runReconcile(t, r); res != (patrol.ReconcileResult{Released: 2}) {
			t.Fatalf("reconcile = %+v, want 2 released", res)
		}
		for _, id := range []string{"m1", "m2"} {
			if tk := b.task(t, id); tk.IsClaimed != 0 {
				t.Errorf("task %s still claimed", id)
			}
		}
		p := b.newPublish(nodeA, restarted, 0)
		if res := b.runPublish(t, p); res != (patrol.PublishResult{Claimed: 2, Armed: 2}) {
			t.Fatalf("publish = %+v, want both re-claimed and armed", res)
		}
		if got := restarted.Armed(); !slices.Equal(got, []string{"m1", "m2"}) {
			t.Errorf("armed = %v, want [m1 m2]", got)
		}
	})

	t.Run("ScheduleEditDropsOldArming", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.seed(t, 1)
		b.runPublish(t, b.publish)
		fields := memo("m1")
		fields["when"] = "every 5m"
		b.editRow(t, "r1", fields)
		b.runSync(t, b.sync) // resets the claim

		if res := b.runReconcile(t, b.reconcile); res != (patrol.ReconcileResult{Dropped: 1}) {
			t.Fatalf("reconcile = %+v, want 1 dropped", res)
		}
		if got := b.armer.Armed(); len(got) != 0 {
			t.Errorf("armed = %v, want the old schedule gone", got)
		}
		if res := b.runPublish(t, b.publish); res != (patrol.PublishResult{Claimed: 1, Armed: 1}) {
			t.Fatalf("publish = %+v, want the new schedule armed", res)
		}
		b.armer.mu.Lock()
		cron := b.armer.armed["m1"].CronPara
		b.armer.mu.Unlock()
		if cron != "every 5m" {
			t.Errorf("armed cron_para = %q, want every 5m", cron)
		}
	})

	t.Run("LeaseExpiredAndTakenOver", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.seed(t, 1)
		b.runPublish(t, b.publish) // node A holds m1

		// Node A dies; once its lease has ended node B frees and takes m1.
		b.clock.Advance(lease + time.Second)
		armerB := newRecordingArmer()
		rB := b.newReconcile(nodeB, armerB)
		if res := b.runReconcile(t, rB); res != (patrol.ReconcileResult{Expired: 1}) {
			t.Fatalf("node B reconcile = %+v, want 1 expired", res)
		}
		if res := b.runPublish(t, b.newPublish(nodeB, armerB, 0)); res != (patrol.PublishResult{Claimed: 1, Armed: 1}) {
			t.Fatalf("node B publish = %+v, want m1 claimed and armed", res)
		}
		if tk := b.task(t, "m1"); tk.ClaimedBy != nodeB {
			t.Errorf("m1 claimed by %q, want %s", tk.ClaimedBy, nodeB)
		}

		// Node A comes back: it drops m1 and does not touch B's claim.
		if res := b.runReconcile(t, b.reconcile); res != (patrol.ReconcileResult{Dropped: 1}) {
			t.Fatalf("node A reconcile = %+v, want 1 dropped", res)
		}
		if got := b.armer.Armed(); len(got) != 0 {
			t.Errorf("node A armed = %v, want none", got)
		}
		if got := armerB.Armed(); !slices.Equal(got, []string{"m1"}) {
			t.Errorf("node B armed = %v, want [m1]", got)
		}
		if tk := b.task(t, "m1"); tk.IsClaimed != 1 || tk.ClaimedBy != nodeB {
			t.Errorf("m1 claim = %d by %q, want still node B's", tk.IsClaimed, tk.ClaimedBy)
		}
	})

	t.Run("DeletedRowPurged", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.seed(t, 2)
		b.runPublish(t, b.publish)
		if err := b.store.DeleteRow(t.Context(), scenario, "r1"); err != nil {
			t.Fatalf("delete row: %v", err)
		}

		if res := b.runReconcile(t, b.reconcile); res != (patrol.ReconcileResult{Disarmed: 1, Purged: 1}) {
			t.Fatalf("reconcile = %+v, want 1 disarmed and purged", res)
		}
		if got := b.armer.Armed(); !slices.Equal(got, []string{"m2"}) {
			t.Errorf("armed = %v, want [m2]", got)
		}
		if got := b.armer.disarmCalls(); !slices.Equal(got, []string{"m1"}) {
			t.Errorf("Disarm calls = %v, want [m1]", got)
		}
		b.noTask(t, "m1")
		if tk := b.task(t, "m2"); tk.IsClaimed != 1 || tk.IsEnable != 1 {
			t.Errorf("m2: is_claimed=%d is_enable=%d, want untouched", tk.IsClaimed, tk.IsEnable)
		}
	})
}

func TestRenew(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.seed(t, 1)
	other := b.newPublish(nodeB, newRecordingArmer(), 0)
	b.runPublish(t, other) // node B holds m1
	b.insertRow(t, scenario, "r2", memo("m2"))
	b.insertRow(t, scenario, "r3", memo("m3"))
	b.runSync(t, b.sync)
	b.runPublish(t, b.publish) // node A holds m2 and m3
	leaseB := b.task(t, "m1").LeaseUntil

	b.clock.Advance(30 * time.Second)
	n, err := b.renew.RunOnce(t.Context())
	if err != nil || n != 2 {
		t.Fatalf("renew = %d, %v; want 2 leases renewed", n, err)
	}
	want := b.clock.Now().Add(lease).Truncate(time.Millisecond)
	for _, id := range []string{"m2", "m3"} {
		if got := b.task(t, id).LeaseUntil; !got.Equal(want) {
			t.Errorf("task %s lease_until = %s, want %s", id, got, want)
		}
	}
	if got := b.task(t, "m1").LeaseUntil; !got.Equal(leaseB) {
		t.Errorf("node B's lease_until = %s, want it untouched at %s", got, leaseB)
	}
}

// TestStoreErrors checks that each patrol returns, with its context, the
// error of a store that has gone away.
func TestStoreErrors(t *testing.T) {
	t.Parallel()
	b := setup(t)
	if err := b.store.Close(); err != nil {
		t.Fatalf("close store: %v", err)
	}
	checks := []struct {
		name string
		run  func() error
		want string
	}{
		{"Sync", func() error { _, err := b.sync.RunOnce(t.Context()); return err }, "list unfetched rows: "},
		{"Publish", func() error { _, err := b.publish.RunOnce(t.Context()); return err }, "claim tasks: "},
		{"Reconcile", func() error { _, err := b.reconcile.RunOnce(t.Context()); return err }, "list claimed tasks: "},
		{"Renew", func() error { _, err := b.renew.RunOnce(t.Context()); return err }, "renew leases: "},
	}
	for _, c := range checks {
		if err := c.run(); err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s on a closed store: error %v, want one starting %q", c.name, err, c.want)
		}
	}
}
