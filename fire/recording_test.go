package fire_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"cronsheet/fire"
	"cronsheet/store"
	"cronsheet/store/sqlite"
	"cronsheet/task"
)

// afterRecord is the real store calling after once its first RecordFires
// (or WriteRuns with records) has committed, before the records' answer
// reaches the Firer.
type afterRecord struct {
	*sqlite.Store
	once  sync.Once
	after func()
}

func (a *afterRecord) RecordFires(ctx context.Context, recs []store.FireRecord) ([]store.FireResult, error) {
	res, err := a.Store.RecordFires(ctx, recs)
	if err == nil {
		a.once.Do(a.after)
	}
	return res, err
}

func (a *afterRecord) WriteRuns(ctx context.Context, b store.RunBatch) (store.RunWrites, error) {
	res, err := a.Store.WriteRuns(ctx, b)
	if err == nil && len(b.Fires) > 0 {
		a.once.Do(a.after)
	}
	return res, err
}

// TestResumeWhileRecorded: a Resume that reads a run this process has just
// recorded, before the fire has taken it in hand (the task armed at the
// moment it fires or is triggered), leaves it to that fire: the run is
// delivered once. The runs being recorded are marked so that the Resume
// does not take the run over as "this node's, not in flight here" and
// deliver it while the fire delivers it too.
func TestResumeWhileRecorded(t *testing.T) {
	t.Parallel()
	b := setup(t)
	armed := b.add(t, newTask("racing"), node)
	st := &afterRecord{Store: b.store.(*sqlite.Store)}
	f := fire.New(slog.New(slog.DiscardHandler), fire.Config{
		Node: node, BackoffBase: time.Millisecond, BackoffMax: 5 * time.Millisecond,
	}, st, b.execs, nil)
	resumed := make(chan error, 1)
	st.after = func() {
		n, err := f.Resume(t.Context(), armed)
		if err == nil && n != 1 {
			t.Errorf("Resume = %d unfinished runs, want the one just recorded", n)
		}
		// Give a take-over, had there been one, the time to deliver and
		// end before the fire goes on.
		deadline := time.Now().Add(2 * time.Second)
		for len(b.exec.seen()) == 0 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		time.Sleep(200 * time.Millisecond)
		resumed <- err
	}
	if out, _ := b.fire(t, f, armed, slot(1)); out != fire.Fired {
		t.Fatalf("Fire = %v, want fired", out)
	}
	if err := <-resumed; err != nil {
		t.Fatalf("Resume: %v", err)
	}
	shutdown(t, f)
	if calls := b.exec.seen(); len(calls) != 1 {
		t.Errorf("the run was delivered %d times, want once", len(calls))
	}
	if r := b.run(t, "racing", slot(1)); r.State != task.RunDone || r.Fence != 1 {
		t.Errorf("run = state %s fence %d, want done by its fire, never taken over", r.State, r.Fence)
	}
}
