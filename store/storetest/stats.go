package storetest

import (
	"errors"
	"fmt"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

func statsCases() []testCase {
	return []testCase{
		{name: "FireStatsBuckets", fn: testFireStats},
		{name: "FireStatsBounds", fn: testFireStatsBounds},
		{name: "RecentOutcomes", fn: testRecentOutcomes},
	}
}

func (b *bundle) runStats() store.RunStats {
	return b.s
}

// testFireStats puts runs in three 5-minute buckets of a 15-minute window
// (and one before it, one at its end): each bucket counts its fires and
// failures, skipped and rejected runs are not fires, and lag p99 is the
// largest lag of a bucket of fewer than 100 fires.
func testFireStats(b *bundle) {
	type fire struct {
		at    time.Duration // fired_at after at(0)
		lag   time.Duration // fired_at - slot
		state task.RunState
	}
	fires := []fire{
		{-time.Minute, 0, task.RunDone},    // before the window
		{0, 2 * time.Second, task.RunDone}, // bucket 0
		{time.Minute, 0, task.RunDead},     // bucket 0
		{4 * time.Minute, 500 * time.Millisecond, task.RunTimeout},
		{6 * time.Minute, 0, task.RunSkipped},                // bucket 1: not a fire
		{7 * time.Minute, 0, task.RunRejected},               // bucket 1: not a fire
		{12 * time.Minute, 3 * time.Second, task.RunRunning}, // bucket 2
		{14 * time.Minute, 0, task.RunFailed},                // bucket 2
		{15 * time.Minute, 0, task.RunDone},                  // at To: outside
	}
	for i, f := range fires {
		r := newRun(fmt.Sprintf("fs-%02d", i), fmt.Sprintf("fs-task-%d", i%3), at(f.at-f.lag), "x")
		r.FiredAt, r.State = at(f.at), f.state
		b.insertRun(r)
	}
	got, err := b.runStats().FireStats(b.ctx, store.FireStatsParams{From: at(0), To: at(15 * time.Minute), Bucket: 5 * time.Minute})
	b.noErr("FireStats", err)
	want := []store.FireBucket{
		{Start: at(0), Fires: 3, Failures: 2, LagP99MS: 2000},
		{Start: at(5 * time.Minute)},
		{Start: at(10 * time.Minute), Fires: 2, Failures: 1, LagP99MS: 3000},
	}
	if len(got.Buckets) != len(want) {
		b.t.Fatalf("buckets = %+v, want %+v", got.Buckets, want)
	}
	for i := range want {
		g := got.Buckets[i]
		if !g.Start.Equal(want[i].Start) || g.Fires != want[i].Fires || g.Failures != want[i].Failures || g.LagP99MS != want[i].LagP99MS {
			b.t.Errorf("bucket %d = %+v, want %+v", i, g, want[i])
		}
	}
	if got.Runs != 7 || got.Truncated {
		b.t.Errorf("runs read = %d (truncated %v), want 7 in the window", got.Runs, got.Truncated)
	}
}

// testFireStatsBounds: a window over 7 days, a bucket under a second, and
// more than 288 buckets are task.ErrInvalid.
func testFireStatsBounds(b *bundle) {
	for _, p := range []store.FireStatsParams{
		{From: at(0), To: at(8 * 24 * time.Hour), Bucket: time.Hour},
		{From: at(0), To: at(time.Minute), Bucket: time.Millisecond},
		{From: at(0), To: at(25 * time.Hour), Bucket: 5 * time.Minute},
		{From: at(time.Hour), To: at(0), Bucket: time.Minute},
	} {
		if _, err := b.runStats().FireStats(b.ctx, p); !errors.Is(err, task.ErrInvalid) {
			b.t.Errorf("FireStats(%v, %v, %v) = %v, want task.ErrInvalid", p.From, p.To, p.Bucket, err)
		}
	}
}

// testRecentOutcomes: each task's newest finished runs, newest first, at
// most perTask, unfinished runs left out, a task without runs absent.
func testRecentOutcomes(b *bundle) {
	states := []task.RunState{task.RunDone, task.RunDead, task.RunRunning, task.RunTimeout, task.RunDone, task.RunCancelled}
	for i, st := range states {
		r := newRun(fmt.Sprintf("ro-%02d", i), "ro-a", at(time.Duration(i)*time.Minute), "x")
		r.State = st
		if st == task.RunDead {
			r.Error = "connection refused"
		}
		b.insertRun(r)
	}
	r := newRun("ro-b", "ro-b", at(0), "x")
	r.State = task.RunDone
	b.insertRun(r)
	got, err := b.runStats().RecentOutcomes(b.ctx, []string{"ro-a", "ro-b", "ro-none"}, 3)
	b.noErr("RecentOutcomes", err)
	var a []string
	for _, o := range got["ro-a"] {
		a = append(a, o.TriggerID+":"+string(o.State))
	}
	if fmt.Sprint(a) != "[ro-05:cancelled ro-04:done ro-03:timeout]" {
		b.t.Errorf("ro-a outcomes = %v", a)
	}
	if len(got["ro-b"]) != 1 || got["ro-b"][0].State != task.RunDone || !got["ro-b"][0].FiredAt.Equal(at(0)) {
		b.t.Errorf("ro-b outcomes = %+v", got["ro-b"])
	}
	if _, ok := got["ro-none"]; ok {
		b.t.Errorf("a task without runs has outcomes: %+v", got["ro-none"])
	}
	all, err := b.runStats().RecentOutcomes(b.ctx, []string{"ro-a"}, 10)
	b.noErr("RecentOutcomes", err)
	if n := len(all["ro-a"]); n != 5 {
		b.t.Errorf("ro-a has %d finished runs, want 5", n)
	}
	if e := all["ro-a"][len(all["ro-a"])-1]; e.State != task.RunDone || all["ro-a"][3].Error != "connection refused" {
		b.t.Errorf("ro-a oldest = %+v, dead = %+v", e, all["ro-a"][3])
	}
	if _, err := b.runStats().RecentOutcomes(b.ctx, []string{"ro-a"}, 11); !errors.Is(err, task.ErrInvalid) {
		b.t.Errorf("perTask 11: %v, want task.ErrInvalid", err)
	}
}
