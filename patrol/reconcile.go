package patrol

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// ReconcileStore is what the reconcile patrol needs from storage.
type ReconcileStore interface {
	ListClaimed(ctx context.Context, owner string) ([]store.ClaimedTask, error)
	ReleaseTask(ctx context.Context, taskID, owner string) error
	ReleaseExpired(ctx context.Context, now time.Time) (int, error)
	PurgeDeleted(ctx context.Context) (int, error)
	SetTaskStatus(ctx context.Context, p store.TaskStatusParams) error
}

// ReconcileResult counts what one reconcile pass did.
type ReconcileResult struct {
	Disarmed int // disabled, finished or deleted tasks disarmed and released
	Released int // claimed here but not armed here (this node restarted)
	Dropped  int // armed here but no longer claimed here
	Expired  int // claims of dead nodes released
	Purged   int // deleted tasks removed
}

// Reconcile is the delete and ensure patrols: it makes this node's armed set
// match its claims, and frees what dead nodes held.
type Reconcile struct {
	logger *slog.Logger
	store  ReconcileStore
	armer  Armer
	node   string
	now    func() time.Time
	// mayExpire, when set, says whether expired claims may be freed now;
	// see ExpireOnlyWhen.
	mayExpire func() bool
}

// ExpireOnlyWhen makes the pass free expired claims only while ok says
// so. A node that could not reach the store for a while passes its own
// judging: every lease ran out during the outage, the owners included,
// and they renew as soon as the store is back.
func (r *Reconcile) ExpireOnlyWhen(ok func() bool) { r.mayExpire = ok }

// NewReconcile returns the reconcile patrol for node.
func NewReconcile(logger *slog.Logger, st ReconcileStore, armer Armer, node string, now func() time.Time) *Reconcile {
	if now == nil {
		now = time.Now
	}
	return &Reconcile{logger: logger.With("component", "patrol.reconcile"), store: st, armer: armer, node: node, now: now}
}

// RunOnce reconciles once.
func (r *Reconcile) RunOnce(ctx context.Context) (ReconcileResult, error) {
	var res ReconcileResult
	claimed, err := r.store.ListClaimed(ctx, r.node)
	if err != nil {
		return res, fmt.Errorf("list claimed tasks: %w", err)
	}
	armed := map[string]bool{}
	for _, id := range r.armer.Armed() {
		armed[id] = true
	}
	held := make(map[string]bool, len(claimed))
	for _, c := range claimed {
		held[c.TaskID] = true
		switch {
		case c.IsEnable != 1 || c.IsDone == 1:
			r.armer.Disarm(c.TaskID)
			res.Disarmed++
			// Nothing is armed for it any more: it shows no next fire.
			err := r.store.SetTaskStatus(ctx, store.TaskStatusParams{TaskID: c.TaskID, SetNextFire: true})
			if err != nil && !errors.Is(err, task.ErrNotFound) {
				return res, fmt.Errorf("clear next fire of %s: %w", c.TaskID, err)
			}
		case !armed[c.TaskID]:
			res.Released++
		default:
			continue
		}
		// A task purged meanwhile by another node needs no release.
		if err := r.store.ReleaseTask(ctx, c.TaskID, r.node); err != nil && !errors.Is(err, task.ErrNotFound) {
			return res, fmt.Errorf("release task %s: %w", c.TaskID, err)
		}
	}
	for id := range armed {
		if !held[id] {
			r.armer.Disarm(id)
			res.Dropped++
		}
	}
	if r.mayExpire == nil || r.mayExpire() {
		if res.Expired, err = r.store.ReleaseExpired(ctx, r.now()); err != nil {
			return res, fmt.Errorf("release expired claims: %w", err)
		}
	}
	if res.Purged, err = r.store.PurgeDeleted(ctx); err != nil {
		return res, fmt.Errorf("purge deleted tasks: %w", err)
	}
	return res, nil
}

// RenewStore is what lease renewal needs from storage.
type RenewStore interface {
	RenewLeases(ctx context.Context, owner string, until time.Time) (int, error)
}

// Renew extends the leases of this node's claims.
type Renew struct {
	store RenewStore
	node  string
	lease time.Duration
	now   func() time.Time
}

// NewRenew returns the lease renewal patrol.
func NewRenew(st RenewStore, node string, lease time.Duration, now func() time.Time) *Renew {
	if now == nil {
		now = time.Now
	}
	return &Renew{store: st, node: node, lease: lease, now: now}
}

// RunOnce renews every lease held by this node; it returns how many.
func (r *Renew) RunOnce(ctx context.Context) (int, error) {
	n, err := r.store.RenewLeases(ctx, r.node, r.now().Add(r.lease))
	if err != nil {
		return n, fmt.Errorf("renew leases: %w", err)
	}
	return n, nil
}
