package arming

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cronsheet/fire"
	"cronsheet/internal/testwait"
	"cronsheet/store"
	"cronsheet/store/sqlite"
	"cronsheet/task"
)

// heldSlot is the real store whose ledger writes holding a record of
// slot wait until hold is closed (or their context ends) and then fail,
// every try of the group commit, while down is set: the write of one
// slot failing slowly while the writes queued after it go through once
// it has given up.
type heldSlot struct {
	*sqlite.Store
	slot   time.Time
	hold   chan struct{}
	down   atomic.Bool
	failed atomic.Int32 // writes failed
}

// hits reports whether recs hold a record of h's slot while h is down,
// waiting for hold first and counting the failure.
func (h *heldSlot) hits(ctx context.Context, recs []store.FireRecord) bool {
	if !h.down.Load() || !slices.ContainsFunc(recs, func(r store.FireRecord) bool { return r.Run.Slot.Equal(h.slot) }) {
		return false
	}
	select {
	case <-h.hold:
	case <-ctx.Done():
	}
	h.failed.Add(1)
	return true
}

func (h *heldSlot) RecordFires(ctx context.Context, recs []store.FireRecord) ([]store.FireResult, error) {
	if h.hits(ctx, recs) {
		return nil, errors.New("store unavailable")
	}
	return h.Store.RecordFires(ctx, recs)
}

func (h *heldSlot) WriteRuns(ctx context.Context, b store.RunBatch) (store.RunWrites, error) {
	if h.hits(ctx, b.Fires) {
		return store.RunWrites{}, errors.New("store unavailable")
	}
	return h.Store.WriteRuns(ctx, b)
}

// skipLog is a slog handler adding up the missed slots arming logs as
// dropped by a task's misfire policy ("missed slots skipped").
type skipLog struct{ skipped atomic.Int64 }

func (h *skipLog) Enabled(context.Context, slog.Level) bool { return true }

func (h *skipLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message == "missed slots skipped" {
		r.Attrs(func(at slog.Attr) bool {
			if at.Key == "skipped" {
				h.skipped.Add(at.Value.Int64())
			}
			return true
		})
	}
	return nil
}

func (h *skipLog) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *skipLog) WithGroup(string) slog.Handler      { return h }

// TestFailedFireLosesNoSlot: an every-second task whose ledger write of
// one slot fails (held until the next slot has started firing, then
// failed on every try of the group commit) while the store takes the
// writes after it. The next slot is not recorded while the failed fire is
// unsettled: it waits for it, and is not fired when that one did not reach
// the ledger; the task is disarmed. Armed again (what publish does once
// reconcile released it), every due slot from the first to the one before
// the next scheduled is accounted for exactly once: in the ledger once
// (fired, misfire-recorded, or skipped with a reason by the overlap
// policy), or dropped by the misfire policy and counted in its log line;
// under misfire all every one is in the ledger. Each run in the ledger is
// delivered once, counted at the executor.
func TestFailedFireLosesNoSlot(t *testing.T) {
	for _, policy := range []task.Misfire{task.MisfireSkip, task.MisfireOnce, task.MisfireAll} {
		t.Run(string(policy), func(t *testing.T) {
			t.Parallel()
			anchor := time.Now().Truncate(time.Second)
			failing := anchor.Add(3 * time.Second)
			fault := &heldSlot{slot: failing, hold: make(chan struct{})}
			fault.down.Store(true)
			b := newArmerTest(t, fire.Config{}, func(st *sqlite.Store) fire.Store { fault.Store = st; return fault }, false)
			logs := &skipLog{}
			nextStarted := make(chan struct{})
			var once sync.Once
			a, err := New(t.Context(), slog.New(logs), Config{OnFire: func(slot time.Time, _ time.Duration) {
				if slot.Equal(failing.Add(time.Second)) {
					once.Do(func() { close(nextStarted) })
				}
			}}, b.firer, b.st)
			if err != nil {
				t.Fatal(err)
			}
			a.sched.Start()
			t.Cleanup(func() { a.Shutdown() })
			claimed := b.claimedTasks(t, &task.Task{TaskID: "tick", Scenario: "memos", TaskType: task.ChannelSMS,
				ExecuteType: task.Periodic, CronPara: "every 1s", TZ: "UTC", TTL: 30 * time.Second, Misfire: policy,
				State: task.StateRunning, IsEnable: 1, Anchor: anchor})
			if err := a.Arm(t.Context(), claimed[0]); err != nil {
				t.Fatal(err)
			}

			// The failing slot's write is held until the next slot has
			// started firing, so the next slot's record comes while the
			// failed one is unsettled; then it fails every try.
			select {
			case <-nextStarted:
			case <-time.After(30 * time.Second):
				t.Fatal("the slot after the failing one never started firing")
			}
			close(fault.hold)
			testwait.For(t, 30*time.Second, "the task disarmed by its failed fire", func() bool {
				return !slices.Contains(a.Armed(), "tick")
			})
			// Shutdown waits for the bucket fires under way, so every fire
			// of the first arming has settled before the store recovers.
			if err := a.Shutdown(); err != nil {
				t.Fatal(err)
			}
			fault.down.Store(false)
			if fault.failed.Load() == 0 {
				t.Fatal("the failing slot's write never failed")
			}

			// What publish does once reconcile released the claim; this
			// armer's scheduler is not started, so only the missed slots
			// fire.
			a2, err := New(t.Context(), slog.New(logs), Config{}, b.firer, b.st)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { a2.Shutdown() })
			if err := a2.Arm(t.Context(), claimed[0]); err != nil {
				t.Fatal(err)
			}
			tk, err := b.st.GetTask(t.Context(), "tick")
			if err != nil {
				t.Fatal(err)
			}
			if tk.NextFire.IsZero() || !tk.NextFire.After(failing) {
				t.Fatalf("next fire after arming again = %s, want a slot after the failing one %s", tk.NextFire, failing)
			}
			runs, err := b.st.ListRuns(t.Context(), "tick", time.Time{}, 100)
			if err != nil {
				t.Fatal(err)
			}
			inLedger := map[time.Time]int{}
			for _, r := range runs {
				inLedger[r.Slot.UTC()]++
			}
			var due []time.Time // every slot up to the next scheduled one
			for s := anchor.Add(time.Second); s.Before(tk.NextFire); s = s.Add(time.Second) {
				due = append(due, s.UTC())
			}
			dropped := 0
			for _, s := range due {
				switch n := inLedger[s]; {
				case n == 0:
					dropped++
				case n > 1:
					t.Errorf("slot %s is in the ledger %d times, want once", s.Format(time.TimeOnly), n)
				}
			}
			for s := range inLedger {
				if !slices.Contains(due, s) {
					t.Errorf("slot %s is in the ledger, but is not due before the next fire %s", s.Format(time.TimeOnly), tk.NextFire)
				}
			}
			counted := int(logs.skipped.Load())
			if dropped != counted {
				t.Errorf("%d due slots are not in the ledger, the misfire policy counted %d skipped: %d lost (ledger %v, due %d from %s)",
					dropped, counted, dropped-counted, ledgerSlots(runs), len(due), due[0].Format(time.TimeOnly))
			}
			if policy == task.MisfireAll && dropped > 0 {
				t.Errorf("misfire all left %d due slots out of the ledger", dropped)
			}
			if policy != task.MisfireSkip && inLedger[failing.UTC()] == 0 && inLedger[tk.NextFire.Add(-time.Second).UTC()] == 0 {
				t.Errorf("misfire %s fired no missed slot after the failed one", policy)
			}
			if t.Failed() {
				return
			}

			// Counted at the executor: each run not skipped by the overlap
			// policy delivered once.
			var want int
			for _, r := range runs {
				if r.State != task.RunSkipped {
					want++
				} else if r.Error == "" {
					t.Errorf("run of slot %s skipped without a reason", r.Slot.Format(time.TimeOnly))
				}
			}
			delivered := map[time.Time]int{}
			total := 0
			drain := func() {
				for {
					select {
					case d := <-b.delivered:
						delivered[d.Slot.UTC()]++
						total++
					default:
						return
					}
				}
			}
			testwait.For(t, 30*time.Second, "a delivery of every run in the ledger", func() bool {
				drain()
				return total >= want
			})
			drain()
			for s, n := range delivered {
				if n != 1 || inLedger[s] != 1 {
					t.Errorf("slot %s delivered %d times (in the ledger %d times), want once", s.Format(time.TimeOnly), n, inLedger[s])
				}
			}
		})
	}
}

// ledgerSlots lists runs' slots as times of day, for a failure message.
func ledgerSlots(runs []*task.Run) []string {
	out := make([]string, 0, len(runs))
	for _, r := range runs {
		out = append(out, r.Slot.UTC().Format(time.TimeOnly)+" "+string(r.TriggerType))
	}
	slices.Sort(out)
	return out
}
