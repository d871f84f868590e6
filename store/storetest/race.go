package storetest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"cronsheet/store"
)

// Sizes of the races: small, because modernc's SQLite runs ~20× slower under
// -race, yet enough batches for the workers to overlap.
const (
	raceWorkers  = 8
	raceTasks    = 300
	raceClaimMax = 7
	raceSlots    = 200
)

func raceCases(cfg config) []testCase {
	return []testCase{
		{name: "ClaimersClaimEachTaskOnce", fn: testConcurrentClaimers, skip: cfg.skipConcurrency},
		// The ledger's unique index alone decides: it holds on FerretDB too.
		{name: "FirersRecordEachSlotOnce", fn: testConcurrentFirers},
	}
}

// testConcurrentClaimers lets raceWorkers nodes claim raceTasks tasks at
// once, in small batches, until none is due: every task is claimed exactly
// once, and by the node it was returned to.
func testConcurrentClaimers(b *bundle) {
	ids := b.addTasks("t", raceTasks)
	got := make([][]string, raceWorkers)
	errs := make([]error, raceWorkers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for w := range raceWorkers {
		wg.Go(func() {
			<-start
			owner := fmt.Sprintf("node-%d", w)
			for {
				claimed, err := b.s.ClaimTasks(b.ctx, store.ClaimParams{
					Owner: owner, LeaseUntil: at(time.Hour), Limit: raceClaimMax})
				if err != nil {
					errs[w] = err
					return
				}
				if len(claimed) == 0 {
					return
				}
				for _, tk := range claimed {
					got[w] = append(got[w], tk.TaskID)
				}
			}
		})
	}
	close(start)
	wg.Wait()

	seen := map[string]int{}
	for w := range raceWorkers {
		if errs[w] != nil {
			b.t.Errorf("claimer %d: %v", w, errs[w])
		}
		for _, id := range got[w] {
			if prev, dup := seen[id]; dup {
				b.t.Errorf("task %s claimed by node-%d and node-%d", id, prev, w)
			}
			seen[id] = w
		}
		// What the store records matches what each claimer got back.
		claimed, err := b.s.ListClaimed(b.ctx, fmt.Sprintf("node-%d", w))
		b.noErr("ListClaimed", err)
		var listed []string
		for _, c := range claimed {
			listed = append(listed, c.TaskID)
		}
		slices.Sort(listed)
		slices.Sort(got[w])
		if !slices.Equal(listed, got[w]) {
			b.t.Errorf("node-%d: ListClaimed has %d tasks, ClaimTasks returned %d", w, len(listed), len(got[w]))
		}
	}
	for _, id := range ids {
		if _, ok := seen[id]; !ok {
			b.t.Errorf("task %s was never claimed", id)
		}
	}
	b.t.Logf("%d tasks claimed by %d claimers", len(seen), raceWorkers)
}

// testConcurrentFirers lets raceWorkers firers insert the same raceSlots
// ledger keys, each in its own order: every key is recorded exactly once,
// by the firer that was told it won.
func testConcurrentFirers(b *bundle) {
	const taskID = "t-race"
	won := make([][]string, raceWorkers)
	errs := make([]error, raceWorkers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for w := range raceWorkers {
		wg.Go(func() {
			order := rand.New(rand.NewPCG(uint64(w), 42)).Perm(raceSlots)
			<-start
			for _, i := range order {
				r := newRun(fmt.Sprintf("w%d-s%03d", w, i), taskID, at(time.Duration(i)*time.Minute), "email")
				ok, err := b.s.InsertRun(b.ctx, r)
				if err != nil {
					errs[w] = err
					return
				}
				if ok {
					won[w] = append(won[w], r.TriggerID)
				}
			}
		})
	}
	close(start)
	wg.Wait()

	winners := map[string]bool{}
	wins := 0
	for w := range raceWorkers {
		if errs[w] != nil {
			b.t.Errorf("firer %d: %v", w, errs[w])
		}
		wins += len(won[w])
		for _, id := range won[w] {
			winners[id] = true
		}
	}
	if wins != raceSlots {
		b.t.Errorf("InsertRun returned true %d times, want %d", wins, raceSlots)
	}
	runs, err := b.s.ListRuns(b.ctx, taskID, time.Time{}, 2*raceSlots)
	b.noErr("ListRuns", err)
	if len(runs) != raceSlots {
		b.t.Errorf("ledger holds %d runs, want %d", len(runs), raceSlots)
	}
	slots := map[int64]bool{}
	for _, r := range runs {
		if !winners[r.TriggerID] {
			b.t.Errorf("run %s at %v is in the ledger, but its firer was told it lost", r.TriggerID, r.Slot)
		}
		slots[r.Slot.UnixMilli()] = true
	}
	if len(slots) != raceSlots {
		b.t.Errorf("ledger covers %d distinct slots, want %d", len(slots), raceSlots)
	}
}
