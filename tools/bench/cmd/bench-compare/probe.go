package main

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the driver cronsheet's store uses, at the version its go.mod names

	csqlite "cronsheet/store/sqlite"
	"cronsheet/tools/bench/internal/benchkit"
)

// probeChunk is how many jobs one transaction of the probe writes.
const probeChunk = 500

// probeResult is one run of the physical-limit probe: n jobs written with
// the minimum a job needs, on one schema.
type probeResult struct {
	schema     string  // which tables: "minimal" or "cronsheet's"
	runsBTrees int     // the runs table and its indexes
	n          int     // jobs
	intake     float64 // jobs/s: one task insert each
	drain      float64 // jobs/s: fire (run insert) + finish (run update, task update)
}

// probeMinimalSchema is the least a job's store needs: a task table and a
// runs table with only their keys (runs: its rowid, trigger_id and the
// ledger key: three B-trees). Columns match cronsheet's, so rows are the
// same size.
const probeMinimalSchema = `
CREATE TABLE time_task (
	id INTEGER PRIMARY KEY, task_id TEXT NOT NULL UNIQUE, scenario TEXT NOT NULL, row_id TEXT NOT NULL DEFAULT '',
	doc TEXT NOT NULL, is_enable INTEGER NOT NULL DEFAULT 0, is_claimed INTEGER NOT NULL DEFAULT 0,
	claimed_by TEXT NOT NULL DEFAULT '', lease_until INTEGER NOT NULL DEFAULT 0, is_done INTEGER NOT NULL DEFAULT 0,
	deleted INTEGER NOT NULL DEFAULT 0, next_fire INTEGER NOT NULL DEFAULT 0, last_fire INTEGER NOT NULL DEFAULT 0,
	last_status TEXT NOT NULL DEFAULT '', version INTEGER NOT NULL DEFAULT 1, created_at INTEGER NOT NULL DEFAULT 0,
	updated_at INTEGER NOT NULL DEFAULT 0, arm_at INTEGER NOT NULL DEFAULT 0);
CREATE TABLE runs (
	id INTEGER PRIMARY KEY, trigger_id TEXT NOT NULL UNIQUE, task_id TEXT NOT NULL, slot INTEGER NOT NULL,
	target TEXT NOT NULL DEFAULT '', trigger_type TEXT NOT NULL, state TEXT NOT NULL, attempt INTEGER NOT NULL DEFAULT 0,
	node TEXT NOT NULL DEFAULT '', fired_at INTEGER NOT NULL DEFAULT 0, finished_at INTEGER NOT NULL DEFAULT 0,
	next_attempt INTEGER NOT NULL DEFAULT 0, error TEXT NOT NULL DEFAULT '', output TEXT NOT NULL DEFAULT '',
	params TEXT NOT NULL DEFAULT '', deadline INTEGER NOT NULL DEFAULT 0, feedback TEXT NOT NULL DEFAULT '',
	fence INTEGER NOT NULL DEFAULT 0, UNIQUE (task_id, slot, target));
`

// The probe's statements: what a delayed HTTP job must write at least.
const (
	probeInsertTask = `INSERT INTO time_task (task_id, scenario, doc, is_enable, next_fire, arm_at, created_at, updated_at)
		VALUES (?, 'jobs', ?, 1, ?, ?, ?, ?)`
	probeInsertRun = `INSERT INTO runs (trigger_id, task_id, slot, target, trigger_type, state, node, fired_at, fence)
		VALUES (?, ?, ?, '', 'schedule', 'running', 'probe', ?, 1) ON CONFLICT (task_id, slot, target) DO NOTHING`
	probeUpdateRun = `UPDATE runs SET state = 'done', attempt = 1, finished_at = ?, output = '200 OK'
		WHERE trigger_id = ? AND fence = 1`
	probeUpdateTask = `UPDATE time_task SET last_fire = ?, last_status = 'done', next_fire = 0, is_done = 1, updated_at = ?
		WHERE task_id = ?`
)

// runProbe measures the SQLite limit on this machine: n jobs through the
// same driver and connection settings as cronsheet's store (WAL,
// synchronous NORMAL, BEGIN IMMEDIATE, one connection), 500 rows a
// transaction: one task insert each at intake, then, 500 jobs at a time,
// their runs inserted (the fire) and, in the next transaction, the runs
// updated and the tasks updated (the outcome). It runs once on the
// minimal tables and once on the schema cronsheet's store creates.
func runProbe(dir string, n int) ([]probeResult, error) {
	var out []probeResult
	for _, schema := range []string{"minimal", "cronsheet's"} {
		settle()
		r, err := probeOnce(filepath.Join(dir, "probe-"+strings.TrimSuffix(schema, "'s")+".db"), schema, n)
		if err != nil {
			return nil, fmt.Errorf("probe on %s schema: %w", schema, err)
		}
		benchkit.Progress("probe, %s schema (runs: %d B-trees), %d jobs: intake %.0f/s, fire + finish %.0f/s",
			schema, r.runsBTrees, n, r.intake, r.drain)
		out = append(out, r)
	}
	return out, nil
}

// probeOnce runs the probe on a new file at path.
func probeOnce(path, schema string, n int) (probeResult, error) {
	ctx := context.Background()
	r := probeResult{schema: schema, n: n}
	if schema != "minimal" {
		st, err := csqlite.Open(ctx, path) // creates cronsheet's tables and indexes
		if err != nil {
			return r, err
		}
		if err := st.Close(); err != nil {
			return r, err
		}
	}
	db, err := sql.Open("sqlite", "file:"+path+
		"?_journal_mode=WAL&_synchronous=NORMAL&_busy_timeout=5000&_txlock=immediate&_pragma=cache_size(-65536)")
	if err != nil {
		return r, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	if schema == "minimal" {
		if _, err := db.ExecContext(ctx, probeMinimalSchema); err != nil {
			return r, err
		}
	}
	if err := db.QueryRowContext(ctx, `SELECT 1 + count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'runs'`).
		Scan(&r.runsBTrees); err != nil {
		return r, err
	}
	due := time.Now().Add(time.Hour).UnixMilli()
	doc := `{"kind":"job","schedule":{"at":"2026-12-05T00:00:00Z"},"action":{"type":"http","method":"POST",` +
		`"url":"http://127.0.0.1:9/hook","body":"{\"i\":1}"},"job":{"state":"scheduled"}}`
	t0 := time.Now()
	err = probeChunks(ctx, db, n, []string{probeInsertTask}, func(i int) [][]any {
		now := time.Now().UnixMilli()
		return [][]any{{probeID("t", i), doc, due, due, now, now}}
	})
	if err != nil {
		return r, fmt.Errorf("intake: %w", err)
	}
	r.intake = float64(n) / time.Since(t0).Seconds()

	t0 = time.Now()
	for lo := 0; lo < n; lo += probeChunk {
		hi := min(lo+probeChunk, n)
		fire := func(i int) [][]any {
			return [][]any{{probeID("r", lo+i), probeID("t", lo+i), due, time.Now().UnixMilli()}}
		}
		finish := func(i int) [][]any {
			now := time.Now().UnixMilli()
			return [][]any{{now, probeID("r", lo+i)}, {due, now, probeID("t", lo+i)}}
		}
		if err := probeChunks(ctx, db, hi-lo, []string{probeInsertRun}, fire); err != nil {
			return r, fmt.Errorf("fire: %w", err)
		}
		if err := probeChunks(ctx, db, hi-lo, []string{probeUpdateRun, probeUpdateTask}, finish); err != nil {
			return r, fmt.Errorf("finish: %w", err)
		}
	}
	r.drain = float64(n) / time.Since(t0).Seconds()
	return r, nil
}

// probeID is the probe's id of job i: a prefix and 26 characters, the
// length of cronsheet's ids.
func probeID(prefix string, i int) string { return fmt.Sprintf("%s%026d", prefix, i) }

// probeChunks writes n items, probeChunk to a transaction: item i runs
// each of qs with the matching arguments of args(i).
func probeChunks(ctx context.Context, db *sql.DB, n int, qs []string, args func(i int) [][]any) error {
	for lo := 0; lo < n; lo += probeChunk {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		sts := make([]*sql.Stmt, len(qs))
		for j, q := range qs {
			if sts[j], err = tx.PrepareContext(ctx, q); err != nil {
				_ = tx.Rollback()
				return err
			}
		}
		for i := lo; i < min(lo+probeChunk, n); i++ {
			for j, a := range args(i) {
				if _, err := sts[j].ExecContext(ctx, a...); err != nil {
					_ = tx.Rollback()
					return err
				}
			}
		}
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	return nil
}
