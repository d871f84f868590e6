package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

const (
	// qLastSlotBefore walks ix_runs_sched (schedule and misfire runs
	// only) backwards from before.
	qLastSlotBefore = `SELECT slot FROM runs WHERE task_id = ? AND trigger_type IN ` + scheduledTriggers + `
		AND slot < ? ORDER BY slot DESC LIMIT 1`
	// qRunsAtSlot reads UNIQUE(task_id, slot, target) at one slot.
	qRunsAtSlot = `SELECT ` + runCols + ` FROM runs WHERE task_id = ? AND slot = ? ORDER BY target`
)

// LastSlotBefore returns the latest schedule or misfire slot of taskID
// strictly before before (zero: any), or the zero time.
func (s *Store) LastSlotBefore(ctx context.Context, taskID string, before time.Time) (time.Time, error) {
	if before.IsZero() {
		return s.LastSlot(ctx, taskID)
	}
	var slot int64
	err := s.r.QueryRowContext(ctx, qLastSlotBefore, taskID, store.UnixMS(before)).Scan(&slot)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("last slot of %s before %s: %w", taskID, before, err)
	}
	return store.FromUnixMS(slot), nil
}

// RunsAtSlot returns taskID's runs of slot, in target order.
func (s *Store) RunsAtSlot(ctx context.Context, taskID string, slot time.Time) ([]*task.Run, error) {
	rs, err := s.r.QueryContext(ctx, qRunsAtSlot, taskID, store.UnixMS(slot))
	if err != nil {
		return nil, fmt.Errorf("runs of %s at %s: %w", taskID, slot, err)
	}
	defer rs.Close()
	var out []*task.Run
	for rs.Next() {
		r, err := scanRun(rs)
		if err != nil {
			return nil, fmt.Errorf("runs of %s at %s: %w", taskID, slot, err)
		}
		out = append(out, r)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("runs of %s at %s: %w", taskID, slot, err)
	}
	return out, nil
}
