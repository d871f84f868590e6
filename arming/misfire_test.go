package arming

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cronsheet/executors"
	"cronsheet/fire"
	"cronsheet/internal/testwait"
	"cronsheet/store"
	"cronsheet/store/sqlite"
	"cronsheet/task"
)

// TestMisfireAllDeliversEveryMissedSlot: a task with misfire all armed
// after downtime delivers each missed slot to its target, one after
// another, under the default overlap policy (skip): the first is held at
// the hook while the others fire, and none of them is skipped.
func TestMisfireAllDeliversEveryMissedSlot(t *testing.T) {
	var mu sync.Mutex
	var keys []string
	release := make(chan struct{})
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys = append(keys, r.Header.Get(executors.HeaderIdempotencyKey))
		mu.Unlock()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer hook.Close()
	calls := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(keys)
	}

	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	httpExec, err := executors.NewHTTP(nil, executors.HTTPConfig{Allow: []string{"127.0.0.0/8"}})
	if err != nil {
		t.Fatal(err)
	}
	defer httpExec.Close()
	execs := executors.NewRegistry()
	execs.Register(task.ChannelHTTP, httpExec)
	firer := fire.New(slog.New(slog.DiscardHandler), fire.Config{Node: "n"}, st, execs, nil)
	defer firer.Shutdown(context.Background())
	if err := st.CreateTarget(t.Context(), &task.Target{ID: "hook", Kind: task.ChannelHTTP, State: task.TargetRunning,
		HTTP: &task.HTTPTarget{Method: "POST", URL: hook.URL}}); err != nil {
		t.Fatal(err)
	}
	b := &armerTest{st: st, firer: firer}
	a := b.armer(t, st) // its scheduler not started: only the missed slots fire

	const missed = 5
	// Down since the task's anchor: missed slots at +1m … +5m, the next at +6m.
	anchor := time.Now().Add(-(missed*time.Minute + 30*time.Second)).Truncate(time.Millisecond)
	claimed := b.claimedTasks(t, &task.Task{TaskID: "catchup", Scenario: "memos", TaskType: task.ChannelSMS,
		ExecuteType: task.Periodic, CronPara: "every 1m", TZ: "UTC", TTL: 30 * time.Second, Misfire: task.MisfireAll,
		State: task.StateRunning, IsEnable: 1, Anchor: anchor, Targets: []string{"hook"}})
	if err := a.Arm(t.Context(), claimed[0]); err != nil {
		t.Fatal(err)
	}
	// Arm returns once the missed slots are in the ledger; the first is
	// still held at the hook.
	testwait.For(t, 30*time.Second, "the first missed slot to reach the hook", func() bool { return len(calls()) == 1 })
	close(release)
	testwait.For(t, 30*time.Second, "every run to end", func() bool {
		runs, err := st.ListRuns(t.Context(), "catchup", time.Time{}, 100)
		return err == nil && len(runs) == missed &&
			!slices.ContainsFunc(runs, func(r *task.Run) bool { return !r.State.Final() })
	})
	runs, err := st.ListRuns(t.Context(), "catchup", time.Time{}, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if r.State != task.RunDone || r.TriggerType != task.TriggerMisfire {
			t.Errorf("run of slot %s = %s %s (%s), want a done misfire run", r.Slot.Format(time.TimeOnly), r.TriggerType, r.State, r.Error)
		}
	}
	got := calls()
	slices.Sort(got)
	if len(got) != missed || len(slices.Compact(got)) != missed {
		t.Errorf("the hook got %d calls (%d slots), want one for each of the %d missed slots: %v",
			len(calls()), len(got), missed, calls())
	}
}

// slotFault is the real store whose ledger writes holding a record of
// slot fail while down is set (every try of the group commit): before
// anything is stored (committed false), or after the write committed,
// reporting a failure all the same (committed true: the outcome-unknown
// case of a networked store).
type slotFault struct {
	*sqlite.Store
	slot      time.Time
	committed bool
	down      atomic.Bool
	failed    atomic.Int32 // writes failed
}

// hits reports whether recs hold a record of f's slot while f is down,
// counting the failure.
func (f *slotFault) hits(recs []store.FireRecord) bool {
	if !f.down.Load() || !slices.ContainsFunc(recs, func(r store.FireRecord) bool { return r.Run.Slot.Equal(f.slot) }) {
		return false
	}
	f.failed.Add(1)
	return true
}

func (f *slotFault) RecordFires(ctx context.Context, recs []store.FireRecord) ([]store.FireResult, error) {
	if !f.hits(recs) {
		return f.Store.RecordFires(ctx, recs)
	}
	if f.committed {
		if _, err := f.Store.RecordFires(ctx, recs); err != nil {
			return nil, err
		}
	}
	return nil, errors.New("store unavailable")
}

func (f *slotFault) WriteRuns(ctx context.Context, b store.RunBatch) (store.RunWrites, error) {
	if !f.hits(b.Fires) {
		return f.Store.WriteRuns(ctx, b)
	}
	if f.committed {
		if _, err := f.Store.WriteRuns(ctx, b); err != nil {
			return store.RunWrites{}, err
		}
	}
	return store.RunWrites{}, errors.New("store unavailable")
}

// TestMisfireAllFailedReplayLosesNoSlot: with misfire all, a replayed slot
// whose ledger write fails disarms the task, and the replay stops there;
// arming it again (what publish does once reconcile released it) replays
// from that slot, so every missed slot ends in the ledger exactly once.
// Failing after the write committed (every try of the group commit
// reported an error, the last one stored), the fire reads its record back
// and counts it fired: the task stays armed and the replay goes on after
// it. Either way each slot is also delivered once, the stored one by its
// own fire at once, not by the rescuer.
func TestMisfireAllFailedReplayLosesNoSlot(t *testing.T) {
	for _, committed := range []bool{false, true} {
		name := "FailBeforeWrite"
		if committed {
			name = "FailAfterCommit"
		}
		t.Run(name, func(t *testing.T) {
			const missed = 5
			// Down since the task's anchor (a whole second, so that its
			// slots are anchor + 1m … + 5m, each missed).
			anchor := time.Now().Add(-(missed*time.Minute + 30*time.Second)).Truncate(time.Second)
			fault := &slotFault{slot: anchor.Add(2 * time.Minute), committed: committed}
			fault.down.Store(true)
			b := newArmerTest(t, fire.Config{}, func(st *sqlite.Store) fire.Store { fault.Store = st; return fault }, false)
			a := b.armer(t, b.st)
			claimed := b.claimedTasks(t, &task.Task{TaskID: "catchup", Scenario: "memos", TaskType: task.ChannelSMS,
				ExecuteType: task.Periodic, CronPara: "every 1m", TZ: "UTC", TTL: 30 * time.Second, Misfire: task.MisfireAll,
				State: task.StateRunning, IsEnable: 1, Anchor: anchor})

			if err := a.Arm(t.Context(), claimed[0]); err != nil {
				t.Fatal(err)
			}
			if fault.failed.Load() == 0 {
				t.Fatal("the replay never wrote the slot meant to fail")
			}
			fault.down.Store(false)
			switch armed := slices.Contains(a.Armed(), "catchup"); {
			case !committed && armed:
				t.Fatal("a task whose replayed fire failed stays armed")
			case committed && !armed:
				t.Fatal("a task whose replayed fire was stored (an error hid the commit) was disarmed")
			}
			if !committed {
				// What publish does once reconcile released the claim.
				if err := a.Arm(t.Context(), claimed[0]); err != nil {
					t.Fatal(err)
				}
			}

			runs, err := b.st.ListRuns(t.Context(), "catchup", time.Time{}, 100)
			if err != nil {
				t.Fatal(err)
			}
			fired := map[time.Time]int{}
			for _, r := range runs {
				fired[r.Slot.UTC()]++
			}
			for k := 1; k <= missed; k++ {
				if slot := anchor.Add(time.Duration(k) * time.Minute).UTC(); fired[slot] != 1 {
					t.Errorf("missed slot %d (%s) is in the ledger %d times, want once", k, slot.Format(time.TimeOnly), fired[slot])
				}
			}
			if len(runs) != missed {
				t.Errorf("the ledger holds %d runs, want one for each of the %d missed slots", len(runs), missed)
			}
			if t.Failed() {
				return
			}
			// Counted at the executor: each slot delivered once.
			delivered := map[time.Time]int{}
			testwait.For(t, 30*time.Second, "a delivery of every missed slot", func() bool {
				for {
					select {
					case d := <-b.delivered:
						delivered[d.Slot.UTC()]++
					default:
						return len(delivered) == missed
					}
				}
			})
			for slot, n := range delivered {
				if n != 1 {
					t.Errorf("slot %s delivered %d times, want once", slot.Format(time.TimeOnly), n)
				}
			}
		})
	}
}
