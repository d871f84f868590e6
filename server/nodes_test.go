package server

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"cronsheet/config"
	"cronsheet/store"
	"cronsheet/store/sqlite"
	"cronsheet/task"
)

// TestNodeRegistry: a node registers and beats, shows in the status with
// its peers, a second live process with its node id refuses to start,
// and a graceful stop leaves the registry.
func TestNodeRegistry(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "cronsheet.db")
	a := setup(t, func(c *config.Config) { c.Store.Path = dbPath; c.NodeID = "node-a" })
	b := setup(t, func(c *config.Config) { c.Store.Path = dbPath; c.NodeID = "node-b" })

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
	st2, err := openStore(t.Context(), a.srv.cfg.Store) // the test driver's store
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

// flakyNodes is the real registry whose beats fail while down is set.
type flakyNodes struct {
	*sqlite.Store
	down bool
}

func (f *flakyNodes) BeatNode(ctx context.Context, n store.Node) error {
	if f.down {
		return errors.New("store unavailable")
	}
	return f.Store.BeatNode(ctx, n)
}

// TestLivenessAfterOutage: a peer's stale heartbeat means it is gone only
// once this node has itself reached the store for a whole lease: right
// after a store outage (or a start) every registered peer counts as
// alive, so no run is taken from a node that was merely cut off too.
func TestLivenessAfterOutage(t *testing.T) {
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	const lease = 30 * time.Second
	peer := store.Node{ID: "peer", Incarnation: "p1", StartedAt: now, BeatAt: now}
	if err := st.RegisterNode(t.Context(), peer, now.Add(-lease)); err != nil {
		t.Fatal(err)
	}
	nodes := &flakyNodes{Store: st}
	r := newNodeRegistry(slog.New(slog.DiscardHandler), nodes, "me", lease, clock, nil)
	if err := r.register(t.Context()); err != nil {
		t.Fatal(err)
	}
	liveSet := func() map[string]bool {
		r.mu.Lock()
		r.cachedAt = time.Time{} // no cache
		r.mu.Unlock()
		p, err := r.peers(t.Context(), time.Time{})
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]bool{}
		for _, id := range p.Live {
			m[id] = true
		}
		return m
	}
	// The peer stops beating; this node beats on.
	for range 4 {
		now = now.Add(10 * time.Second)
		if err := r.beat(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if live := liveSet(); live["peer"] || !live["me"] {
		t.Fatalf("after 40s without the peer's beat: live %v, want me only", live)
	}
	// A store outage: nobody beats for 40s.
	nodes.down = true
	for range 4 {
		now = now.Add(10 * time.Second)
		_ = r.beat(t.Context())
	}
	nodes.down = false
	now = now.Add(time.Second)
	if err := r.beat(t.Context()); err != nil {
		t.Fatal(err)
	}
	if live := liveSet(); !live["peer"] || r.judging() {
		t.Errorf("right after the outage: live %v, judging %t; want every node alive, not judging", live, r.judging())
	}
	now = now.Add(lease)
	if err := r.beat(t.Context()); err != nil {
		t.Fatal(err)
	}
	if live := liveSet(); live["peer"] || !r.judging() {
		t.Errorf("a lease after the outage: live %v, judging %t; want the silent peer gone", live, r.judging())
	}
}

// TestPeersGoneOrQuiet: a peer that stopped beating is gone only when its
// entry names this boot of this kernel and this PID namespace, and a pid
// that no longer exists or now names a process started at another time
// (it exited: its runs are taken at once); a peer on another host, a
// process here that still exists (stalled), and a process of another
// container sharing this hostname (host network) but not the PID
// namespace, whose pid means nothing here, are quiet (what they have in
// flight is left to them until their deadline).
func TestPeersGoneOrQuiet(t *testing.T) {
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	const lease = 30 * time.Second
	host, _ := os.Hostname()
	exited := exec.Command("true")
	if err := exited.Run(); err != nil {
		t.Fatal(err)
	}
	self := procRoot("/proc").selfIdentity()
	if !self.complete() {
		t.Skip("no /proc identity (boot id, pid namespace, start time) on this system")
	}
	inc := func(random string, id procIdentity) string { return incarnationOf(random, id) }
	otherNS := self
	otherNS.PIDNS = "pid:[1]"
	reused := self
	reused.Start++
	peers := []store.Node{
		{ID: "exited-here", Incarnation: inc("a", self), Host: host, PID: exited.Process.Pid},
		{ID: "stalled-here", Incarnation: inc("b", self), Host: host, PID: os.Getpid()},
		{ID: "elsewhere", Incarnation: "c", Host: "another-host", PID: exited.Process.Pid},
		{ID: "beating", Incarnation: "d", Host: "another-host", PID: 7},
		{ID: "other-container", Incarnation: inc("f", otherNS), Host: host, PID: exited.Process.Pid},
		{ID: "pid-reused", Incarnation: inc("g", reused), Host: host, PID: os.Getpid()},
		{ID: "no-identity", Incarnation: "h", Host: host, PID: exited.Process.Pid},
	}
	for _, p := range peers {
		p.StartedAt, p.BeatAt = now, now
		if err := st.RegisterNode(t.Context(), p, now.Add(-lease)); err != nil {
			t.Fatal(err)
		}
	}
	r := newNodeRegistry(slog.New(slog.DiscardHandler), st, "me", lease, clock, nil)
	if err := r.register(t.Context()); err != nil {
		t.Fatal(err)
	}
	// A lease and more later: only "beating" and this node beat.
	now = now.Add(lease + time.Second)
	if err := r.beat(t.Context()); err != nil {
		t.Fatal(err)
	}
	r.healthySince = now.Add(-lease) // this node has reached the store for a lease
	beating := peers[3]
	beating.BeatAt = now
	if err := st.BeatNode(t.Context(), beating); err != nil {
		t.Fatal(err)
	}
	p, err := r.peers(t.Context(), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(p.Live)
	slices.Sort(p.Quiet)
	if want := []string{"beating", "me"}; !slices.Equal(p.Live, want) {
		t.Errorf("live = %v, want %v", p.Live, want)
	}
	if want := []string{"elsewhere", "no-identity", "other-container", "stalled-here"}; !slices.Equal(p.Quiet, want) {
		t.Errorf("quiet = %v, want %v (exited-here and pid-reused are gone)", p.Quiet, want)
	}

	// A node registering after that read: the cached view does not know
	// it; a view asked for as of now does.
	late := store.Node{ID: "late", Incarnation: "e", Host: "another-host", PID: 8, StartedAt: now, BeatAt: now}
	if err := st.RegisterNode(t.Context(), late, now.Add(-lease)); err != nil {
		t.Fatal(err)
	}
	if p, err := r.peers(t.Context(), time.Time{}); err != nil || slices.Contains(p.Live, "late") {
		t.Errorf("cached view = %v, %v; want it without the late node (read before it registered)", p, err)
	}
	if p, err := r.peers(t.Context(), time.Now()); err != nil || !slices.Contains(p.Live, "late") {
		t.Errorf("view read as of now = %v, %v; want the late node live", p, err)
	}
}

// TestGracefulStopWithManyClaims: a node holding thousands of claims
// (jobs due an hour ahead, the arming window off) gives them all up and leaves the registry
// when it stops, so the same node id starts again at once and arms them
// again. The release must fit in the stop's budget (one transaction per
// task would not, at 20k claims), else the registry entry left behind
// refuses the next start until it lapses.
func TestGracefulStopWithManyClaims(t *testing.T) {
	n := 4000
	if testDriver() == "mongo" {
		n = 100 // FerretDB claims one task per round trip: 4000 take over a minute
	}
	dbPath := filepath.Join(t.TempDir(), "cronsheet.db")
	// The arming window off: with it, jobs due an hour ahead wait in the
	// store, held by no node, and there would be no claims to give up.
	cfg := func(c *config.Config) {
		c.Store.Path = dbPath
		c.NodeID = "node-a"
		c.HTTP.Allow = []string{"127.0.0.0/8"}
		c.Fire.ArmWindow = 0
	}
	a := setup(t, cfg)
	// Opened before the node gets busy: opening writes (the schema), and
	// would wait behind the node's arming of thousands of tasks.
	st, err := openStore(t.Context(), a.srv.cfg.Store) // the test driver's store
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	due := time.Now().Add(time.Hour).UTC()
	for start := 0; start < n; start += 500 {
		var body []map[string]any
		for i := start; i < min(start+500, n); i++ {
			body = append(body, map[string]any{"method": "POST", "name": "http://127.0.0.1:9/hook",
				"at": due.Add(time.Duration(i) * time.Second).Format(time.RFC3339)})
		}
		var answer []struct {
			Job *struct {
				ID string `json:"id"`
			} `json:"job"`
		}
		code := a.call(t, "POST", "/api/v1/jobs", body, &answer)
		if code >= 300 || len(answer) != len(body) || answer[0].Job == nil {
			t.Fatalf("submit a batch: %d, %d answers", code, len(answer))
		}
	}
	claimed := func(owner string) int {
		t.Helper()
		cs, err := st.ListClaimed(t.Context(), owner)
		if err != nil {
			t.Fatal(err)
		}
		return len(cs)
	}
	waitClaims := func(owner string, want int) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for got := claimed(owner); got != want; got = claimed(owner) {
			if time.Now().After(deadline) {
				t.Fatalf("%s holds %d claims, want %d", owner, got, want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitClaims("node-a", n)

	a.stop()
	if got := claimed("node-a"); got != 0 {
		t.Errorf("after a graceful stop node-a still holds %d of %d claims", got, n)
	}
	nodes, err := st.ListNodes(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 0 {
		t.Errorf("registry after the stop = %+v, want empty", nodes)
	}

	// The same node id starts again at once and takes them all back.
	setup(t, cfg)
	waitClaims("node-a", n)
}

// TestStatusKilledNodeHoldsNothing: a node killed a while ago (its entry
// left in the registry with the count of its last beat, 5, and its claims
// freed when its leases ran out) is listed not live, holding 0, beside
// the live node that took over (a node not live is listed with its claims
// in the store). Before, the status showed the dead node's last beat: held 5.
func TestStatusKilledNodeHoldsNothing(t *testing.T) {
	b := setup(t, nil)
	ago := time.Now().Add(-time.Minute)
	dead := store.Node{ID: "killed", Incarnation: "i-old", Host: "elsewhere", PID: 1, StartedAt: ago.Add(-time.Hour),
		BeatAt: ago, Held: 5}
	if err := b.srv.store.RegisterNode(t.Context(), dead, time.Now()); err != nil {
		t.Fatal(err)
	}
	nodes := func() map[string]statusNode {
		var st status
		if code := b.call(t, "GET", "/api/v1/status", nil, &st); code != http.StatusOK {
			t.Fatalf("status: %d", code)
		}
		out := map[string]statusNode{}
		for _, n := range st.Nodes {
			out[n.ID] = n
		}
		return out
	}
	got := nodes()
	if n, ok := got["killed"]; !ok || n.Live || n.Held != 0 {
		t.Errorf("killed node listed as %+v (listed %v), want not live, held 0", n, ok)
	}
	if n := got["test-node"]; !n.Live {
		t.Errorf("live node listed as %+v, want live", n)
	}
}

// TestRegisterBesideAnotherContainer: a process whose node id is held by
// a live-leased entry of another container on this hostname (another PID
// namespace, its pid absent here) refuses to start rather than replace
// it; an entry of this namespace whose process exited is replaced.
func TestRegisterBesideAnotherContainer(t *testing.T) {
	self := procRoot("/proc").selfIdentity()
	if !self.complete() {
		t.Skip("no /proc identity on this system")
	}
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	const lease = 30 * time.Second
	host, _ := os.Hostname()
	exited := exec.Command("true")
	if err := exited.Run(); err != nil {
		t.Fatal(err)
	}
	otherNS := self
	otherNS.PIDNS = "pid:[1]"
	for _, tt := range []struct {
		id     string
		ident  procIdentity
		refuse bool
	}{
		{"beside", otherNS, true},
		{"crashed", self, false},
	} {
		entry := store.Node{ID: tt.id, Incarnation: incarnationOf("x", tt.ident), Host: host, PID: exited.Process.Pid,
			StartedAt: now, BeatAt: now}
		if err := st.RegisterNode(t.Context(), entry, now.Add(-lease)); err != nil {
			t.Fatal(err)
		}
		r := newNodeRegistry(slog.New(slog.DiscardHandler), st, tt.id, lease, clock, nil)
		err := r.register(t.Context())
		if refused := errors.Is(err, task.ErrConflict); refused != tt.refuse || (err != nil && !refused) {
			t.Errorf("%s: register = %v, want refused %t", tt.id, err, tt.refuse)
		}
	}
}

// TestStatusListsTheDeliveriesInstance: the status lists a node's
// incarnation as its deliveries carry it (X-Cronsheet-Instance), without
// the host identity the registry keeps beside it, so a reader can tell
// which process sent a call (the e2e cluster harness attributes every
// delivery so).
func TestStatusListsTheDeliveriesInstance(t *testing.T) {
	b := setup(t, nil)
	var st status
	if code := b.call(t, "GET", "/api/v1/status", nil, &st); code != http.StatusOK {
		t.Fatalf("status: %d", code)
	}
	for _, n := range st.Nodes {
		if n.ID == "test-node" {
			if n.Incarnation != b.srv.nodes.instance || strings.Contains(n.Incarnation, "|") {
				t.Errorf("status incarnation %q, want the deliveries' instance %q", n.Incarnation, b.srv.nodes.instance)
			}
			return
		}
	}
	t.Fatalf("status lists no test-node: %+v", st.Nodes)
}
