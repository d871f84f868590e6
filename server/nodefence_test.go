package server

import (
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
