package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"cronsheet/store"
	"cronsheet/task"
)

// retentionSchema holds the indexes the retention patrol walks in age
// order: outbox messages by created_at, audit records by at, flow
// executions by started_at (runs use ix_runs_final_age, jobs
// ix_task_created). Each costs one index entry per insert and none on
// update: none of the three columns ever changes.
const retentionSchema = `
CREATE INDEX IF NOT EXISTS ix_outbox_created ON outbox (created_at);
CREATE INDEX IF NOT EXISTS ix_audit_at ON audit (at);
CREATE INDEX IF NOT EXISTS ix_flow_executions_started ON flow_executions (started_at, id);
`

// pruneSpec is how one kind is walked and deleted.
type pruneSpec struct {
	from   string // table, with its INDEXED BY
	age    string // the age column (unix ms)
	key    string // the tie-break column
	intKey bool   // key is an integer id (store.IntKey)
	where  string // what counts as an item of the kind
	// del deletes the examined items (?1 a JSON array of keys) that may
	// go; ?2 is Before's age in unix ms.
	del string
}

var pruneSpecs = map[store.RetentionKind]pruneSpec{
	store.RetainRuns: {from: "runs INDEXED BY ix_runs_final_age", age: "finished_at", key: "id", intKey: true,
		where: finalWhere,
		del: `DELETE FROM runs WHERE id IN (SELECT value FROM json_each(?1)) AND ` + finalWhere + `
			AND EXISTS (SELECT 1 FROM runs n WHERE n.task_id = runs.task_id AND n.slot > runs.slot)
			AND (runs.trigger_type NOT IN ` + scheduledTriggers + ` OR EXISTS (SELECT 1 FROM runs n INDEXED BY ix_runs_sched
				WHERE n.task_id = runs.task_id AND n.trigger_type IN ` + scheduledTriggers + ` AND n.slot > runs.slot))`},
	store.RetainJobs: {from: "time_task INDEXED BY ix_task_created", age: "created_at", key: "task_id",
		where: "scenario = '" + task.JobScenario + "'"},
	store.RetainOutbox: {from: "outbox INDEXED BY ix_outbox_created", age: "created_at", key: "id", intKey: true,
		where: "1", del: `DELETE FROM outbox WHERE id IN (SELECT value FROM json_each(?1))`},
	store.RetainAudit: {from: "audit INDEXED BY ix_audit_at", age: "at", key: "id", intKey: true,
		where: "1", del: `DELETE FROM audit WHERE id IN (SELECT value FROM json_each(?1))`},
	store.RetainFlowExecutions: {from: "flow_executions INDEXED BY ix_flow_executions_started", age: "started_at", key: "id",
		where: "1", del: `DELETE FROM flow_executions WHERE id IN (SELECT value FROM json_each(?1)) AND state <> '` + string(task.ExecRunning) + `'`},
}

// qJobsFinal selects, among the jobs ?1 (a JSON array of task ids), those
// that may go: closed or done, unclaimed, last updated before ?2
// (PruneParams.UpdatedBelow), with no run that is not final.
const qJobsFinal = `SELECT task_id FROM time_task WHERE task_id IN (SELECT value FROM json_each(?1))
	AND scenario = '` + task.JobScenario + `' AND is_claimed = 0 AND updated_at < ?2
	AND (is_done = 1 OR json_extract(doc, '$.state') = '` + string(task.StateClosed) + `')
	AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.task_id = time_task.task_id AND r.state NOT IN ` + finalStates + `)`

// qJobsDelete deletes jobs ?1 (a JSON array of task ids) with their
// events, keys and runs; the last statement's count is the jobs'.
var qJobsDelete = []string{
	`DELETE FROM job_events WHERE job_id IN (SELECT value FROM json_each(?1))`,
	`DELETE FROM job_keys WHERE task_id IN (SELECT value FROM json_each(?1))`,
	`DELETE FROM runs WHERE task_id IN (SELECT value FROM json_each(?1))`,
	`DELETE FROM time_task WHERE task_id IN (SELECT value FROM json_each(?1))`,
}

var _ store.Retention = (*Store)(nil)

// RetentionCutoff returns the position of the keep-th newest item of kind
// (store.Retention): one index walk from the newest end.
func (s *Store) RetentionCutoff(ctx context.Context, kind store.RetentionKind, keep int) (store.Cursor, error) {
	sp, ok := pruneSpecs[kind]
	if !ok || keep < 1 {
		return store.Cursor{}, fmt.Errorf("retention cutoff: %w", task.Invalid("kind", "unknown kind %q or keep %d below 1", kind, keep))
	}
	q := fmt.Sprintf(`SELECT %s, %s FROM %s WHERE %s ORDER BY %s DESC, %s DESC LIMIT 1 OFFSET ?`,
		sp.age, sp.key, sp.from, sp.where, sp.age, sp.key)
	var age int64
	var key any
	err := s.r.QueryRowContext(ctx, q, keep-1).Scan(&age, &key)
	if err == sql.ErrNoRows {
		return store.Cursor{}, nil
	}
	if err != nil {
		return store.Cursor{}, fmt.Errorf("retention cutoff of %s: %w", kind, translate(err))
	}
	return store.Cursor{At: store.FromUnixMS(age), ID: sp.keyText(key)}, nil
}

// keyText is a key as a Cursor.ID.
func (sp pruneSpec) keyText(k any) string {
	switch v := k.(type) {
	case int64:
		return store.IntKey(v)
	case string:
		return v
	case []byte:
		return string(v)
	}
	return fmt.Sprint(k)
}

// keyArg is a Cursor.ID as the key column's value.
func (sp pruneSpec) keyArg(id string) any {
	if !sp.intKey {
		return id
	}
	n, _ := strconv.ParseInt(id, 10, 64) // "" is 0: before every id
	return n
}

// Prune examines and deletes one batch of p.Kind in one write
// transaction (store.Retention).
func (s *Store) Prune(ctx context.Context, p store.PruneParams) (store.PruneResult, error) {
	res := store.PruneResult{Next: p.After}
	if err := p.Check(); err != nil {
		return res, fmt.Errorf("prune: %w", err)
	}
	if p.Before.IsZero() {
		return res, nil
	}
	sp := pruneSpecs[p.Kind]
	q := fmt.Sprintf(`SELECT %[1]s, %[2]s FROM %[3]s WHERE %[4]s
		AND %[1]s >= ?1 AND (%[1]s > ?1 OR %[2]s > ?2) AND %[1]s <= ?3 AND (%[1]s < ?3 OR %[2]s < ?4)
		ORDER BY %[1]s, %[2]s LIMIT ?5`, sp.age, sp.key, sp.from, sp.where)
	before := store.UnixMS(p.Before.At)
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		keys, next, err := sp.examine(ctx, tx, q, p, before)
		if err != nil || len(keys) == 0 {
			return err
		}
		res.Examined, res.Next = len(keys), next
		arg, err := json.Marshal(keys)
		if err != nil {
			return err
		}
		if p.Kind == store.RetainJobs {
			res.Deleted, err = deleteJobs(ctx, tx, string(arg), p.UpdatedBelow())
			return err
		}
		r, err := tx.ExecContext(ctx, sp.del, string(arg), before)
		if err != nil {
			return err
		}
		n, err := r.RowsAffected()
		res.Deleted = int(n)
		return err
	})
	if err != nil {
		return store.PruneResult{Next: p.After}, fmt.Errorf("prune %s: %w", p.Kind, translate(err))
	}
	return res, nil
}

// examine reads one batch's keys in age order and the cursor of the last.
func (sp pruneSpec) examine(ctx context.Context, tx *sql.Tx, q string, p store.PruneParams, before int64) ([]any, store.Cursor, error) {
	rows, err := tx.QueryContext(ctx, q, store.UnixMS(p.After.At), sp.keyArg(p.After.ID), before, sp.keyArg(p.Before.ID), p.Limit)
	if err != nil {
		return nil, store.Cursor{}, err
	}
	defer rows.Close()
	var keys []any
	var next store.Cursor
	for rows.Next() {
		var age int64
		var key any
		if err := rows.Scan(&age, &key); err != nil {
			return nil, store.Cursor{}, err
		}
		if b, ok := key.([]byte); ok {
			key = string(b)
		}
		keys = append(keys, key)
		next = store.Cursor{At: store.FromUnixMS(age), ID: sp.keyText(key)}
	}
	return keys, next, rows.Err()
}

// deleteJobs deletes those of jobs (a JSON array of task ids) that may go,
// last updated before updatedBelow (unix ms), with their events, keys and
// runs, and returns how many jobs went.
func deleteJobs(ctx context.Context, tx *sql.Tx, jobs string, updatedBelow int64) (int, error) {
	rows, err := tx.QueryContext(ctx, qJobsFinal, jobs, updatedBelow)
	if err != nil {
		return 0, err
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, err
		}
		ids = append(ids, id)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil || len(ids) == 0 {
		return 0, err
	}
	arg, err := json.Marshal(ids)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, q := range qJobsDelete {
		r, err := tx.ExecContext(ctx, q, string(arg))
		if err != nil {
			return 0, err
		}
		if n, err = r.RowsAffected(); err != nil {
			return 0, err
		}
	}
	return int(n), nil
}
