package fire_test

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cronsheet/fire"
	"cronsheet/store"
	"cronsheet/store/sqlite"
	"cronsheet/task"
)

// heldFinishStore is the SQLite store with its outcome writes (the group
// commit of finished runs) held until release is closed: a store writer
// that has fallen behind.
type heldFinishStore struct {
	*sqlite.Store
	release chan struct{}
	held    atomic.Int32
}

func (s *heldFinishStore) FinishRuns(ctx context.Context, recs []store.FireRecord) ([]error, error) {
	s.held.Add(int32(len(recs)))
	<-s.release
	return s.Store.FinishRuns(ctx, recs)
}

// TestDeliverySlotOnlyForTheCall: with one delivery slot, a second task's
// call goes out while the first task's outcome is still waiting for the
// store. A slot bounds calls in flight, not store work.
func TestDeliverySlotOnlyForTheCall(t *testing.T) {
	t.Parallel()
	b := setup(t)
	held := &heldFinishStore{Store: b.store, release: make(chan struct{})}
	f := fire.New(slog.New(slog.DiscardHandler), fire.Config{
		Node: node, BackoffBase: time.Millisecond, BackoffMax: 5 * time.Millisecond, MaxDeliveries: 1,
	}, held, b.execs, nil)
	var releaseOnce sync.Once
	release := func() { releaseOnce.Do(func() { close(held.release) }) }
	t.Cleanup(func() {
		release()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := f.Shutdown(ctx); err != nil {
			t.Errorf("Shutdown: %v", err)
		}
	})

	var mu sync.Mutex
	called := map[string]int{}
	b.exec.set(func(ctx context.Context, n int, d task.Delivery) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		called[d.TaskID]++
		return "ok", nil
	})
	calls := func(id string) int {
		mu.Lock()
		defer mu.Unlock()
		return called[id]
	}

	first := b.add(t, newTask("first"), node)
	second := b.add(t, newTask("second"), node)
	if out, _ := b.fire(t, f, first, slot(1)); out != fire.Fired {
		t.Fatalf("fire first = %v, want Fired", out)
	}
	eventually(t, "the first task's outcome to wait for the store", func() bool { return held.held.Load() == 1 })
	if out, _ := b.fire(t, f, second, slot(1)); out != fire.Fired {
		t.Fatalf("fire second = %v, want Fired", out)
	}
	eventually(t, "the second task's call while the first outcome waits for the store", func() bool { return calls("second") == 1 })
	if n := held.held.Load(); n < 1 {
		t.Fatalf("outcome writes held = %d, want the first still held", n)
	}

	release()
	for _, id := range []string{"first", "second"} {
		if r := b.finalRun(t, id, slot(1)); r.State != task.RunDone {
			t.Errorf("run of %s = %s, want done", id, r.State)
		}
		if n := calls(id); n != 1 {
			t.Errorf("%s called %d times, want 1", id, n)
		}
	}
}
