package sqlite

import (
	"context"
	"fmt"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

const (
	// qUpcoming scans time_task: next_fire has no index (SetTaskStatus
	// rewrites it on every fire, schema.go), and the scan is bounded by the
	// table's size, once per status poll of the timeline.
	qUpcoming = `SELECT task_id, scenario, row_id, next_fire FROM time_task
		WHERE next_fire > ? AND next_fire <= ? AND is_enable = 1 AND is_done = 0 AND deleted = 0
		ORDER BY next_fire, task_id LIMIT ?`
)

// qFireStats walks ix_runs_hist backwards over the window, and the tail
// (historyUnion).
func qFireStats() string {
	return historyUnion(`fired_at, slot, state, trigger_id`, "ix_runs_hist", `fired_at >= ?1 AND fired_at < ?2`, "?3")
}

// qOutcomes walks ix_runs_hist_task backwards for one task's final runs,
// and the tail (historyUnion).
func qOutcomes() string {
	return historyUnion(`trigger_id, state, fired_at, substr(error, 1, 400)`, "ix_runs_hist_task",
		`task_id = ?1 AND `+finalWhere, "?2")
}

// FireStats counts the runs fired in the window per bucket
// (store.RunStats), reading them newest first through ix_runs_hist.
func (s *Store) FireStats(ctx context.Context, p store.FireStatsParams) (*store.FireStats, error) {
	if err := p.Check(); err != nil {
		return nil, fmt.Errorf("fire stats: %w", err)
	}
	rs, err := s.r.QueryContext(ctx, qFireStats(), store.UnixMS(p.From), store.UnixMS(p.To), store.MaxStatsRuns+1)
	if err != nil {
		return nil, fmt.Errorf("fire stats: %w", translate(err))
	}
	defer rs.Close()
	b := store.NewFireStatsBuilder(p)
	for rs.Next() {
		var fired, slot int64
		var state task.RunState
		var triggerID string
		if err := rs.Scan(&fired, &slot, &state, &triggerID); err != nil {
			return nil, fmt.Errorf("fire stats: %w", err)
		}
		if !b.Add(fired, slot, state) {
			break
		}
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("fire stats: %w", translate(err))
	}
	return b.Result(), nil
}

// UpcomingFires returns the armed tasks' next fires in (from, to]
// (store.RunStats).
func (s *Store) UpcomingFires(ctx context.Context, from, to time.Time, limit int) ([]store.UpcomingFire, error) {
	if err := store.CheckUpcoming(from, to, limit); err != nil {
		return nil, fmt.Errorf("upcoming fires: %w", err)
	}
	rs, err := s.r.QueryContext(ctx, qUpcoming, store.UnixMS(from), store.UnixMS(to), limit)
	if err != nil {
		return nil, fmt.Errorf("upcoming fires: %w", translate(err))
	}
	defer rs.Close()
	out := []store.UpcomingFire{}
	for rs.Next() {
		var u store.UpcomingFire
		var next int64
		if err := rs.Scan(&u.TaskID, &u.Scenario, &u.RowID, &next); err != nil {
			return nil, fmt.Errorf("upcoming fires: %w", err)
		}
		u.NextFire = store.FromUnixMS(next)
		out = append(out, u)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("upcoming fires: %w", translate(err))
	}
	return out, nil
}

// RecentOutcomes returns each task's newest finished runs
// (store.RunStats), one indexed read of at most perTask runs per task.
func (s *Store) RecentOutcomes(ctx context.Context, taskIDs []string, perTask int) (map[string][]store.Outcome, error) {
	if err := store.CheckOutcomes(taskIDs, perTask); err != nil {
		return nil, fmt.Errorf("recent outcomes: %w", err)
	}
	out := map[string][]store.Outcome{}
	qOutcomes := qOutcomes()
	for _, id := range taskIDs {
		if _, seen := out[id]; seen {
			continue
		}
		rs, err := s.r.QueryContext(ctx, qOutcomes, id, perTask)
		if err != nil {
			return nil, fmt.Errorf("recent outcomes of %s: %w", id, translate(err))
		}
		for rs.Next() {
			var o store.Outcome
			var fired int64
			if err := rs.Scan(&o.TriggerID, &o.State, &fired, &o.Error); err != nil {
				rs.Close()
				return nil, fmt.Errorf("recent outcomes of %s: %w", id, err)
			}
			o.FiredAt, o.Error = store.FromUnixMS(fired), task.Truncate(o.Error, 200)
			out[id] = append(out[id], o)
		}
		err = rs.Err()
		rs.Close()
		if err != nil {
			return nil, fmt.Errorf("recent outcomes of %s: %w", id, translate(err))
		}
	}
	return out, nil
}
