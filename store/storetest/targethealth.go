package storetest

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// RunTargetHealth runs the conformance cases of store.TargetHealthBook:
// failures counted in a row and reset by a success, late and folded
// outcomes, the probe kept apart from deliveries, the probe slot claims,
// a deleted target's health gone, and concurrent writers that must not
// lose a reset nor claim a slot twice.
func RunTargetHealth(t *testing.T, newStore func(t *testing.T) store.Product, opts ...Option) {
	t.Helper()
	cfg := configOf(opts)
	runGroups(t, newStore, []group{
		{"TargetHealth", []testCase{
			{name: "FailuresInARow", fn: testHealthInARow},
			{name: "LateAndFolded", fn: testHealthLate},
			{name: "ProbeApart", fn: testHealthProbe},
			{name: "Invalid", fn: testHealthInvalid},
			{name: "ProbeClaims", fn: testProbeClaims},
			{name: "DeletedTarget", fn: testHealthDeleted},
			{name: "ConcurrentResets", fn: testHealthRace, skip: cfg.skipConcurrency},
			{name: "ConcurrentClaims", fn: testProbeClaimRace, skip: cfg.skipConcurrency},
		}},
	})
}

func (b *bundle) outcome(o store.TargetOutcome) {
	b.t.Helper()
	if err := b.s.RecordTargetOutcomes(b.ctx, []store.TargetOutcome{o}); err != nil {
		b.t.Fatalf("RecordTargetOutcomes(%+v): %v", o, err)
	}
}

func fail(target string, d time.Duration, msg string) store.TargetOutcome {
	return store.TargetOutcome{Target: target, Failure: at(d), Error: msg, Failures: 1}
}

func succeed(target string, d time.Duration) store.TargetOutcome {
	return store.TargetOutcome{Target: target, Success: at(d)}
}

// health reads one target's health; ok false when it has none.
func (b *bundle) health(id string) (task.TargetHealth, bool) {
	b.t.Helper()
	m, err := b.s.TargetHealth(b.ctx, []string{id})
	if err != nil {
		b.t.Fatalf("TargetHealth(%s): %v", id, err)
	}
	h, ok := m[id]
	return h, ok
}

// wantRecord compares a record with the instants (offsets from at(0);
// -1: none), the error and the count.
func (b *bundle) wantRecord(what string, got task.HealthRecord, success, failure time.Duration, msg string, n int) {
	b.t.Helper()
	want := task.HealthRecord{LastError: msg, FailuresInARow: n}
	if success >= 0 {
		want.LastSuccess = at(success)
	}
	if failure >= 0 {
		want.LastFailure = at(failure)
	}
	if !got.LastSuccess.Equal(want.LastSuccess) || !got.LastFailure.Equal(want.LastFailure) ||
		got.LastError != want.LastError || got.FailuresInARow != want.FailuresInARow {
		b.t.Errorf("%s: health = %+v, want %+v", what, got, want)
	}
}

func testHealthInARow(b *bundle) {
	if _, ok := b.health("hook"); ok {
		b.t.Fatal("a target never delivered to has health")
	}
	b.outcome(fail("hook", time.Second, "HTTP 500"))
	h, _ := b.health("hook")
	b.wantRecord("one failure", h.HealthRecord, -1, time.Second, "HTTP 500", 1)
	b.outcome(fail("hook", 2*time.Second, "HTTP 502"))
	h, _ = b.health("hook")
	b.wantRecord("two failures", h.HealthRecord, -1, 2*time.Second, "HTTP 502", 2)
	b.outcome(succeed("hook", 3*time.Second))
	h, _ = b.health("hook")
	b.wantRecord("then a success", h.HealthRecord, 3*time.Second, 2*time.Second, "HTTP 502", 0)
	b.outcome(fail("hook", 4*time.Second, "timed out"))
	h, _ = b.health("hook")
	b.wantRecord("a failure after the success", h.HealthRecord, 3*time.Second, 4*time.Second, "timed out", 1)
	if h.Probe != nil {
		b.t.Errorf("deliveries made probe health %+v", h.Probe)
	}
}

func testHealthLate(b *bundle) {
	b.outcome(succeed("hook", 5*time.Second))
	// A failure that ended before the success, recorded after it.
	b.outcome(fail("hook", 4*time.Second, "late"))
	h, _ := b.health("hook")
	b.wantRecord("late failure", h.HealthRecord, 5*time.Second, 4*time.Second, "late", 0)
	b.outcome(fail("hook", 6*time.Second, "new"))
	h, _ = b.health("hook")
	b.wantRecord("failure after the success", h.HealthRecord, 5*time.Second, 6*time.Second, "new", 1)
	// A success older than the last failure does not reset the count.
	b.outcome(succeed("hook", 3*time.Second))
	h, _ = b.health("hook")
	b.wantRecord("late success", h.HealthRecord, 5*time.Second, 6*time.Second, "new", 1)
	// A fold: a success, then two failures after it.
	b.outcome(store.TargetOutcome{Target: "hook", Success: at(7 * time.Second), Failure: at(9 * time.Second),
		Error: "folded", Failures: 2})
	h, _ = b.health("hook")
	b.wantRecord("folded", h.HealthRecord, 7*time.Second, 9*time.Second, "folded", 2)
	// A fold of failures only adds to the count.
	b.outcome(store.TargetOutcome{Target: "hook", Failure: at(10 * time.Second), Error: "more", Failures: 3})
	h, _ = b.health("hook")
	b.wantRecord("added", h.HealthRecord, 7*time.Second, 10*time.Second, "more", 5)
}

func testHealthProbe(b *bundle) {
	b.outcome(fail("hook", time.Second, "delivery failed"))
	probe := fail("hook", 2*time.Second, "probe: HTTP 503")
	probe.Probe = true
	b.outcome(probe)
	h, _ := b.health("hook")
	b.wantRecord("deliveries", h.HealthRecord, -1, time.Second, "delivery failed", 1)
	if h.Probe == nil {
		b.t.Fatal("no probe health after a probe")
	}
	b.wantRecord("probe", *h.Probe, -1, 2*time.Second, "probe: HTTP 503", 1)
	ok := succeed("hook", 3*time.Second)
	ok.Probe = true
	b.outcome(ok)
	h, _ = b.health("hook")
	b.wantRecord("probe after success", *h.Probe, 3*time.Second, 2*time.Second, "probe: HTTP 503", 0)
	b.wantRecord("deliveries after a probe's success", h.HealthRecord, -1, time.Second, "delivery failed", 1)
	m, err := b.s.TargetHealth(b.ctx, []string{"hook", "other", "nothing"})
	if err != nil {
		b.t.Fatal(err)
	}
	if len(m) != 1 {
		b.t.Errorf("TargetHealth of hook, other, nothing = %v; want hook alone", m)
	}
	if m, err := b.s.TargetHealth(b.ctx, nil); err != nil || len(m) != 0 {
		b.t.Errorf("TargetHealth(nil) = %v, %v; want empty", m, err)
	}
}

func testHealthInvalid(b *bundle) {
	for _, o := range []store.TargetOutcome{
		{Success: at(0)},
		{Target: "hook"},
	} {
		err := b.s.RecordTargetOutcomes(b.ctx, []store.TargetOutcome{succeed("ok", 0), o})
		if !errors.Is(err, task.ErrInvalid) {
			b.t.Errorf("RecordTargetOutcomes(%+v) = %v, want task.ErrInvalid", o, err)
		}
	}
	if _, ok := b.health("ok"); ok {
		b.t.Error("a refused call recorded its valid outcome")
	}
	if _, err := b.s.ClaimTargetProbe(b.ctx, "", at(0)); !errors.Is(err, task.ErrInvalid) {
		b.t.Errorf("ClaimTargetProbe without a target = %v, want task.ErrInvalid", err)
	}
}

func (b *bundle) claimProbe(target string, slot time.Duration) bool {
	b.t.Helper()
	ok, err := b.s.ClaimTargetProbe(b.ctx, target, at(slot))
	if err != nil {
		b.t.Fatalf("ClaimTargetProbe(%s, %s): %v", target, slot, err)
	}
	return ok
}

func testProbeClaims(b *bundle) {
	steps := []struct {
		target string
		slot   time.Duration
		want   bool
	}{
		{"hook", time.Minute, true},
		{"hook", time.Minute, false},
		{"other", time.Minute, true},
		{"hook", 0, false},
		{"hook", 2 * time.Minute, true},
		{"hook", time.Minute, false},
		{"hook", 2 * time.Minute, false},
	}
	for i, s := range steps {
		if got := b.claimProbe(s.target, s.slot); got != s.want {
			b.t.Errorf("step %d: ClaimTargetProbe(%s, %s) = %v, want %v", i, s.target, s.slot, got, s.want)
		}
	}
}

func testHealthDeleted(b *bundle) {
	tg := &task.Target{ID: "hook", Kind: task.ChannelHTTP, State: task.TargetRunning,
		HTTP: &task.HTTPTarget{Method: "POST", URL: "https://example.com/h"}}
	if err := b.s.CreateTarget(b.ctx, tg); err != nil {
		b.t.Fatal(err)
	}
	b.outcome(fail("hook", time.Second, "HTTP 500"))
	b.outcome(fail("hook.x", time.Second, "HTTP 500"))
	if !b.claimProbe("hook", time.Minute) {
		b.t.Fatal("first claim refused")
	}
	if err := b.s.DeleteTarget(b.ctx, "hook"); err != nil {
		b.t.Fatal(err)
	}
	if h, ok := b.health("hook"); ok {
		b.t.Errorf("a deleted target kept its health %+v", h)
	}
	if _, ok := b.health("hook.x"); !ok {
		b.t.Error("deleting hook deleted the health of hook.x")
	}
	if !b.claimProbe("hook", time.Minute) {
		b.t.Error("a deleted target kept its probe claim")
	}
}

// testHealthRace races writers of failures with one writer of successes,
// then records a success after every failure: the count must read 0 (no
// reset lost), and before it, never below 0.
func testHealthRace(b *bundle) {
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 10 {
				o := fail("hook", time.Duration(w*10+i+1)*time.Millisecond, fmt.Sprintf("w%d", w))
				if i%3 == 2 {
					o = succeed("hook", time.Duration(w*10+i+1)*time.Millisecond)
				}
				if err := b.s.RecordTargetOutcomes(b.ctx, []store.TargetOutcome{o}); err != nil {
					b.t.Errorf("RecordTargetOutcomes: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	h, _ := b.health("hook")
	if h.FailuresInARow < 0 || h.FailuresInARow > 40 {
		b.t.Errorf("after the race: %d failures in a row", h.FailuresInARow)
	}
	b.outcome(succeed("hook", time.Second))
	h, _ = b.health("hook")
	if h.FailuresInARow != 0 || !h.LastSuccess.Equal(at(time.Second)) {
		b.t.Errorf("a success after every failure left %+v", h.HealthRecord)
	}
}

// testProbeClaimRace races claimers of each of a few slots: exactly one
// wins each.
func testProbeClaimRace(b *bundle) {
	for slot := range 3 {
		var won atomic.Int32
		var wg sync.WaitGroup
		for range 6 {
			wg.Go(func() {
				ok, err := b.s.ClaimTargetProbe(b.ctx, "hook", at(time.Duration(slot+1)*time.Minute))
				if err != nil {
					b.t.Errorf("ClaimTargetProbe: %v", err)
				}
				if ok {
					won.Add(1)
				}
			})
		}
		wg.Wait()
		if n := won.Load(); n != 1 {
			b.t.Errorf("slot %d: %d claimers won, want 1", slot, n)
		}
	}
}
