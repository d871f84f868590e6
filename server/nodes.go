package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"cronsheet/fire"
	"cronsheet/store"
	"cronsheet/task"
)

// liveCacheFor is how long a read of the registry answers LiveNodes.
const liveCacheFor = time.Second

// nodeRegistry is this process's entry in the store's node registry: it
// registers at start (refusing a node id that a live process uses), beats
// with each lease renewal, and says which nodes are alive (beat within the
// lease) so the firer knows whose runs are orphaned.
type nodeRegistry struct {
	logger *slog.Logger
	store  store.Nodes
	self   store.Node
	lease  time.Duration
	now    func() time.Time
	held   func() int // tasks armed here, reported with each beat

	mu       sync.Mutex
	cached   fire.Peers
	cachedAt time.Time // when cached was read (before the query); it answers for liveCacheFor
	// healthySince is when this node's heartbeats started succeeding
	// again (its start, or the end of a store outage it saw).
	healthySince time.Time

	fence *idFence // whether this process still holds its node id

	// proc is where processes are looked up (/proc), ident this
	// process's identity in it (procIdentity): a peer is known to have
	// exited only by these, never by its hostname and pid alone.
	proc  procRoot
	ident procIdentity
	// instance is the random part of the incarnation, which deliveries
	// carry (X-Cronsheet-Instance): the identity stays in the registry.
	instance string
}

func newNodeRegistry(logger *slog.Logger, st store.Nodes, id string, lease time.Duration, now func() time.Time, held func() int) *nodeRegistry {
	host, _ := os.Hostname()
	inc := make([]byte, 8)
	_, _ = rand.Read(inc)
	started := now()
	proc := procRoot("/proc")
	ident := proc.selfIdentity()
	instance := hex.EncodeToString(inc)
	return &nodeRegistry{
		logger:   logger.With("component", "nodes"),
		store:    st,
		proc:     proc,
		ident:    ident,
		instance: instance,
		self: store.Node{ID: id, Incarnation: incarnationOf(instance, ident), Version: buildVersion(),
			Host: host, PID: os.Getpid(), StartedAt: started, BeatAt: started},
		lease:        lease,
		now:          now,
		held:         held,
		healthySince: started,
		fence:        newIDFence(),
	}
}

// judging reports whether this node has reached the store for a whole
// lease: only then can a peer's missing heartbeat mean the peer is gone
// rather than that nobody could write (a store outage stops every beat).
func (r *nodeRegistry) judging() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.healthySince.IsZero() && r.now().Sub(r.healthySince) >= r.lease
}

// buildVersion is the main module's version as built ("devel" from a
// work tree), with the VCS revision when known.
func buildVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := bi.Main.Version
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" && len(s.Value) >= 12 {
			v += " " + s.Value[:12]
		}
	}
	return v
}

// register records this process in the registry. An entry of the same id
// whose last beat is within the lease belongs to a live process, and this
// one refuses to start, unless that entry names a process known to have
// exited (a crash, restarted at once: same boot and PID namespace, its pid
// absent or reused, procRoot.knownGone): then it is replaced, and this
// process takes back its runs and claims without waiting out the lease.
func (r *nodeRegistry) register(ctx context.Context) error {
	now := r.now()
	r.self.BeatAt = now
	err := r.store.RegisterNode(ctx, r.self, now.Add(-r.lease))
	if !errors.Is(err, task.ErrConflict) {
		return err
	}
	other, lerr := r.entry(ctx)
	if lerr != nil {
		return errors.Join(err, lerr)
	}
	if other == nil || !r.proc.knownGone(r.ident, other.Incarnation, other.PID) {
		where := "another process"
		if other != nil {
			where = fmt.Sprintf("process %d on %s (last beat %s ago)", other.PID, other.Host, now.Sub(other.BeatAt).Round(time.Millisecond))
		}
		return fmt.Errorf("node_id %q is in use by %s: give each process its own node_id, or stop the other one (an entry is free once it has not beaten for patrol.lease, %s): %w",
			r.self.ID, where, r.lease, task.ErrConflict)
	}
	r.logger.InfoContext(ctx, "replacing the entry of a crashed process of this node id", "node_id", r.self.ID, "pid", other.PID)
	return r.store.RegisterNode(ctx, r.self, other.BeatAt.Add(time.Millisecond))
}

// entry returns the registry's entry of this node id, nil when none.
func (r *nodeRegistry) entry(ctx context.Context) (*store.Node, error) {
	nodes, err := r.store.ListNodes(ctx)
	if err != nil {
		return nil, err
	}
	for i := range nodes {
		if nodes[i].ID == r.self.ID {
			return &nodes[i], nil
		}
	}
	return nil, nil
}

// beat records a heartbeat. Another process having taken this node id
// (this one stalled past the lease) ends this one's standing: it delivers
// nothing more and stops (fence.lose), since both would otherwise
// believe they own the id's claims and runs.
func (r *nodeRegistry) beat(ctx context.Context) error {
	n := r.self
	n.BeatAt = r.now()
	if r.held != nil {
		n.Held = r.held()
	}
	began := time.Now()
	if err := r.store.BeatNode(ctx, n); err != nil {
		if errors.Is(err, task.ErrConflict) {
			r.fence.lose(fmt.Errorf("node_id %q was taken by another process while this one did not beat for patrol.lease (%s): "+
				"this process stops so that only one delivers under it: %w", r.self.ID, r.lease, err))
		}
		r.mu.Lock()
		r.healthySince = time.Time{} // set again by the next beat that succeeds
		r.mu.Unlock()
		return fmt.Errorf("heartbeat: %w", err)
	}
	r.mu.Lock()
	if r.healthySince.IsZero() {
		r.healthySince = n.BeatAt
	}
	r.mu.Unlock()
	r.fence.beaten(began)
	return nil
}

// deregister removes this process's entry (a graceful stop), so the other
// nodes take over its unfinished runs at once.
func (r *nodeRegistry) deregister(ctx context.Context) error {
	return r.store.RemoveNode(ctx, r.self.ID, r.self.Incarnation)
}

// peers says which nodes beat within the lease (live) and which stopped
// beating but may still run (quiet), cached for liveCacheFor unless the
// caller needs a view read at or after notBefore. A node that
// stopped beating is gone (in neither list) only when it is known to have
// exited: its entry names this boot of this kernel and this PID namespace,
// and its pid is absent or names a process started at another time
// (procRoot.knownGone). A hostname is no identity: two containers on the
// host network share it, but not their PID namespaces.
// Elsewhere a missing beat may be a stall, a slow store or a network
// split, and a quiet node's deliveries in flight are left to it until
// their deadline (fire.Peers).
func (r *nodeRegistry) peers(ctx context.Context, notBefore time.Time) (fire.Peers, error) {
	r.mu.Lock()
	// The cache is this process's bookkeeping, on its own wall clock (as
	// notBefore is), not the store's clock the leases are judged on.
	if time.Now().Before(r.cachedAt.Add(liveCacheFor)) && !r.cachedAt.Before(notBefore) {
		p := r.cached
		r.mu.Unlock()
		return p, nil
	}
	r.mu.Unlock()
	readAt := time.Now()
	nodes, err := r.store.ListNodes(ctx)
	if err != nil {
		return fire.Peers{}, err
	}
	now := r.now()
	judging := r.judging()
	var p fire.Peers
	for _, n := range nodes {
		switch {
		// Until this node has reached the store for a whole lease, every
		// registered node counts as alive: their beats may be missing
		// only because the store was out for all of us.
		case !judging, n.ID == r.self.ID, n.BeatAt.After(now.Add(-r.lease)):
			p.Live = append(p.Live, n.ID)
		case r.proc.knownGone(r.ident, n.Incarnation, n.PID):
			// gone: it exited (a crash, a kill -9)
		default:
			p.Quiet = append(p.Quiet, n.ID)
		}
	}
	r.mu.Lock()
	r.cached, r.cachedAt = p, readAt
	r.mu.Unlock()
	return p, nil
}

// nodes returns the registry's entries (for the status endpoint).
func (r *nodeRegistry) nodes(ctx context.Context) ([]store.Node, error) {
	return r.store.ListNodes(ctx)
}
