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

// SyncStore is what the sync patrol needs from storage.
type SyncStore interface {
	ListUnfetchedRows(ctx context.Context, limit int) ([]*task.Row, error)
	ApplySync(ctx context.Context, p store.ApplySyncParams) error
}

// Mapper maps a scenario's row to its task (mapping.Scenario).
type Mapper interface {
	ToTask(row *task.Row, now time.Time) (*task.Task, error)
	// IDField is the row field holding the task id, named when that id is
	// already another row's.
	IDField() string
}

// SyncResult counts what one sync pass did.
type SyncResult struct {
	Synced    int // rows whose task was upserted
	Invalid   int // rows marked is_active=-1
	Conflicts int // rows edited again during the pass (synced next time)
	Gone      int // rows deleted during the pass (nothing left to sync)
	// Failed counts rows whose sync failed (a store error on that row):
	// each is logged with its scenario, row id and error, stays unfetched
	// and is tried again next pass. The other rows of the pass are synced
	// all the same.
	Failed int
}

// maxSyncErrors bounds how many row errors RunOnce's error spells out.
const maxSyncErrors = 5

// Sync is the sync patrol.
type Sync struct {
	logger    *slog.Logger
	store     SyncStore
	scenarios map[string]Mapper
	batch     int
	now       func() time.Time
}

// NewSync returns the sync patrol. batch bounds rows per pass (default 500).
func NewSync(logger *slog.Logger, st SyncStore, scenarios map[string]Mapper, batch int, now func() time.Time) *Sync {
	if batch <= 0 {
		batch = 500
	}
	if now == nil {
		now = time.Now
	}
	return &Sync{logger: logger.With("component", "patrol.sync"), store: st, scenarios: scenarios, batch: batch, now: now}
}

// RunOnce syncs up to one batch of edited rows, each on its own: a row
// whose sync fails is logged and counted (SyncResult.Failed) and the pass
// goes on with the next one. The error, when rows failed, names the first
// few of them; only a failed listing, or ctx ending, stops the pass.
func (s *Sync) RunOnce(ctx context.Context) (SyncResult, error) {
	var res SyncResult
	rows, err := s.store.ListUnfetchedRows(ctx, s.batch)
	if err != nil {
		return res, fmt.Errorf("list unfetched rows: %w", err)
	}
	var errs []error
	for _, row := range rows {
		if ctx.Err() != nil {
			return res, errors.Join(append(errs, context.Cause(ctx))...)
		}
		err := s.syncRow(ctx, row, &res)
		if err == nil {
			continue
		}
		if ctx.Err() != nil {
			return res, errors.Join(append(errs, err)...)
		}
		res.Failed++
		s.logger.ErrorContext(ctx, "row sync failed; tried again next pass",
			"scenario", row.Scenario, "row_id", row.ID, "error", err)
		if len(errs) < maxSyncErrors {
			errs = append(errs, err)
		}
	}
	if res.Failed == 0 {
		return res, nil
	}
	more := ""
	if res.Failed > len(errs) {
		more = fmt.Sprintf(" (the first %d below)", len(errs))
	}
	return res, fmt.Errorf("sync: %d of %d rows failed, the others were synced%s: %w",
		res.Failed, len(rows), more, errors.Join(errs...))
}

// SyncRow syncs one row, as just written (with its version), the way a
// pass does: its task takes the row's state at once, for a caller that
// must not answer before it has (a row switched off). A row edited again
// or deleted meanwhile is left to that edit (its sync, or DeleteRow's
// retire); the error is a store error, the row then staying unfetched for
// the next pass.
func (s *Sync) SyncRow(ctx context.Context, row *task.Row) error {
	var res SyncResult
	return s.syncRow(ctx, row, &res)
}

func (s *Sync) syncRow(ctx context.Context, row *task.Row, res *SyncResult) error {
	now := s.now()
	p := store.ApplySyncParams{Scenario: row.Scenario, RowID: row.ID, RowVersion: row.Version, Now: now}
	// The task's anchor is now; ApplySync keeps the stored one while the
	// schedule is unchanged (store.ApplySyncParams).
	t, err := s.toTask(row, now)
	switch {
	case errors.Is(err, task.ErrInvalid):
		p.DisableTask, p.IsActive, p.Error = true, task.RowError, err.Error()
	case err != nil:
		return fmt.Errorf("map row %s/%s: %w", row.Scenario, row.ID, err)
	default:
		p.Task, p.IsActive = t, t.IsEnable
	}
	err = s.store.ApplySync(ctx, p)
	if errors.Is(err, store.ErrTaskIDTaken) && p.Task != nil {
		// The row's task id belongs to another row: the row is in error.
		// Any other conflict is a race (the row changed again, or another
		// node synced it first): it is counted and the row, if still
		// unfetched, synced next pass; a valid row is never flagged.
		p.Task, p.DisableTask, p.IsActive = nil, true, task.RowError
		p.Error = fmt.Sprintf("%s: task id %q is already used by another row",
			s.scenarios[row.Scenario].IDField(), t.TaskID)
		err = s.store.ApplySync(ctx, p)
	}
	switch {
	case errors.Is(err, task.ErrConflict):
		res.Conflicts++
	case errors.Is(err, task.ErrNotFound):
		// Deleted since it was listed: DeleteRow retired its task.
		res.Gone++
	case err != nil:
		return fmt.Errorf("apply sync of row %s/%s: %w", row.Scenario, row.ID, err)
	case p.Task == nil:
		res.Invalid++
		s.logger.InfoContext(ctx, "row invalid", "scenario", row.Scenario, "row_id", row.ID, "error", p.Error)
	default:
		res.Synced++
	}
	return nil
}

func (s *Sync) toTask(row *task.Row, now time.Time) (*task.Task, error) {
	m, ok := s.scenarios[row.Scenario]
	if !ok {
		return nil, task.Invalid("scenario", "unknown scenario %q", row.Scenario)
	}
	return m.ToTask(row, now)
}
