package server

import (
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"cronsheet/config"
	"cronsheet/executors"
	"cronsheet/store"
	"cronsheet/store/sqlite"
)

// TestStandingLostToAnotherProcess: a process whose node id another
// process took (it registered over this one's stale entry while this one
// was frozen) loses its standing on its first check after resuming: it
// beats before it delivers, learns the id is taken, and closes lost.
func TestStandingLostToAnotherProcess(t *testing.T) {
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const lease = time.Minute
	r := newNodeRegistry(slog.New(slog.DiscardHandler), st, "me", lease, time.Now, nil)
	if err := r.register(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := r.standing(t.Context()); err != nil {
		t.Fatalf("standing of a registered process = %v, want nil", err)
	}
	// The process freezes past its lease; another registers the id.
	r.fence.mu.Lock()
	r.fence.beatOK = time.Now().Add(-2 * lease)
	r.fence.mu.Unlock()
	now := time.Now()
	other := store.Node{ID: "me", Incarnation: "other", Host: "elsewhere", StartedAt: now, BeatAt: now}
	if err := st.RegisterNode(t.Context(), other, now.Add(lease)); err != nil { // this one counts as stale
		t.Fatalf("the other process's registration: %v", err)
	}
	err = r.standing(t.Context())
	if !errors.Is(err, errNodeLost) || !strings.Contains(err.Error(), `node_id "me" was taken by another process`) {
		t.Fatalf("standing after the id was taken = %v, want errNodeLost naming the node id", err)
	}
	select {
	case <-r.fence.lost:
	default:
		t.Fatal("lost is not closed")
	}
	// Lost for good, whatever the beats do later.
	if err := r.standing(t.Context()); !errors.Is(err, errNodeLost) {
		t.Errorf("standing again = %v, want errNodeLost", err)
	}
}

// TestGateCallsNoHostAfterNodeIDLost: a delivery waiting at the gate (for
// its cc group's one slot) when the process loses its node id calls no
// host, even though the slot frees during the graceful shutdown that
// follows. Counted at the receiver by trigger id: only the call in flight
// before the loss arrives.
func TestGateCallsNoHostAfterNodeIDLost(t *testing.T) {
	var mu sync.Mutex
	calls := map[string]int{} // by X-Cronsheet-Trigger-Id
	held := make(chan struct{})
	hook := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		mu.Lock()
		calls[r.Header.Get(executors.HeaderTriggerID)]++
		mu.Unlock()
		select {
		case <-held:
		case <-r.Context().Done():
		}
	}))
	release := sync.OnceFunc(func() { close(held) })
	defer hook.Close()
	defer release() // before hook.Close, which waits for the calls
	total := func() (n int) {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range calls {
			n += c
		}
		return n
	}
	b := setup(t, func(c *config.Config) {
		c.HTTP.Allow = []string{"127.0.0.0/8"}
		c.ShutdownTimeout = time.Minute // the shutdown waits for the held call, whatever the machine's pace
	})
	batch := make([]map[string]any, 2)
	for i := range batch {
		batch[i] = map[string]any{"method": "POST", "name": hook.URL + "/one", "cc": map[string]any{"group": "one", "limit": 1}}
	}
	if code := b.call(t, "POST", "/api/v1/jobs", batch, nil); code != http.StatusOK {
		t.Fatalf("submit jobs: status %d", code)
	}
	eventually(t, "the first job's call at the hook", func() bool { return total() == 1 })
	eventually(t, "the second job waiting for its cc group", func() bool {
		return b.srv.admission.Stats().Groups["one"].Waiting == 1
	})

	// Another process registers this node id (it judges this one stale);
	// this one learns so at its next heartbeat and shuts down.
	now := time.Now()
	other := store.Node{ID: b.srv.cfg.NodeID, Incarnation: "other", Host: "elsewhere", StartedAt: now, BeatAt: now}
	if err := b.srv.store.RegisterNode(t.Context(), other, now.Add(time.Hour)); err != nil {
		t.Fatalf("the other process's registration: %v", err)
	}
	eventually(t, "the node to learn its id was taken", func() bool { return b.srv.nodes.fence.lostErr() != nil })
	b.runEnded = func(err error) bool { return err != nil && errors.Is(err, b.srv.nodes.fence.lostErr()) }

	// The first call ends: its cc slot frees during the shutdown.
	release()
	b.stop()

	mu.Lock()
	defer mu.Unlock()
	if len(calls) != 1 {
		t.Errorf("the hook got calls of %d trigger ids %v, want only the one in flight before the node id was lost", len(calls), calls)
	}
	for id, n := range calls {
		if n != 1 {
			t.Errorf("trigger %s called %d times, want once", id, n)
		}
	}
}
