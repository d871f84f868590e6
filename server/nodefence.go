package server

import (
	"context"
	"errors"
	"sync"
	"time"

	"cronsheet/task"
)

// idFence keeps whether this process still holds its node id: lost once a
// heartbeat finds the id's entry taken by another process (this one was
// frozen or stalled past the lease, and a new process registered the id).
// From then on this process must not deliver: both would act as the same
// node, each taking the other's claims and runs for its own.
type idFence struct {
	mu       sync.Mutex
	beatOK   time.Time // wall clock: when the last successful beat began
	err      error     // why the id was lost; nil while held
	lost     chan struct{}
	checking sync.Mutex // one beat at a time for standing
	tried    time.Time  // when standing last beat (under checking)
}

func newIDFence() *idFence {
	return &idFence{beatOK: time.Now(), lost: make(chan struct{})}
}

// beaten records a successful heartbeat that began at began.
func (f *idFence) beaten(began time.Time) {
	f.mu.Lock()
	if began.After(f.beatOK) {
		f.beatOK = began
	}
	f.mu.Unlock()
}

// lose records that the node id was lost, why, and closes lost (once).
func (f *idFence) lose(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil {
		f.err = err
		close(f.lost)
	}
}

// lostErr returns why the node id was lost, nil while it is held.
func (f *idFence) lostErr() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// bind returns ctx ended once the node id is lost, and its stop, which
// the caller calls when done with it: a delivery waiting for a cc slot or
// a host token stops waiting then.
func (f *idFence) bind(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	go func() {
		select {
		case <-f.lost:
			cancel(errNodeLost)
		case <-ctx.Done():
		}
	}()
	return ctx, func() { cancel(nil) }
}

// sinceBeat is how long ago the last successful heartbeat began.
func (f *idFence) sinceBeat() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return time.Since(f.beatOK)
}

// errNodeLost is what standing answers once the node id is lost.
var errNodeLost = errors.New("this process lost its node id to another process")

// standing answers nil while this process may deliver under its node id.
// When no heartbeat succeeded for half a lease (the process was frozen or
// stalled: its patrols beat every third of one), it beats first, so that a
// process resumed after another took its id learns so before it delivers
// anything. A beat failing for another reason (the store is out) does not
// stop deliveries: their own writes fail or succeed with the store.
func (r *nodeRegistry) standing(ctx context.Context) error {
	if err := r.fence.lostErr(); err != nil {
		return errors.Join(errNodeLost, err)
	}
	if r.fence.sinceBeat() < r.lease/2 {
		return nil
	}
	r.fence.checking.Lock()
	defer r.fence.checking.Unlock()
	// While the store is out, the deliveries waiting here share one beat
	// per tenth of a lease rather than each trying its own.
	if r.fence.sinceBeat() >= r.lease/2 && time.Since(r.fence.tried) >= r.lease/10 {
		r.fence.tried = time.Now()
		bctx, cancel := context.WithTimeout(ctx, r.lease/3)
		err := r.beat(bctx)
		cancel()
		if err != nil && !errors.Is(err, task.ErrConflict) {
			r.logger.WarnContext(ctx, "heartbeat before a delivery", "error", err)
		}
	}
	if err := r.fence.lostErr(); err != nil {
		return errors.Join(errNodeLost, err)
	}
	return nil
}

// closeStoreAfterLoss ends a shutdown after the node id was lost: the
// store is closed, nothing under the id released.
func (s *Server) closeStoreAfterLoss() {
	if err := s.store.Close(); err != nil {
		s.logger.Warn("close store", "error", err)
	}
	s.logger.Error("stopped: node id lost to another process", "node_id", s.cfg.NodeID)
}
