package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"cronsheet/store"
	"cronsheet/task"
)

// The live settings (store.SettingsStore) on SQLite: one row (id 1) whose
// body is the settings as JSON, with its version beside it for the
// conditional update.
const settingsSchema = `
CREATE TABLE IF NOT EXISTS settings (
	id         INTEGER PRIMARY KEY CHECK (id = 1),
	version    INTEGER NOT NULL,
	body       TEXT    NOT NULL,
	updated_at INTEGER NOT NULL,
	updated_by TEXT    NOT NULL DEFAULT ''
);
`

var _ store.SettingsStore = (*Store)(nil)

// GetSettings returns the stored settings, see store.SettingsStore.
func (s *Store) GetSettings(ctx context.Context) (*store.Settings, error) {
	return s.getSettings(ctx, s.r)
}

// querier is what getSettings reads through: the read pool or the writer.
type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func (s *Store) getSettings(ctx context.Context, q querier) (*store.Settings, error) {
	var (
		body, by string
		version  int64
		at       int64
	)
	err := q.QueryRowContext(ctx, `SELECT version, body, updated_at, updated_by FROM settings WHERE id = 1`).
		Scan(&version, &body, &at, &by)
	if err != nil {
		return nil, fmt.Errorf("get settings: %w", translate(err))
	}
	var out store.Settings
	if err := json.Unmarshal([]byte(body), &out); err != nil {
		return nil, fmt.Errorf("get settings: stored body: %w", err)
	}
	out.Version, out.UpdatedAt, out.UpdatedBy = version, store.FromUnixMS(at), by
	return out.Normalized(), nil
}

// PutSettings stores settings conditionally, see store.SettingsStore.
func (s *Store) PutSettings(ctx context.Context, set *store.Settings, ifVersion int64) (*store.Settings, error) {
	n := set.Normalized()
	n.Version, n.UpdatedAt = 0, s.now()
	body, err := json.Marshal(n)
	if err != nil {
		return nil, fmt.Errorf("put settings: %w", err)
	}
	at := store.UnixMS(n.UpdatedAt)
	var res sql.Result
	if ifVersion == 0 {
		res, err = s.w.ExecContext(ctx, `INSERT INTO settings (id, version, body, updated_at, updated_by)
			VALUES (1, 1, ?, ?, ?) ON CONFLICT (id) DO NOTHING`, string(body), at, n.UpdatedBy)
	} else {
		res, err = s.w.ExecContext(ctx, `UPDATE settings SET version = version + 1, body = ?, updated_at = ?, updated_by = ?
			WHERE id = 1 AND version = ?`, string(body), at, n.UpdatedBy, ifVersion)
	}
	if err != nil {
		return nil, fmt.Errorf("put settings: %w", translate(err))
	}
	changed, err := res.RowsAffected()
	if err != nil {
		return nil, fmt.Errorf("put settings: %w", err)
	}
	stored, err := s.getSettings(ctx, s.w)
	if err != nil {
		if ifVersion > 0 && errors.Is(err, task.ErrNotFound) {
			return nil, fmt.Errorf("put settings: none are stored to replace: %w", task.ErrNotFound)
		}
		return nil, err
	}
	if changed == 0 {
		return nil, fmt.Errorf("put settings: %w", store.SettingsVersionError(ifVersion, stored.Version))
	}
	return stored, nil
}
