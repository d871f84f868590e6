package storetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// RunCCSlots runs the conformance cases of store.CCSlots, the
// cluster-wide concurrency-group slots: the insert excludes beyond the
// limit, a release frees only its own holding, an expired holding is
// reclaimed (and its late release does not free its successor), renewals
// and a node's release, and concurrent takers never exceed the limit.
func RunCCSlots(t *testing.T, newStore func(t *testing.T) store.Product, opts ...Option) {
	t.Helper()
	cfg := configOf(opts)
	runGroups(t, newStore, []group{
		{"CCSlots", []testCase{
			{name: "InsertExclusion", fn: testCCExclusion},
			{name: "Release", fn: testCCRelease},
			{name: "ExpiredReclaim", fn: testCCReclaim},
			{name: "RenewAndNodeRelease", fn: testCCRenew},
			{name: "ConcurrentTakers", fn: func(b *bundle) {
				cs := b.ccSlots()
				RaceCCSlots(b.t, cs, cs)
			}, skip: cfg.skipConcurrency},
		}},
	})
}

func (b *bundle) ccSlots() store.CCSlots {
	return b.s
}

// take calls TakeCCSlot at at(now) with a lease to at(until).
func (b *bundle) take(group string, limit int, node string, fence int64, now, until time.Duration) (store.CCSlot, bool) {
	b.t.Helper()
	s, ok, err := b.ccSlots().TakeCCSlot(b.ctx, store.TakeCCSlotParams{Group: group, Limit: limit, Node: node,
		Holder: fmt.Sprintf("task-%d", fence), Fence: fence, LeaseUntil: at(until), Now: at(now)})
	if err != nil {
		b.t.Fatalf("TakeCCSlot(%s, limit %d, fence %d): %v", group, limit, fence, err)
	}
	return s, ok
}

func testCCExclusion(b *bundle) {
	cs := b.ccSlots()
	for _, p := range []store.TakeCCSlotParams{
		{Group: "g", Limit: 0, Node: "n1", Fence: 1},
		{Group: "g", Limit: 2, Node: "n1", Fence: 0},
		{Group: "g", Limit: 2, Node: "", Fence: 1},
	} {
		if _, _, err := cs.TakeCCSlot(b.ctx, p); !errors.Is(err, task.ErrInvalid) {
			b.t.Errorf("TakeCCSlot(%+v) = %v, want task.ErrInvalid", p, err)
		}
	}
	s0, ok0 := b.take("g", 2, "n1", 1, 0, time.Minute)
	s1, ok1 := b.take("g", 2, "n2", 2, 0, time.Minute)
	if !ok0 || !ok1 || s0.Slot != 0 || s1.Slot != 1 {
		b.t.Fatalf("first two takes of a group of 2 = (%d %v) (%d %v), want slots 0 and 1", s0.Slot, ok0, s1.Slot, ok1)
	}
	if s, ok := b.take("g", 2, "n3", 3, 0, time.Minute); ok {
		b.t.Errorf("third take of a group of 2 got slot %d, want none", s.Slot)
	}
	// Another group is independent; a larger limit opens the next index.
	if s, ok := b.take("h", 1, "n3", 4, 0, time.Minute); !ok || s.Slot != 0 {
		b.t.Errorf("take of another group = (%d %v), want slot 0", s.Slot, ok)
	}
	if s, ok := b.take("g", 3, "n3", 5, 0, time.Minute); !ok || s.Slot != 2 {
		b.t.Errorf("take with limit 3 = (%d %v), want slot 2", s.Slot, ok)
	}
	got, err := cs.ListCCSlots(b.ctx)
	if err != nil {
		b.t.Fatal(err)
	}
	want := []store.CCSlot{
		{Group: "g", Slot: 0, Node: "n1", Holder: "task-1", Fence: 1, LeaseUntil: at(time.Minute)},
		{Group: "g", Slot: 1, Node: "n2", Holder: "task-2", Fence: 2, LeaseUntil: at(time.Minute)},
		{Group: "g", Slot: 2, Node: "n3", Holder: "task-5", Fence: 5, LeaseUntil: at(time.Minute)},
		{Group: "h", Slot: 0, Node: "n3", Holder: "task-4", Fence: 4, LeaseUntil: at(time.Minute)},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		b.t.Errorf("ListCCSlots =\n%v\nwant\n%v", got, want)
	}
}

func testCCRelease(b *bundle) {
	cs := b.ccSlots()
	b.take("g", 1, "n1", 7, 0, time.Minute)
	// A release with another fence (someone else's holding) frees nothing.
	if err := cs.ReleaseCCSlot(b.ctx, "g", 0, 8); err != nil {
		b.t.Fatal(err)
	}
	if _, ok := b.take("g", 1, "n2", 9, 0, time.Minute); ok {
		b.t.Fatal("slot taken after a release with the wrong fence")
	}
	if err := cs.ReleaseCCSlot(b.ctx, "g", 0, 7); err != nil {
		b.t.Fatal(err)
	}
	if s, ok := b.take("g", 1, "n2", 9, 0, time.Minute); !ok || s.Slot != 0 {
		b.t.Fatalf("take after the release = (%d %v), want slot 0", s.Slot, ok)
	}
	// Releasing again (already released) is no error and frees nothing.
	if err := cs.ReleaseCCSlot(b.ctx, "g", 0, 7); err != nil {
		b.t.Errorf("second release: %v", err)
	}
	if _, ok := b.take("g", 1, "n3", 10, 0, time.Minute); ok {
		b.t.Error("a stale second release freed the new holder's slot")
	}
}

func testCCReclaim(b *bundle) {
	cs := b.ccSlots()
	b.take("g", 2, "dead", 1, 0, 10*time.Second)
	b.take("g", 2, "live", 2, 0, time.Minute)
	// Before the lease ends nobody gets in; after it, the expired index.
	if _, ok := b.take("g", 2, "n3", 3, 5*time.Second, time.Minute); ok {
		b.t.Fatal("slot taken while both leases run")
	}
	s, ok := b.take("g", 2, "n3", 3, 11*time.Second, time.Minute)
	if !ok || s.Slot != 0 {
		b.t.Fatalf("take after the lease of slot 0 ended = (%d %v), want slot 0", s.Slot, ok)
	}
	if _, ok := b.take("g", 2, "n4", 4, 12*time.Second, time.Minute); ok {
		b.t.Fatal("a reclaimed slot was taken twice")
	}
	// The dead holder's late release must not free its successor.
	if err := cs.ReleaseCCSlot(b.ctx, "g", 0, 1); err != nil {
		b.t.Fatal(err)
	}
	got, err := cs.ListCCSlots(b.ctx)
	if err != nil {
		b.t.Fatal(err)
	}
	if len(got) != 2 || got[0].Node != "n3" || got[0].Fence != 3 || got[1].Node != "live" {
		b.t.Errorf("slots after reclaim and stale release = %v, want n3 on 0 and live on 1", got)
	}
}

func testCCRenew(b *bundle) {
	cs := b.ccSlots()
	b.take("g", 3, "n1", 1, 0, 10*time.Second)
	b.take("g", 3, "n1", 2, 0, 30*time.Second)
	b.take("g", 3, "n2", 3, 0, 10*time.Second)
	// At 20 s n1's first slot has expired: only the second is renewed.
	n, err := cs.RenewCCSlots(b.ctx, "n1", at(20*time.Second), at(time.Hour))
	if err != nil || n != 1 {
		b.t.Fatalf("RenewCCSlots(n1) = %d, %v; want 1", n, err)
	}
	// At 40 s slot 1 still holds (renewed), 0 and 2 are reclaimable.
	for _, want := range []int{0, 2} {
		if s, ok := b.take("g", 3, "n3", int64(10+want), 40*time.Second, time.Hour); !ok || s.Slot != want {
			b.t.Fatalf("take at 40 s = (%d %v), want slot %d", s.Slot, ok, want)
		}
	}
	if _, ok := b.take("g", 3, "n4", 20, 40*time.Second, time.Hour); ok {
		b.t.Fatal("renewed slot was reclaimed")
	}
	n, err = cs.ReleaseNodeCCSlots(b.ctx, "n3")
	if err != nil || n != 2 {
		b.t.Fatalf("ReleaseNodeCCSlots(n3) = %d, %v; want 2", n, err)
	}
	got, err := cs.ListCCSlots(b.ctx)
	if err != nil {
		b.t.Fatal(err)
	}
	if len(got) != 1 || got[0].Node != "n1" || got[0].Slot != 1 || !got[0].LeaseUntil.Equal(at(time.Hour)) {
		b.t.Errorf("slots left = %v, want n1's renewed slot 1", got)
	}
}

// RaceCCSlots has many goroutines, half on a and half on b (two handles
// of one backend, or the same one twice), take slots of one group of
// limit 3 at once, each holding what it got: exactly 3 must win, each
// index once. Then, with every holding expired, they race to reclaim:
// again exactly 3 win.
func RaceCCSlots(t *testing.T, a, b store.CCSlots) {
	t.Helper()
	const limit, takers = 3, 16
	round := func(name string, now time.Time, fence0 int64) {
		var (
			mu   sync.Mutex
			wins = map[int]int{}
			wg   sync.WaitGroup
		)
		start := make(chan struct{})
		for w := range takers {
			cs := a
			if w%2 == 1 {
				cs = b
			}
			wg.Go(func() {
				<-start
				s, ok, err := cs.TakeCCSlot(t.Context(), store.TakeCCSlotParams{Group: "race", Limit: limit,
					Node: fmt.Sprintf("n%d", w), Holder: "h", Fence: fence0 + int64(w), LeaseUntil: now.Add(time.Second), Now: now})
				if err != nil {
					t.Errorf("%s: TakeCCSlot: %v", name, err)
					return
				}
				if ok {
					mu.Lock()
					wins[s.Slot]++
					mu.Unlock()
				}
			})
		}
		close(start)
		wg.Wait()
		total := 0
		for i, n := range wins {
			total += n
			if n != 1 || i < 0 || i >= limit {
				t.Errorf("%s: slot %d won %d times, want once", name, i, n)
			}
		}
		if total != limit {
			t.Errorf("%s: %d takers won a slot of a group of %d, want %d", name, total, limit, limit)
		}
	}
	round("fresh", at(0), 100)
	round("reclaim", at(time.Minute), 200)
	got, err := a.ListCCSlots(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != limit {
		t.Errorf("%d slot rows after the races, want %d: %v", len(got), limit, got)
	}
	for _, s := range got {
		if s.Fence < 200 {
			t.Errorf("slot %d still held by the expired fence %d", s.Slot, s.Fence)
		}
	}
}
