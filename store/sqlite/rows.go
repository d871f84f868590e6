package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"

	"cronsheet/store"
	"cronsheet/task"
)

const rowCols = `scenario, id, fields, is_fetched, is_active, error, next_fire, last_fire,
	last_status, version, created_at, updated_at`

const (
	qInsertRow = `INSERT INTO rows (` + rowCols + `)
		VALUES (?, ?, ?, 0, ?, ?, ?, ?, ?, 1, ?, ?)`
	qGetRow          = `SELECT ` + rowCols + ` FROM rows WHERE scenario = ? AND id = ?`
	qRowVersion      = `SELECT version FROM rows WHERE scenario = ? AND id = ?`
	qUpdateRowFields = `UPDATE rows SET fields = ?, is_fetched = 0, version = version + 1, updated_at = ?
		WHERE scenario = ? AND id = ? RETURNING ` + rowCols
	qDeleteRow = `DELETE FROM rows WHERE scenario = ? AND id = ?`
	// qRetireRowTasks marks the tasks of a row deleted (DeleteRow), or those
	// under another task_id than the row's current one (ApplySync).
	qRetireRowTasks = `UPDATE time_task SET deleted = 1, is_enable = 0, version = version + 1, arm_at = 0, updated_at = ?
		WHERE scenario = ? AND row_id = ? AND row_id <> '' AND task_id <> ? AND deleted = 0`
	qListRows = `SELECT ` + rowCols + ` FROM rows WHERE scenario = ? AND id > ?
		ORDER BY id LIMIT ?`
	qListUnfetchedRows = `SELECT ` + rowCols + ` FROM rows WHERE is_fetched = 0
		ORDER BY updated_at LIMIT ?`
)

// InsertRow stores a new row with is_fetched=0 and version 1, and sets those
// and its times on row. CreatedAt defaults to now, UpdatedAt to CreatedAt.
func (s *Store) InsertRow(ctx context.Context, row *task.Row) error {
	if row.ID == "" {
		return fmt.Errorf("insert row: %w", task.Invalid("id", "required"))
	}
	fields, err := json.Marshal(row.Fields)
	if err != nil {
		return fmt.Errorf("insert row %s/%s: %w", row.Scenario, row.ID, err)
	}
	created := store.UnixMS(row.CreatedAt)
	if created == 0 {
		created = s.nowMS()
	}
	updated := max(store.UnixMS(row.UpdatedAt), created)
	_, err = s.st.insertRow.ExecContext(ctx, row.Scenario, row.ID, string(fields), row.IsActive,
		row.Error, store.UnixMS(row.NextFire), store.UnixMS(row.LastFire), row.LastStatus, created, updated)
	if err != nil {
		return fmt.Errorf("insert row %s/%s: %w", row.Scenario, row.ID, translate(err))
	}
	row.IsFetched, row.Version = 0, 1
	row.CreatedAt, row.UpdatedAt = store.FromUnixMS(created), store.FromUnixMS(updated)
	return nil
}

// GetRow returns one row or task.ErrNotFound.
func (s *Store) GetRow(ctx context.Context, scenario, id string) (*task.Row, error) {
	row, err := scanRow(s.st.getRow.QueryRowContext(ctx, scenario, id))
	if err != nil {
		return nil, fmt.Errorf("get row %s/%s: %w", scenario, id, translate(err))
	}
	return row, nil
}

// UpdateRowFields replaces the row's fields, sets is_fetched=0 and bumps its
// version, checking p.IfVersion when it is not 0.
func (s *Store) UpdateRowFields(ctx context.Context, p store.UpdateRowParams) (*task.Row, error) {
	fields, err := json.Marshal(p.Fields)
	if err != nil {
		return nil, fmt.Errorf("update row %s/%s: %w", p.Scenario, p.ID, err)
	}
	var row *task.Row
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		if err := s.checkRowVersion(ctx, tx, p.Scenario, p.ID, p.IfVersion); err != nil {
			return err
		}
		row, err = scanRow(in(ctx, tx, s.st.updateRowFields).QueryRowContext(ctx, string(fields), s.nowMS(), p.Scenario, p.ID))
		return translate(err)
	})
	if err != nil {
		return nil, fmt.Errorf("update row %s/%s: %w", p.Scenario, p.ID, err)
	}
	return row, nil
}

// checkRowVersion fails with task.ErrNotFound when the row is missing and
// with task.ErrConflict when want > 0 and the row has another version.
func (s *Store) checkRowVersion(ctx context.Context, tx *sql.Tx, scenario, id string, want int64) error {
	var have int64
	if err := in(ctx, tx, s.st.rowVersion).QueryRowContext(ctx, scenario, id).Scan(&have); err != nil {
		return translate(err)
	}
	if want > 0 && have != want {
		return fmt.Errorf("%w: row version is %d, not %d", task.ErrConflict, have, want)
	}
	return nil
}

// DeleteRow removes the row and marks its task deleted and disabled in one
// transaction; a missing row is task.ErrNotFound.
func (s *Store) DeleteRow(ctx context.Context, scenario, id string) error {
	return s.DeleteRowIf(ctx, scenario, id, 0)
}

// DeleteRowIf is DeleteRow when the row's version is ifVersion (0: any),
// checked in the same transaction; another version is task.ErrConflict.
func (s *Store) DeleteRowIf(ctx context.Context, scenario, id string, ifVersion int64) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if ifVersion > 0 {
			var have int64
			if err := tx.QueryRowContext(ctx, qRowVersion, scenario, id).Scan(&have); err != nil {
				return translate(err)
			}
			if have != ifVersion {
				return fmt.Errorf("%w: row version is %d, not %d", task.ErrConflict, have, ifVersion)
			}
		}
		res, err := in(ctx, tx, s.st.deleteRow).ExecContext(ctx, scenario, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return cmp.Or(err, task.ErrNotFound)
		}
		_, err = in(ctx, tx, s.st.retireRowTasks).ExecContext(ctx, s.nowMS(), scenario, id, "")
		return err
	})
	if err != nil {
		return fmt.Errorf("delete row %s/%s: %w", scenario, id, err)
	}
	return nil
}

// ListRows pages a scenario's rows in id order after afterID.
func (s *Store) ListRows(ctx context.Context, scenario, afterID string, limit int) ([]*task.Row, error) {
	if err := store.CheckLimit(limit); err != nil {
		return nil, fmt.Errorf("list rows of %s: %w", scenario, err)
	}
	rows, err := queryRows(ctx, s.st.listRows, scenario, afterID, limit)
	if err != nil {
		return nil, fmt.Errorf("list rows of %s: %w", scenario, err)
	}
	return rows, nil
}

// ListUnfetchedRows returns up to limit rows with is_fetched=0, the longest
// waiting first.
func (s *Store) ListUnfetchedRows(ctx context.Context, limit int) ([]*task.Row, error) {
	if err := store.CheckLimit(limit); err != nil {
		return nil, fmt.Errorf("list unfetched rows: %w", err)
	}
	rows, err := queryRows(ctx, s.st.listUnfetched, limit)
	if err != nil {
		return nil, fmt.Errorf("list unfetched rows: %w", err)
	}
	return rows, nil
}

func queryRows(ctx context.Context, st *sql.Stmt, args ...any) ([]*task.Row, error) {
	rs, err := st.QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []*task.Row
	for rs.Next() {
		row, err := scanRow(rs)
		if err != nil {
			return nil, err
		}
		out = append(out, row)
	}
	return out, rs.Err()
}

func scanRow(sc scanner) (*task.Row, error) {
	var (
		r                                    task.Row
		fields                               string
		nextFire, lastFire, created, updated int64
	)
	err := sc.Scan(&r.Scenario, &r.ID, &fields, &r.IsFetched, &r.IsActive, &r.Error,
		&nextFire, &lastFire, &r.LastStatus, &r.Version, &created, &updated)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(strings.NewReader(fields))
	dec.UseNumber() // numbers come back exactly as written
	if err := dec.Decode(&r.Fields); err != nil {
		return nil, fmt.Errorf("decode fields of row %s/%s: %w", r.Scenario, r.ID, err)
	}
	r.NextFire, r.LastFire = store.FromUnixMS(nextFire), store.FromUnixMS(lastFire)
	r.CreatedAt, r.UpdatedAt = store.FromUnixMS(created), store.FromUnixMS(updated)
	return &r, nil
}
