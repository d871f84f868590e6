package patrol_test

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"cronsheet/patrol"
)

// deadline bounds every wait of the Runner tests; generous, for -race.
const deadline = 30 * time.Second

// startRunner runs a Runner over b's patrols until the test ends. It returns
// the runner, a channel that receives once after each pass, and a stop
// function that cancels Run and waits for it to return.
func startRunner(t *testing.T, b *testBundle, cfg patrol.RunnerConfig) (*patrol.Runner, <-chan struct{}, func()) {
	t.Helper()
	r := patrol.NewRunner(b.logger, cfg, b.sync, b.publish, b.reconcile, b.renew)
	ctx, cancel := context.WithCancel(t.Context())
	passes := make(chan struct{})
	patrol.SetPassHook(r, func() {
		select {
		case passes <- struct{}{}:
		case <-ctx.Done():
		}
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Run(ctx)
	}()
	stop := func() {
		t.Helper()
		cancel()
		select {
		case <-done:
		case <-time.After(deadline):
			t.Fatalf("Run did not return within %s of its context ending", deadline)
		}
	}
	t.Cleanup(stop)
	return r, passes, stop
}

func waitPass(t *testing.T, passes <-chan struct{}) {
	t.Helper()
	select {
	case <-passes:
	case <-time.After(deadline):
		t.Fatalf("no patrol pass within %s", deadline)
	}
}

func TestRunner(t *testing.T) {
	t.Parallel()

	t.Run("WakeRunsPassAtOnce", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		// Neither the interval nor lease renewal comes round during the test.
		r, passes, _ := startRunner(t, b, patrol.RunnerConfig{Interval: time.Hour, RenewEvery: time.Hour})
		waitPass(t, passes) // the pass at start, with nothing to do

		b.insertRow(t, scenario, "r1", memo("m1"))
		r.Wake()
		waitPass(t, passes)
		if row := b.row(t, scenario, "r1"); row.IsFetched != 1 {
			t.Errorf("row is_fetched = %d after the woken pass, want 1", row.IsFetched)
		}
		if got := b.armer.Armed(); !slices.Equal(got, []string{"m1"}) {
			t.Errorf("armed = %v after the woken pass, want [m1]", got)
		}
	})

	t.Run("WokenPassesReconcileAtMostOncePerInterval", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		var reconciles atomic.Int32
		r, passes, _ := startRunner(t, b, patrol.RunnerConfig{Interval: time.Hour, RenewEvery: time.Hour,
			Observe: func(p string, _ time.Duration) {
				if p == "reconcile" {
					reconciles.Add(1)
				}
			}})
		waitPass(t, passes) // the pass at start reconciles
		for i := range 3 {
			b.insertRow(t, scenario, fmt.Sprint("r", i), memo(fmt.Sprint("m", i)))
			r.Wake()
			waitPass(t, passes)
		}
		if got := b.armer.Armed(); len(got) != 3 {
			t.Errorf("armed = %v after three woken passes, want 3 tasks", got)
		}
		if n := reconciles.Load(); n != 1 {
			t.Errorf("reconcile ran %d times, want once (at start; woken passes within the interval skip it)", n)
		}
	})

	t.Run("WakeNeverBlocks", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		r := patrol.NewRunner(b.logger, patrol.RunnerConfig{}, b.sync, b.publish, b.reconcile, b.renew)
		for range 3 {
			r.Wake() // no Run reads them; the extra wake-ups fold into one
		}
	})

	t.Run("RenewsLeases", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		b.seed(t, 1)
		_, passes, _ := startRunner(t, b, patrol.RunnerConfig{Interval: time.Hour, RenewEvery: 10 * time.Millisecond})
		waitPass(t, passes) // m1 claimed and armed
		b.clock.Advance(30 * time.Second)
		want := b.clock.Now().Add(lease).Truncate(time.Millisecond)

		ticker := time.NewTicker(10 * time.Millisecond)
		defer ticker.Stop()
		timeout := time.After(deadline)
		for !b.task(t, "m1").LeaseUntil.Equal(want) {
			select {
			case <-ticker.C:
			case <-timeout:
				t.Fatalf("lease_until = %s, want renewed to %s within %s", b.task(t, "m1").LeaseUntil, want, deadline)
			}
		}
	})

	t.Run("RunReturnsWhenCancelled", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		_, passes, stop := startRunner(t, b, patrol.RunnerConfig{Interval: time.Hour, RenewEvery: time.Hour})
		waitPass(t, passes)
		stop() // fails the test unless Run returns; TestMain checks for leaked goroutines
	})
}
