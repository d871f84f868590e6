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
// that has fallen behind. It is not a store.RunWriter (whose one
// pipeline would hold the fire records behind the outcomes too): records
// and outcomes have group commits of their own, as on such a store.
type heldFinishStore struct {
	fire.Store
	st      *sqlite.Store
	release chan struct{}
	held    atomic.Int32
}

func (s *heldFinishStore) FinishRuns(ctx context.Context, recs []store.FireRecord) ([]error, error) {
	s.held.Add(int32(len(recs)))
	<-s.release
	return s.st.FinishRuns(ctx, recs)
}

// TestDeliverySlotOnlyForTheCall: with one delivery slot, a second task's
// call goes out while the first task's outcome is still waiting for the
// store. A slot bounds calls in flight, not store work.
func TestDeliverySlotOnlyForTheCall(t *testing.T) {
	t.Parallel()
	b := setup(t)
	held := &heldFinishStore{Store: b.store, st: b.store.(*sqlite.Store), release: make(chan struct{})}
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

// TestLongSlotWaitReassertsTheRun: a fresh fire that waited long for a
// delivery slot re-asserts its run (a fenced write) before calling; a run
// another node took over meanwhile is not sent a second time from here.
func TestLongSlotWaitReassertsTheRun(t *testing.T) {
	t.Parallel()
	b := setup(t)
	f := fire.New(slog.New(slog.DiscardHandler), fire.Config{
		Node: node, BackoffBase: time.Millisecond, BackoffMax: 5 * time.Millisecond, MaxDeliveries: 1,
	}, b.store, b.execs, nil)
	g := newGate()
	var mu sync.Mutex
	called := map[string]int{}
	b.exec.set(func(ctx context.Context, n int, d task.Delivery) (string, error) {
		mu.Lock()
		called[d.TaskID]++
		mu.Unlock()
		if d.TaskID == "holder" {
			return "", g.wait(ctx, n)
		}
		return "ok", nil
	})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = f.Shutdown(ctx)
	})

	holder := b.add(t, newTask("holder"), node)
	waiter := b.add(t, newTask("waiter"), node)
	if out, _ := b.fire(t, f, holder, slot(1)); out != fire.Fired {
		t.Fatalf("fire holder = %v", out)
	}
	g.awaitStart(t) // the one slot is taken
	if out, _ := b.fire(t, f, waiter, slot(1)); out != fire.Fired {
		t.Fatalf("fire waiter = %v", out)
	}
	// While the waiter waits for the slot, another node takes its run over.
	r := b.run(t, "waiter", slot(1))
	if _, err := b.store.TakeOverRun(t.Context(), store.TakeOverParams{TriggerID: r.TriggerID, Fence: r.Fence, Deadline: r.Deadline, Node: "node-b"}); err != nil {
		t.Fatalf("TakeOverRun: %v", err)
	}
	time.Sleep(1500 * time.Millisecond) // past the long wait
	close(g.release)
	b.finalRun(t, "holder", slot(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := f.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if called["waiter"] != 0 {
		t.Errorf("the taken-over run was called %d times here, want 0", called["waiter"])
	}
	if got := b.run(t, "waiter", slot(1)); got.Node != "node-b" {
		t.Errorf("waiter's run owned by %q, want node-b (untouched)", got.Node)
	}
}
