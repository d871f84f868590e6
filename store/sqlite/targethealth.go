package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

var _ store.TargetHealthBook = (*Store)(nil)

// targetHealthSchema holds the targets' health (store.TargetHealthBook):
// one row per target and source ('d' deliveries, 'p' probe) with the
// parts store.HealthParts names, and the last probe slot claimed per
// target. Like cc_slots, the tables have no schema version of their own:
// CREATE … IF NOT EXISTS adds them to an existing file.
const targetHealthSchema = `
CREATE TABLE IF NOT EXISTS target_health (
	target TEXT    NOT NULL,
	source TEXT    NOT NULL,
	s      INTEGER NOT NULL DEFAULT 0,
	f      INTEGER NOT NULL DEFAULT 0,
	e      TEXT    NOT NULL DEFAULT '',
	c      INTEGER NOT NULL DEFAULT 0,
	b      INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (target, source)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS target_probe_claims (
	target TEXT    NOT NULL PRIMARY KEY,
	slot   INTEGER NOT NULL
) WITHOUT ROWID;
`

const (
	qHealthGet    = `SELECT s, f, e, c, b FROM target_health WHERE target = ? AND source = ?`
	qHealthUpsert = `INSERT INTO target_health (target, source, s, f, e, c, b) VALUES (?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (target, source) DO UPDATE SET s = excluded.s, f = excluded.f, e = excluded.e, c = excluded.c, b = excluded.b`
	qProbeClaim = `INSERT INTO target_probe_claims (target, slot) VALUES (?, ?)
		ON CONFLICT (target) DO UPDATE SET slot = excluded.slot WHERE slot < excluded.slot`
	qHealthDelete = `DELETE FROM target_health WHERE target = ?`
	qClaimsDelete = `DELETE FROM target_probe_claims WHERE target = ?`
)

// forgetHealth deletes a deleted target's health and probe claim, so a
// target made again with its id starts without them.
func (s *Store) forgetHealth(ctx context.Context, id string) error {
	_, err := s.w.ExecContext(ctx, qHealthDelete, id)
	if err == nil {
		_, err = s.w.ExecContext(ctx, qClaimsDelete, id)
	}
	return err
}

// sourceOf is the source column of an outcome.
func sourceOf(probe bool) string {
	if probe {
		return "p"
	}
	return "d"
}

// RecordTargetOutcomes records outcomes in one write transaction: each
// one's row is read, store.HealthParts.Apply'd and written back. Writes
// to the file are serialised, so no outcome is lost to another.
func (s *Store) RecordTargetOutcomes(ctx context.Context, outcomes []store.TargetOutcome) error {
	os, err := store.CheckTargetOutcomes(outcomes)
	if err != nil {
		return fmt.Errorf("record target outcomes: %w", err)
	}
	if len(os) == 0 {
		return nil
	}
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		for _, o := range os {
			src := sourceOf(o.Probe)
			var h store.HealthParts
			err := tx.QueryRowContext(ctx, qHealthGet, o.Target, src).Scan(&h.S, &h.F, &h.E, &h.C, &h.B)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				return err
			}
			h = h.Apply(o)
			if _, err := tx.ExecContext(ctx, qHealthUpsert, o.Target, src, h.S, h.F, h.E, h.C, h.B); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("record target outcomes: %w", translate(err))
	}
	return nil
}

// TargetHealth returns the health of those of ids that have any.
func (s *Store) TargetHealth(ctx context.Context, ids []string) (map[string]task.TargetHealth, error) {
	out := map[string]task.TargetHealth{}
	if len(ids) == 0 {
		return out, nil
	}
	q := `SELECT target, source, s, f, e, c, b FROM target_health WHERE target IN (?` +
		strings.Repeat(", ?", len(ids)-1) + `)`
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	rs, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("read target health: %w", err)
	}
	defer rs.Close()
	for rs.Next() {
		var (
			id, src string
			h       store.HealthParts
		)
		if err := rs.Scan(&id, &src, &h.S, &h.F, &h.E, &h.C, &h.B); err != nil {
			return nil, fmt.Errorf("read target health: %w", err)
		}
		th := out[id]
		rec := h.Record()
		if src == "p" {
			th.Probe = &rec
		} else {
			th.HealthRecord = rec
		}
		out[id] = th
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("read target health: %w", err)
	}
	return out, nil
}

// ClaimTargetProbe moves the target's claimed slot forward to slot, in one
// statement: it changes a row only for a later slot, so of the callers of
// one slot exactly one does.
func (s *Store) ClaimTargetProbe(ctx context.Context, target string, slot time.Time) (bool, error) {
	if target == "" {
		return false, fmt.Errorf("claim target probe: %w", task.Invalid("target", "required"))
	}
	res, err := s.w.ExecContext(ctx, qProbeClaim, target, store.UnixMS(slot))
	if err != nil {
		return false, fmt.Errorf("claim probe of target %s: %w", target, translate(err))
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("claim probe of target %s: %w", target, err)
	}
	return n == 1, nil
}
