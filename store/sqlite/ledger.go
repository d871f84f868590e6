package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

const runCols = `trigger_id, task_id, slot, target, trigger_type, state, attempt, node, fired_at,
	finished_at, next_attempt, error, output, params, deadline, feedback, fence`

const (
	// qInsertRun is the ledger gate. It ignores a clash on the ledger key
	// only (docs/DESIGN.md, "Storage": an OR IGNORE limited to that key), so a
	// reused trigger_id still fails loudly as task.ErrConflict. The run
	// is unlisted: the history loop lists it (schema.go, history.go).
	qInsertRun = `INSERT INTO runs (` + runCols + `, unlisted) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1)
		ON CONFLICT (task_id, slot, target) DO NOTHING`
	// qUpdateRun leaves node when ?3 is empty and feedback when ?10 is NULL
	// (a run without reports: AddFeedback owns them). It writes only while
	// the run still has the writer's fence ?12 (store.Ledger.UpdateRun). It
	// does not name
	// fired_at: SQLite rewrites the entries of every index on a column an
	// UPDATE sets, even to the same value, and fired_at is in the three
	// history indexes while it rarely changes after the insert;
	// qUpdateRunFired sets it, only when it differs. No RETURNING: SQLite
	// gathers returned rows in an ephemeral table, opened and closed per
	// statement, which costs more than the second statement saves.
	qUpdateRun = `UPDATE runs SET state = ?1, attempt = ?2, node = CASE WHEN ?3 <> '' THEN ?3 ELSE node END,
			finished_at = ?4, next_attempt = ?5, error = ?6, output = ?7,
			params = ?8, deadline = ?9, feedback = coalesce(?10, feedback)
		WHERE trigger_id = ?11 AND fence = ?12`
	qUpdateRunFired = `UPDATE runs SET fired_at = ?1 WHERE trigger_id = ?2 AND fired_at <> ?1`
	// qDeleteRun undoes a fire whose task vanished (RecordFires).
	qDeleteRun = `DELETE FROM runs WHERE trigger_id = ?`
	qGetRun    = `SELECT ` + runCols + ` FROM runs WHERE trigger_id = ?`
	// qListRuns walks UNIQUE(task_id, slot, target) backwards.
	qListRuns = `SELECT ` + runCols + ` FROM runs WHERE task_id = ? AND slot < ?
		ORDER BY slot DESC, target DESC LIMIT ?`
	qLastSlot = `SELECT slot FROM runs WHERE task_id = ? AND trigger_type IN ` + scheduledTriggers + `
		ORDER BY slot DESC LIMIT 1`
	qUnfinishedRuns = `SELECT ` + runCols + ` FROM runs WHERE task_id = ? AND ` + unfinishedWhere + `
		ORDER BY slot`
	// qTakeOverRun is the fenced take-over: one conditional write.
	qTakeOverRun = `UPDATE runs SET node = ?1, fence = fence + 1
		WHERE trigger_id = ?2 AND fence = ?3 AND deadline = ?4 AND ` + unfinishedWhere + ` RETURNING ` + runCols
	// qLedgerOwner reads which trigger id holds a ledger key.
	qLedgerOwner = `SELECT trigger_id FROM runs WHERE task_id = ? AND slot = ? AND target = ?`
)

// InsertRun inserts r unless its (TaskID, Slot, Target) is already in the
// ledger, and reports whether it did. TriggerID and TaskID are required; an
// empty State is stored as pending; Error and Output are capped at
// task.MaxOutput; Params, Deadline and Feedback are stored as given (a
// restored run keeps its reports). A TriggerID already used by another key
// is task.ErrConflict.
func (s *Store) InsertRun(ctx context.Context, r *task.Run) (bool, error) {
	args, err := insertRunArgs(r)
	if err != nil {
		return false, err
	}
	ok, err := insertRun(ctx, s.st.insertRun, args)
	if err != nil {
		return false, fmt.Errorf("insert run %s: %w", r.TriggerID, err)
	}
	return ok, nil
}

// RecordFire inserts r as InsertRun does and, only when it inserted,
// applies status as SetTaskStatus does, in one transaction: when status
// fails (a missing task is task.ErrNotFound) the run is not stored either.
// It reports whether it inserted.
func (s *Store) RecordFire(ctx context.Context, r *task.Run, status store.TaskStatusParams) (bool, error) {
	args, err := insertRunArgs(r)
	if err != nil {
		return false, fmt.Errorf("record fire: %w", err)
	}
	var inserted bool
	err = s.inTx(ctx, func(tx *sql.Tx) error {
		ok, err := insertRun(ctx, in(ctx, tx, s.st.insertRun), args)
		if err != nil || !ok {
			return err
		}
		if err := s.statusIn(ctx, tx).apply(ctx, status); err != nil {
			return fmt.Errorf("set status of task %s: %w", status.TaskID, err)
		}
		inserted = true
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("record fire %s: %w", r.TriggerID, err)
	}
	return inserted, nil
}

// insertRunArgs checks r and returns the arguments of qInsertRun.
func insertRunArgs(r *task.Run) ([]any, error) {
	if r.TriggerID == "" {
		return nil, fmt.Errorf("insert run: %w", task.Invalid("trigger_id", "required"))
	}
	if r.TaskID == "" {
		return nil, fmt.Errorf("insert run %s: %w", r.TriggerID, task.Invalid("task_id", "required"))
	}
	state := r.State
	if state == "" {
		state = task.RunPending
	}
	params, err := encodeParams(r.Params)
	if err != nil {
		return nil, fmt.Errorf("insert run %s: %w", r.TriggerID, err)
	}
	feedback, err := encodeFeedback(r.Feedback)
	if err != nil {
		return nil, fmt.Errorf("insert run %s: %w", r.TriggerID, err)
	}
	return []any{r.TriggerID, r.TaskID, store.UnixMS(r.Slot), r.Target, string(r.TriggerType), string(state),
		r.Attempt, r.Node, store.UnixMS(r.FiredAt), store.UnixMS(r.FinishedAt), store.UnixMS(r.NextAttempt),
		task.Truncate(r.Error, task.MaxOutput), task.Truncate(r.Output, task.MaxOutput),
		params, store.UnixMS(r.Deadline), feedback, r.Fence}, nil
}

// insertRun runs the ledger gate and reports whether it inserted.
func insertRun(ctx context.Context, st *sql.Stmt, args []any) (bool, error) {
	res, err := st.ExecContext(ctx, args...)
	if err != nil {
		return false, translate(err)
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// UpdateRun stores r's state, attempt, node (when set), times (Deadline
// too), error, output and params, found by TriggerID; task.ErrNotFound when
// absent. r's Feedback replaces the stored reports only when it is not nil:
// a run value read before a report came in does not erase it.
func (s *Store) UpdateRun(ctx context.Context, r *task.Run) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		return s.updateRun(ctx, tx, r)
	})
	if err != nil {
		return fmt.Errorf("update run %s: %w", r.TriggerID, err)
	}
	return nil
}

// FinishRun stores r as UpdateRun does and applies status as SetTaskStatus
// does, in one transaction: all of it or, when either fails (a missing run
// or task is task.ErrNotFound), nothing.
func (s *Store) FinishRun(ctx context.Context, r *task.Run, status store.TaskStatusParams) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if err := s.updateRun(ctx, tx, r); err != nil {
			return err
		}
		if err := s.statusIn(ctx, tx).apply(ctx, status); err != nil {
			return fmt.Errorf("set status of task %s: %w", status.TaskID, err)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("finish run %s: %w", r.TriggerID, err)
	}
	return nil
}

// updateRun stores r in tx (qUpdateRunFired, then qUpdateRun);
// task.ErrNotFound when r is absent.
func (s *Store) updateRun(ctx context.Context, tx *sql.Tx, r *task.Run) error {
	return s.runWriterIn(ctx, tx).update(ctx, r)
}

// runWriter makes fenced run writes with statements bound to one
// transaction once, for a batch of them.
type runWriter struct {
	fired, set, runExists *sql.Stmt
}

// runWriterIn binds the run write statements to tx.
func (s *Store) runWriterIn(ctx context.Context, tx *sql.Tx) runWriter {
	return runWriter{fired: in(ctx, tx, s.st.updateRunFired), set: in(ctx, tx, s.st.updateRun),
		runExists: in(ctx, tx, s.st.runExists)}
}

// update stores r (UpdateRun), conditional on its fence: a refused write
// changes nothing and is task.ErrFenced (task.ErrNotFound when the run is
// missing). The fired_at write, which is not fenced itself, follows the
// fenced one.
func (w runWriter) update(ctx context.Context, r *task.Run) error {
	params, err := encodeParams(r.Params)
	if err != nil {
		return err
	}
	var feedback any // NULL keeps the stored reports
	if r.Feedback != nil {
		if feedback, err = encodeFeedback(r.Feedback); err != nil {
			return err
		}
	}
	n, err := execCount(ctx, w.set, string(r.State), r.Attempt, r.Node,
		store.UnixMS(r.FinishedAt), store.UnixMS(r.NextAttempt), task.Truncate(r.Error, task.MaxOutput),
		task.Truncate(r.Output, task.MaxOutput), params, store.UnixMS(r.Deadline), feedback, r.TriggerID, r.Fence)
	if err != nil {
		return err
	}
	if n == 0 {
		var one int
		if err := translate(w.runExists.QueryRowContext(ctx, r.TriggerID).Scan(&one)); err != nil {
			return err
		}
		return task.ErrFenced
	}
	if _, err := w.fired.ExecContext(ctx, store.UnixMS(r.FiredAt), r.TriggerID); err != nil {
		return translate(err)
	}
	return nil
}

// GetRun returns the run with triggerID or task.ErrNotFound.
func (s *Store) GetRun(ctx context.Context, triggerID string) (*task.Run, error) {
	r, err := scanRun(s.st.getRun.QueryRowContext(ctx, triggerID))
	if err != nil {
		return nil, fmt.Errorf("get run %s: %w", triggerID, translate(err))
	}
	return r, nil
}

// ListRuns returns a task's runs, newest slot first (ties by target,
// descending), with slots before beforeSlot when it is not zero.
func (s *Store) ListRuns(ctx context.Context, taskID string, beforeSlot time.Time, limit int) ([]*task.Run, error) {
	if err := store.CheckLimit(limit); err != nil {
		return nil, fmt.Errorf("list runs of %s: %w", taskID, err)
	}
	before := int64(math.MaxInt64)
	if !beforeSlot.IsZero() {
		before = store.UnixMS(beforeSlot)
	}
	runs, err := queryRuns(ctx, s.st.listRuns, taskID, before, limit)
	if err != nil {
		return nil, fmt.Errorf("list runs of %s: %w", taskID, err)
	}
	return runs, nil
}

// LastSlot returns the latest schedule or misfire slot of taskID, or the
// zero time.
func (s *Store) LastSlot(ctx context.Context, taskID string) (time.Time, error) {
	var slot int64
	err := s.st.lastSlot.QueryRowContext(ctx, taskID).Scan(&slot)
	if errors.Is(err, sql.ErrNoRows) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("last slot of %s: %w", taskID, err)
	}
	return store.FromUnixMS(slot), nil
}

// UnfinishedRuns returns a task's runs that are not final, oldest slot
// first.
func (s *Store) UnfinishedRuns(ctx context.Context, taskID string) ([]*task.Run, error) {
	runs, err := queryRuns(ctx, s.st.unfinishedRuns, taskID)
	if err != nil {
		return nil, fmt.Errorf("unfinished runs of %s: %w", taskID, err)
	}
	return runs, nil
}

func queryRuns(ctx context.Context, st *sql.Stmt, args ...any) ([]*task.Run, error) {
	rs, err := st.QueryContext(ctx, args...)
	if err != nil {
		return nil, err
	}
	defer rs.Close()
	var out []*task.Run
	for rs.Next() {
		r, err := scanRun(rs)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rs.Err()
}

// scanRun reads the runCols of one row.
func scanRun(sc scanner) (*task.Run, error) {
	var (
		r                                      task.Run
		slot, fired, finished, retry, deadline int64
		params, feedback                       string
	)
	err := sc.Scan(&r.TriggerID, &r.TaskID, &slot, &r.Target, &r.TriggerType, &r.State, &r.Attempt,
		&r.Node, &fired, &finished, &retry, &r.Error, &r.Output, &params, &deadline, &feedback, &r.Fence)
	if err != nil {
		return nil, err
	}
	r.Slot, r.FiredAt, r.FinishedAt, r.NextAttempt = store.FromUnixMS(slot), store.FromUnixMS(fired), store.FromUnixMS(finished), store.FromUnixMS(retry)
	r.Deadline = store.FromUnixMS(deadline)
	if r.Params, err = decodeParams(params); err != nil {
		return nil, fmt.Errorf("decode params of run %s: %w", r.TriggerID, err)
	}
	if r.Feedback, err = decodeFeedback(feedback); err != nil {
		return nil, fmt.Errorf("decode feedback of run %s: %w", r.TriggerID, err)
	}
	return &r, nil
}

// encodeParams returns the runs.params text of p, empty when p is.
func encodeParams(p map[string]string) (string, error) {
	if len(p) == 0 {
		return "", nil
	}
	b, err := json.Marshal(p)
	return string(b), err
}

// decodeParams reads runs.params; empty text and "null" are none.
func decodeParams(text string) (map[string]string, error) {
	if text == "" || text == "null" {
		return nil, nil
	}
	var p map[string]string
	if err := json.Unmarshal([]byte(text), &p); err != nil {
		return nil, err
	}
	if len(p) == 0 {
		return nil, nil
	}
	return p, nil
}

// feedbackDoc is one report in runs.feedback, its time in unix
// milliseconds like every time the store keeps.
type feedbackDoc struct {
	At       int64  `json:"at"`
	Status   int    `json:"status"`
	Message  string `json:"message,omitempty"`
	Output   string `json:"output,omitempty"`
	Progress bool   `json:"progress,omitempty"`
}

// encodeFeedback returns the runs.feedback text of fs, empty when fs is.
func encodeFeedback(fs []task.Feedback) (string, error) {
	if len(fs) == 0 {
		return "", nil
	}
	docs := make([]feedbackDoc, len(fs))
	for i, f := range fs {
		docs[i] = feedbackDoc{At: store.UnixMS(f.At), Status: f.Status, Message: f.Message, Output: f.Output,
			Progress: f.Progress}
	}
	b, err := json.Marshal(docs)
	return string(b), err
}

// decodeFeedback reads runs.feedback; empty text and "null" are none.
func decodeFeedback(text string) ([]task.Feedback, error) {
	if text == "" || text == "null" {
		return nil, nil
	}
	var docs []feedbackDoc
	if err := json.Unmarshal([]byte(text), &docs); err != nil {
		return nil, err
	}
	if len(docs) == 0 {
		return nil, nil
	}
	fs := make([]task.Feedback, len(docs))
	for i, d := range docs {
		fs[i] = task.Feedback{At: store.FromUnixMS(d.At), Status: d.Status, Message: d.Message, Output: d.Output,
			Progress: d.Progress}
	}
	return fs, nil
}

// ownsLedgerKey reports whether r's ledger key is held by r's own trigger
// id (r was stored by an earlier try of the same write).
func (s *Store) ownsLedgerKey(ctx context.Context, tx *sql.Tx, r *task.Run) (bool, error) {
	var id string
	err := in(ctx, tx, s.st.ledgerOwner).QueryRowContext(ctx, r.TaskID, store.UnixMS(r.Slot), r.Target).Scan(&id)
	if err != nil {
		return false, translate(err)
	}
	return id == r.TriggerID, nil
}

// fencedOrMissing explains a fenced run write that changed nothing:
// task.ErrFenced when the run exists, task.ErrNotFound when it does not.
func (s *Store) fencedOrMissing(ctx context.Context, tx *sql.Tx, triggerID string) error {
	var one int
	if err := translate(in(ctx, tx, s.st.runExists).QueryRowContext(ctx, triggerID).Scan(&one)); err != nil {
		return err
	}
	return task.ErrFenced
}

// TakeOverRun makes p.Node the owner of an unfinished run still at
// p.Fence, bumping the fence (store.Ledger.TakeOverRun).
func (s *Store) TakeOverRun(ctx context.Context, p store.TakeOverParams) (*task.Run, error) {
	if p.TriggerID == "" || p.Node == "" {
		return nil, fmt.Errorf("take over run: %w", task.Invalid("trigger_id", "trigger id and node are required"))
	}
	var r *task.Run
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		r, err = scanRun(in(ctx, tx, s.st.takeOverRun).QueryRowContext(ctx, p.Node, p.TriggerID, p.Fence, store.UnixMS(p.Deadline)))
		if errors.Is(err, sql.ErrNoRows) {
			return s.fencedOrMissing(ctx, tx, p.TriggerID)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("take over run %s at fence %d: %w", p.TriggerID, p.Fence, err)
	}
	return r, nil
}

// qStrandedRuns is the rescuer's query with nLive live and nQuiet quiet
// node ids.
func qStrandedRuns(nLive, nQuiet int) string {
	marks := func(n int) string { return strings.TrimSuffix(strings.Repeat("?,", n), ",") }
	return `SELECT ` + runCols + ` FROM runs INDEXED BY ix_runs_unfinished
		WHERE ` + unfinishedWhere + ` AND ((node NOT IN (` + marks(nLive) + `) AND node NOT IN (` + marks(nQuiet) + `))
			OR (node IN (` + marks(nQuiet) + `) AND (state != 'running' OR deadline < ?))
			OR (node = ? AND fired_at < ?) OR (deadline > 0 AND deadline < ?))
		ORDER BY task_id, slot LIMIT ?`
}

// StrandedRuns returns the unfinished runs p calls stranded, by task and
// slot (store.Ledger.StrandedRuns). It walks ix_runs_unfinished, which
// holds only unfinished runs, in its order.
func (s *Store) StrandedRuns(ctx context.Context, p store.StrandedParams) ([]*task.Run, error) {
	if err := store.CheckLimit(p.Limit); err != nil {
		return nil, fmt.Errorf("stranded runs: %w", err)
	}
	args := make([]any, 0, len(p.Live)+2*len(p.Quiet)+5)
	for _, id := range p.Live {
		args = append(args, id)
	}
	for range 2 {
		for _, id := range p.Quiet {
			args = append(args, id)
		}
	}
	args = append(args, store.UnixMS(p.QuietBefore), p.Self, store.UnixMS(p.SelfSince), store.UnixMS(p.DeadlineBefore), p.Limit)
	rs, err := s.r.QueryContext(ctx, qStrandedRuns(len(p.Live), len(p.Quiet)), args...)
	if err != nil {
		return nil, fmt.Errorf("stranded runs: %w", err)
	}
	defer rs.Close()
	var runs []*task.Run
	for rs.Next() {
		r, err := scanRun(rs)
		if err != nil {
			return nil, fmt.Errorf("stranded runs: %w", err)
		}
		runs = append(runs, r)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("stranded runs: %w", err)
	}
	return runs, nil
}
