package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"cronsheet/store"
	"cronsheet/task"
)

// The target queries of store.Dumper, not prepared either (see dump.go).
const (
	qDumpTargets   = `SELECT ` + targetCols + ` FROM targets ORDER BY id`
	qRestoreTarget = `INSERT INTO targets (` + targetCols + `) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (id) DO NOTHING`
)

// DumpTargets calls fn with every target, in id order, as stored.
func (s *Store) DumpTargets(ctx context.Context, fn func(*task.Target) error) error {
	err := s.each(ctx, qDumpTargets, func(rs *sql.Rows) error {
		t, err := scanTarget(rs)
		if err != nil {
			return err
		}
		return fn(t)
	})
	if err != nil {
		return fmt.Errorf("dump targets: %w", err)
	}
	return nil
}

// RestoreTarget stores a target as dumped (version and times kept) unless
// its id is stored.
func (s *Store) RestoreTarget(ctx context.Context, t *task.Target) (bool, error) {
	if t == nil || t.ID == "" {
		return false, fmt.Errorf("restore target: %w", task.Invalid("id", "required"))
	}
	doc, err := targetDocOf(t)
	if err != nil {
		return false, fmt.Errorf("restore target %s: %w", t.ID, err)
	}
	res, err := s.w.ExecContext(ctx, qRestoreTarget, t.ID, doc, max(t.Version, 1),
		store.UnixMS(t.CreatedAt), store.UnixMS(t.UpdatedAt))
	if err != nil {
		return false, fmt.Errorf("restore target %s: %w", t.ID, translate(err))
	}
	n, err := res.RowsAffected()
	return n == 1, err
}
