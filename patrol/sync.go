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
}

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

// RunOnce syncs up to one batch of edited rows.
func (s *Sync) RunOnce(ctx context.Context) (SyncResult, error) {
	var res SyncResult
	rows, err := s.store.ListUnfetchedRows(ctx, s.batch)
	if err != nil {
		return res, fmt.Errorf("list unfetched rows: %w", err)
	}
	for _, row := range rows {
		if err := s.syncRow(ctx, row, &res); err != nil {
			return res, err
		}
	}
	return res, nil
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
		return err
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
