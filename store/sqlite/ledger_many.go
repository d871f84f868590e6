package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// manyChunk is how many task ids one IN list of LastSlots and
// UnfinishedRunsOf carries (well under SQLite's variable limit).
const manyChunk = 500

// LastSlots is LastSlot for many tasks: one query per 500 ids. Tasks
// without a scheduled slot are absent from the map.
func (s *Store) LastSlots(ctx context.Context, taskIDs []string) (map[string]time.Time, error) {
	if len(taskIDs) > store.MaxStatusBatch {
		return nil, fmt.Errorf("last slots: %w", task.Invalid("task_ids", "at most %d per call, got %d", store.MaxStatusBatch, len(taskIDs)))
	}
	out := make(map[string]time.Time, len(taskIDs))
	err := eachChunk(taskIDs, func(in string, args []any) error {
		rs, err := s.r.QueryContext(ctx, `SELECT task_id, MAX(slot) FROM runs WHERE task_id IN (`+in+
			`) AND trigger_type IN `+scheduledTriggers+` GROUP BY task_id`, args...)
		if err != nil {
			return translate(err)
		}
		defer rs.Close()
		for rs.Next() {
			var (
				id   string
				slot int64
			)
			if err := rs.Scan(&id, &slot); err != nil {
				return err
			}
			out[id] = store.FromUnixMS(slot)
		}
		return rs.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("last slots of %d tasks: %w", len(taskIDs), err)
	}
	return out, nil
}

// UnfinishedRunsOf is UnfinishedRuns for many tasks: one query per 500
// ids; each task's runs oldest slot first, tasks without any absent.
func (s *Store) UnfinishedRunsOf(ctx context.Context, taskIDs []string) (map[string][]*task.Run, error) {
	if len(taskIDs) > store.MaxStatusBatch {
		return nil, fmt.Errorf("unfinished runs: %w", task.Invalid("task_ids", "at most %d per call, got %d", store.MaxStatusBatch, len(taskIDs)))
	}
	out := map[string][]*task.Run{}
	err := eachChunk(taskIDs, func(in string, args []any) error {
		rs, err := s.r.QueryContext(ctx, `SELECT `+runCols+` FROM runs WHERE task_id IN (`+in+
			`) AND `+unfinishedWhere+` ORDER BY task_id, slot`, args...)
		if err != nil {
			return translate(err)
		}
		return collectRuns(rs, func(r *task.Run) { out[r.TaskID] = append(out[r.TaskID], r) })
	})
	if err != nil {
		return nil, fmt.Errorf("unfinished runs of %d tasks: %w", len(taskIDs), err)
	}
	return out, nil
}

// eachChunk calls q with the placeholders and arguments of each chunk of
// at most manyChunk ids.
func eachChunk(ids []string, q func(in string, args []any) error) error {
	for start := 0; start < len(ids); start += manyChunk {
		chunk := ids[start:min(start+manyChunk, len(ids))]
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		if err := q(strings.TrimSuffix(strings.Repeat("?,", len(chunk)), ","), args); err != nil {
			return err
		}
	}
	return nil
}

// collectRuns scans every run of rs into add and closes rs.
func collectRuns(rs *sql.Rows, add func(*task.Run)) error {
	defer rs.Close()
	for rs.Next() {
		r, err := scanRun(rs)
		if err != nil {
			return err
		}
		add(r)
	}
	return rs.Err()
}
