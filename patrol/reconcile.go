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
	ParkTasks(ctx context.Context, owner string, ps []store.ParkParams) ([]string, error)
	ReleaseExpired(ctx context.Context, now time.Time) (int, error)
	PurgeDeleted(ctx context.Context) (int, error)
	RetireRowless(ctx context.Context, owner string) ([]string, error)
	SetTaskStatus(ctx context.Context, p store.TaskStatusParams) error
	SetTaskStatuses(ctx context.Context, ps []store.TaskStatusParams) error
}

// ReconcileResult counts what one reconcile pass did.
type ReconcileResult struct {
	Disarmed int // disabled, finished or deleted tasks disarmed and released
	Retired  int // tasks held here whose row was gone, retired (and disarmed)
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
	// First retire the tasks held here whose row is gone: a row deleted
	// straight in the database (other tools edit the rows) retires
	// nothing by itself. Retired, they list below as disabled and are
	// disarmed in this same pass, then purged once released. Its failure
	// does not hold up the rest of the pass; the pass returns it.
	retired, retireErr := r.store.RetireRowless(ctx, r.node)
	res.Retired = len(retired)
	if retireErr != nil {
		retireErr = fmt.Errorf("retire tasks without a row: %w", retireErr)
	}
	for _, id := range retired {
		r.logger.InfoContext(ctx, "task retired: its row is gone", "task_id", id)
	}
	res, err := r.reconcile(ctx, res)
	return res, errors.Join(err, retireErr)
}

// reconcile is RunOnce after the rowless tasks were retired.
func (r *Reconcile) reconcile(ctx context.Context, res ReconcileResult) (ReconcileResult, error) {
	claimed, err := r.store.ListClaimed(ctx, r.node)
	if err != nil {
		return res, fmt.Errorf("list claimed tasks: %w", err)
	}
	armed := map[string]bool{}
	for _, id := range r.armer.Armed() {
		armed[id] = true
	}
	held := make(map[string]bool, len(claimed))
	var cleared []store.TaskStatusParams // disarmed: they show no next fire
	var release []store.ParkParams
	for _, c := range claimed {
		held[c.TaskID] = true
		switch {
		case c.IsEnable != 1 || c.IsDone == 1:
			r.armer.Disarm(c.TaskID)
			res.Disarmed++
			cleared = append(cleared, store.TaskStatusParams{TaskID: c.TaskID, SetNextFire: true})
		case !armed[c.TaskID]:
			res.Released++
		default:
			continue
		}
		release = append(release, store.ParkParams{TaskID: c.TaskID, Version: c.Version})
	}
	// In batches: at a thousand jobs finishing a second, one transaction
	// per task for each would be most of the writer's time outside the
	// fires.
	if err := r.clearNextFires(ctx, cleared); err != nil {
		return res, err
	}
	// Released at the version listed: a task edited since keeps its claim
	// until the next pass looks at it again. A task purged meanwhile by
	// another node needs no release.
	for start := 0; start < len(release); start += store.MaxStatusBatch {
		chunk := release[start:min(start+store.MaxStatusBatch, len(release))]
		if _, err := r.store.ParkTasks(ctx, r.node, chunk); err != nil {
			return res, fmt.Errorf("release %d tasks: %w", len(chunk), err)
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

// clearNextFires clears the next fire of the tasks of ps in transactions
// of clearChunk, each task on its own when one of a chunk is gone.
func (r *Reconcile) clearNextFires(ctx context.Context, ps []store.TaskStatusParams) error {
	for start := 0; start < len(ps); start += clearChunk {
		chunk := ps[start:min(start+clearChunk, len(ps))]
		err := r.store.SetTaskStatuses(ctx, chunk)
		if errors.Is(err, task.ErrNotFound) {
			for _, p := range chunk {
				if err := r.store.SetTaskStatus(ctx, p); err != nil && !errors.Is(err, task.ErrNotFound) {
					return fmt.Errorf("clear next fire of %s: %w", p.TaskID, err)
				}
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("clear next fire of %d tasks: %w", len(chunk), err)
		}
	}
	return nil
}

// clearChunk bounds the statuses of one transaction of clearNextFires.
const clearChunk = 500

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
