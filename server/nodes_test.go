package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cronsheet/store/sqlite"
	"cronsheet/task"
)

// TestNodeRegistry: a node registers and beats, shows in the status with
// its peers, a second live process with its node id refuses to start,
// and a graceful stop leaves the registry.
func TestNodeRegistry(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "cronsheet.db")
	a := setup(t, func(c *Config) { c.Store.Path = dbPath; c.NodeID = "node-a" })
	b := setup(t, func(c *Config) { c.Store.Path = dbPath; c.NodeID = "node-b" })

	var st status
	if code := b.call(t, "GET", "/api/v1/status", nil, &st); code != 200 {
		t.Fatalf("status: %d", code)
	}
	ids := map[string]bool{}
	for _, n := range st.Nodes {
		if !n.Live || n.PID == 0 || n.Incarnation == "" {
			t.Errorf("node %+v: want live, with its pid and incarnation", n)
		}
		ids[n.ID] = true
	}
	if !ids["node-a"] || !ids["node-b"] || len(st.Nodes) != 2 {
		t.Errorf("status nodes = %+v, want node-a and node-b", st.Nodes)
	}

	// A second process with a live node id: refused, with the reason.
	cfg := a.srv.cfg
	cfg.Listen = "127.0.0.1:0"
	_, err := New(context.Background(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if !errors.Is(err, task.ErrConflict) || !strings.Contains(err.Error(), `node_id "node-a" is in use`) {
		t.Fatalf("New with a live node id = %v, want a conflict naming it", err)
	}

	// A graceful stop leaves the registry, so peers take its runs at once.
	b.stop()
	st2, err := sqlite.Open(t.Context(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		nodes, err := st2.ListNodes(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if len(nodes) == 1 && nodes[0].ID == "node-a" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("registry after node-b stopped = %+v, want only node-a", nodes)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
