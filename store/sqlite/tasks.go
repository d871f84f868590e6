package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

const (
	qGetTask = `SELECT ` + taskCols + ` FROM time_task WHERE task_id = ?`
	// qClaim takes claimable tasks in arming order (arm_at, then id)
	// straight from ix_task_claim, which holds only claimable tasks, so
	// there is no sort; parked tasks (arm_at after ?3) stay.
	qClaim = `UPDATE time_task SET is_claimed = 1, claimed_by = ?1, lease_until = ?2, arm_at = 0
		WHERE id IN (SELECT id FROM time_task INDEXED BY ix_task_claim
			WHERE is_enable = 1 AND is_claimed = 0 AND is_done = 0 AND arm_at <= ?3
			ORDER BY arm_at, id LIMIT ?4)
		RETURNING ` + taskCols
	// qParkTask hands one claim back with its arming instant, only from
	// its holder and only at the version it was armed at.
	qParkTask = `UPDATE time_task SET is_claimed = 0, claimed_by = '', lease_until = 0, arm_at = ?1
		WHERE task_id = ?2 AND is_claimed = 1 AND claimed_by = ?3 AND version = ?4`
	qRenewLeases = `UPDATE time_task SET lease_until = ? WHERE is_claimed = 1 AND claimed_by = ?`
	qListClaimed = `SELECT task_id, is_enable, is_done, version FROM time_task
		WHERE is_claimed = 1 AND claimed_by = ?`
	qReleaseTask = `UPDATE time_task SET is_claimed = 0, claimed_by = '', lease_until = 0
		WHERE task_id = ? AND is_claimed = 1 AND claimed_by = ?`
	qReleaseClaims = `UPDATE time_task SET is_claimed = 0, claimed_by = '', lease_until = 0
		WHERE is_claimed = 1 AND claimed_by = ?`
	qTaskExists = `SELECT 1 FROM time_task WHERE task_id = ?`
	// qAnyExpired runs on a reader so that the common case, no lease has
	// ended, never takes the write lock. It walks the claimed tasks only
	// (ix_task_owner is partial on is_claimed=1); see schema.go for why
	// lease_until has no index.
	qAnyExpired = `SELECT 1 FROM time_task INDEXED BY ix_task_owner
		WHERE is_claimed = 1 AND lease_until < ? LIMIT 1`
	qReleaseExpired = `UPDATE time_task INDEXED BY ix_task_owner
		SET is_claimed = 0, claimed_by = '', lease_until = 0
		WHERE is_claimed = 1 AND lease_until < ?`
	qPurgeDeleted = `DELETE FROM time_task WHERE deleted = 1 AND is_claimed = 0`
	qMirrorStatus = `UPDATE rows SET next_fire = ?, last_fire = ?, last_status = ?
		WHERE scenario = ? AND id = ?`
)

// Fields of a task status an UPDATE sets, as bits of the index into
// stmts.setStatus.
const (
	statusNextFire = 1 << iota
	statusLastFire
	statusLastStatus
	statusDone
	statusSlot // with statusLastStatus: last_status guarded by status_slot
	statusVariants
)

// qSetTaskStatus is the status UPDATE that sets the fields of mask (its
// parameters: ?1 next_fire, ?2 last_fire, ?3 last_status, ?4 the task id,
// and with statusSlot ?5 the status's slot: last_status is then written
// only when ?5 is not before the task's status_slot, which keeps the
// latest; store.TaskStatusParams.StatusSlot).
// It names only the columns it changes: SQLite rewrites the entries of
// every index on a column an UPDATE names, and evaluates the WHERE of
// every partial index on such a column, even when the value stays the
// same — and ix_task_absent's WHERE parses the task's JSON document. A
// fire's status (last fire, running) then touches no index at all.
func qSetTaskStatus(mask int) string {
	set := []string{}
	if mask&statusNextFire != 0 {
		set = append(set, "next_fire = ?1")
	}
	if mask&statusLastFire != 0 {
		set = append(set, "last_fire = ?2")
	}
	switch {
	case mask&statusLastStatus != 0 && mask&statusSlot != 0:
		set = append(set, "last_status = CASE WHEN ?5 >= status_slot THEN ?3 ELSE last_status END",
			"status_slot = max(status_slot, ?5)")
	case mask&statusLastStatus != 0:
		set = append(set, "last_status = ?3")
	}
	if mask&statusDone != 0 {
		set = append(set, "is_done = 1, is_claimed = 0, claimed_by = '', lease_until = 0")
	}
	if len(set) == 0 {
		// Nothing to set: the task's row is read (and mirrored) as is.
		return `SELECT scenario, row_id, next_fire, last_fire, last_status
			FROM time_task WHERE task_id = ?4`
	}
	return `UPDATE time_task SET ` + strings.Join(set, ", ") + `
		WHERE task_id = ?4
		RETURNING scenario, row_id, next_fire, last_fire, last_status`
}

// qSetTaskStatusNoRow is qSetTaskStatus (mask not 0) for a task known to
// be of no row (a job): nothing to mirror, so no RETURNING, which SQLite
// serves with an ephemeral table opened and closed per statement.
func qSetTaskStatusNoRow(mask int) string {
	q := qSetTaskStatus(mask)
	return q[:strings.Index(q, "\n\t\tRETURNING")]
}

// statusMask is the fields p sets.
func statusMask(p store.TaskStatusParams) int {
	mask := 0
	if p.SetNextFire || !p.NextFire.IsZero() {
		mask |= statusNextFire
	}
	if store.UnixMS(p.LastFire) != 0 {
		mask |= statusLastFire
	}
	if p.LastStatus != "" {
		mask |= statusLastStatus
		if store.UnixMS(p.StatusSlot) != 0 {
			mask |= statusSlot
		}
	}
	if p.Done {
		mask |= statusDone
	}
	return mask
}

// statusMaskUsed reports whether statusMask can return mask: statusSlot
// comes only with statusLastStatus. Only those masks get statements.
func statusMaskUsed(mask int) bool {
	return mask&statusSlot == 0 || mask&statusLastStatus != 0
}

// statusArgs are the parameters of qSetTaskStatus(statusMask(p)).
func statusArgs(p store.TaskStatusParams) []any {
	args := []any{store.UnixMS(p.NextFire), store.UnixMS(p.LastFire), p.LastStatus, p.TaskID}
	if statusMask(p)&statusSlot != 0 {
		args = append(args, store.UnixMS(p.StatusSlot))
	}
	return args
}

// GetTask returns a task or task.ErrNotFound.
func (s *Store) GetTask(ctx context.Context, taskID string) (*task.Task, error) {
	t, err := scanTask(s.st.getTask.QueryRowContext(ctx, taskID))
	if err != nil {
		return nil, fmt.Errorf("get task %s: %w", taskID, translate(err))
	}
	return t, nil
}

// GetTasks returns the tasks with the given ids that exist
// (store.Tasks.GetTasks), reading them in chunks of 500 from the primary
// key.
func (s *Store) GetTasks(ctx context.Context, taskIDs []string) ([]*task.Task, error) {
	return tasksByID(ctx, s, "get tasks", taskCols, taskIDs, func(rs *sql.Rows) (*task.Task, error) { return scanTask(rs) })
}

// TaskHeads returns the heads of the tasks with the given ids that exist
// (store.Tasks.TaskHeads): their columns, without decoding a document.
func (s *Store) TaskHeads(ctx context.Context, taskIDs []string) ([]store.TaskHead, error) {
	const cols = `task_id, version, is_enable, is_claimed, claimed_by, lease_until, is_done,
		next_fire, last_fire, last_status, updated_at`
	return tasksByID(ctx, s, "task heads", cols, taskIDs, func(rs *sql.Rows) (store.TaskHead, error) {
		var (
			h                          store.TaskHead
			lease, next, last, updated int64
		)
		err := rs.Scan(&h.TaskID, &h.Version, &h.IsEnable, &h.IsClaimed, &h.ClaimedBy, &lease, &h.IsDone,
			&next, &last, &h.LastStatus, &updated)
		h.LeaseUntil, h.NextFire, h.LastFire = store.FromUnixMS(lease), store.FromUnixMS(next), store.FromUnixMS(last)
		h.UpdatedAt = store.FromUnixMS(updated)
		return h, err
	})
}

// tasksByID reads cols of the tasks with the given ids that exist (at most
// store.MaxStatusBatch), in chunks of 500 on a reader, each row through
// scan; what names the read in errors.
func tasksByID[T any](ctx context.Context, s *Store, what, cols string, taskIDs []string, scan func(*sql.Rows) (T, error)) ([]T, error) {
	if len(taskIDs) > store.MaxStatusBatch {
		return nil, fmt.Errorf("%s: %w", what, task.Invalid("task_ids", "at most %d", store.MaxStatusBatch))
	}
	out := make([]T, 0, len(taskIDs))
	for start := 0; start < len(taskIDs); start += 500 {
		chunk := taskIDs[start:min(start+500, len(taskIDs))]
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		q := `SELECT ` + cols + ` FROM time_task WHERE task_id IN (` +
			strings.TrimSuffix(strings.Repeat("?,", len(chunk)), ",") + `)`
		rs, err := s.r.QueryContext(ctx, q, args...)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, translate(err))
		}
		for rs.Next() {
			v, err := scan(rs)
			if err != nil {
				rs.Close()
				return nil, fmt.Errorf("%s: %w", what, err)
			}
			out = append(out, v)
		}
		err = rs.Err()
		rs.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
	}
	return out, nil
}

// ClaimTasks claims up to p.Limit due tasks for p.Owner with one
// UPDATE … RETURNING in a write transaction, so no task is returned twice.
// Claims do not change a task's version.
func (s *Store) ClaimTasks(ctx context.Context, p store.ClaimParams) ([]*task.Task, error) {
	if p.Owner == "" {
		return nil, fmt.Errorf("claim tasks: %w", task.Invalid("owner", "required"))
	}
	if err := store.CheckLimit(p.Limit); err != nil {
		return nil, fmt.Errorf("claim tasks: %w", err)
	}
	var out []*task.Task
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		armBy := int64(math.MaxInt64)
		if !p.ArmBy.IsZero() {
			armBy = store.UnixMS(p.ArmBy)
		}
		rs, err := in(ctx, tx, s.st.claim).QueryContext(ctx, p.Owner, store.UnixMS(p.LeaseUntil), armBy, p.Limit)
		if err != nil {
			return err
		}
		defer rs.Close()
		for rs.Next() {
			t, err := scanTask(rs)
			if err != nil {
				return err
			}
			out = append(out, t)
		}
		return rs.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("claim tasks for %s: %w", p.Owner, err)
	}
	return out, nil
}

// ParkTasks hands back the claims of owner named by ps that are still at
// their version (store.Tasks.ParkTasks), in transactions of 500.
func (s *Store) ParkTasks(ctx context.Context, owner string, ps []store.ParkParams) ([]string, error) {
	if err := store.CheckPark(owner, ps); err != nil {
		return nil, fmt.Errorf("park tasks: %w", err)
	}
	var parked []string
	for start := 0; start < len(ps); start += 500 {
		chunk := ps[start:min(start+500, len(ps))]
		var done []string
		err := s.inTx(ctx, func(tx *sql.Tx) error {
			done = done[:0]
			stmt := in(ctx, tx, s.st.parkTask)
			for _, p := range chunk {
				res, err := stmt.ExecContext(ctx, store.UnixMS(p.ArmAt), p.TaskID, owner, p.Version)
				if err != nil {
					return err
				}
				if n, err := res.RowsAffected(); err != nil {
					return err
				} else if n > 0 {
					done = append(done, p.TaskID)
				}
			}
			return nil
		})
		if err != nil {
			return parked, fmt.Errorf("park %d tasks of %s: %w", len(chunk), owner, err)
		}
		parked = append(parked, done...)
	}
	return parked, nil
}

// RenewLeases sets lease_until of every task claimed by owner to until.
func (s *Store) RenewLeases(ctx context.Context, owner string, until time.Time) (int, error) {
	n, err := execCount(ctx, s.st.renewLeases, store.UnixMS(until), owner)
	if err != nil {
		return 0, fmt.Errorf("renew leases of %s: %w", owner, err)
	}
	return n, nil
}

// ReleaseClaims gives up every claim of owner in one statement (through
// ix_task_owner).
func (s *Store) ReleaseClaims(ctx context.Context, owner string) (int, error) {
	if owner == "" {
		return 0, fmt.Errorf("release claims: %w", task.Invalid("owner", "required"))
	}
	n, err := execCount(ctx, s.st.releaseClaims, owner)
	if err != nil {
		return 0, fmt.Errorf("release claims of %s: %w", owner, err)
	}
	return n, nil
}

// ListClaimed returns the tasks claimed by owner, in no particular order.
func (s *Store) ListClaimed(ctx context.Context, owner string) ([]store.ClaimedTask, error) {
	rs, err := s.st.listClaimed.QueryContext(ctx, owner)
	if err != nil {
		return nil, fmt.Errorf("list tasks claimed by %s: %w", owner, err)
	}
	defer rs.Close()
	var out []store.ClaimedTask
	for rs.Next() {
		var c store.ClaimedTask
		if err := rs.Scan(&c.TaskID, &c.IsEnable, &c.IsDone, &c.Version); err != nil {
			return nil, fmt.Errorf("list tasks claimed by %s: %w", owner, err)
		}
		out = append(out, c)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("list tasks claimed by %s: %w", owner, err)
	}
	return out, nil
}

// ReleaseTask gives up owner's claim on a task. A task owner does not hold
// is left alone; a missing one is task.ErrNotFound.
func (s *Store) ReleaseTask(ctx context.Context, taskID, owner string) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := in(ctx, tx, s.st.releaseTask).ExecContext(ctx, taskID, owner)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			return err
		}
		var one int
		return translate(in(ctx, tx, s.st.taskExists).QueryRowContext(ctx, taskID).Scan(&one))
	})
	if err != nil {
		return fmt.Errorf("release task %s: %w", taskID, err)
	}
	return nil
}

// ReleaseExpired releases every claim whose lease ended before now.
func (s *Store) ReleaseExpired(ctx context.Context, now time.Time) (int, error) {
	var one int
	err := s.st.anyExpired.QueryRowContext(ctx, store.UnixMS(now)).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("release expired claims: %w", err)
	}
	n, err := execCount(ctx, s.st.releaseExpired, store.UnixMS(now))
	if err != nil {
		return 0, fmt.Errorf("release expired claims: %w", err)
	}
	return n, nil
}

// PurgeDeleted removes deleted tasks that no node holds.
func (s *Store) PurgeDeleted(ctx context.Context) (int, error) {
	n, err := execCount(ctx, s.st.purgeDeleted)
	if err != nil {
		return 0, fmt.Errorf("purge deleted tasks: %w", err)
	}
	return n, nil
}

// SetTaskStatus records fire feedback on the task and mirrors next_fire,
// last_fire and last_status onto its row in one transaction. It changes
// neither version.
func (s *Store) SetTaskStatus(ctx context.Context, p store.TaskStatusParams) error {
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		return s.statusIn(ctx, tx).apply(ctx, p)
	})
	if err != nil {
		return fmt.Errorf("set status of task %s: %w", p.TaskID, err)
	}
	return nil
}

// SetTaskStatuses applies each of ps as SetTaskStatus does, in order, in one
// transaction: all of them or, on the first error (a missing task is
// task.ErrNotFound), none. More than store.MaxStatusBatch is task.ErrInvalid.
func (s *Store) SetTaskStatuses(ctx context.Context, ps []store.TaskStatusParams) error {
	if len(ps) > store.MaxStatusBatch {
		return fmt.Errorf("set task statuses: %w",
			task.Invalid("statuses", "at most %d per call, got %d", store.MaxStatusBatch, len(ps)))
	}
	if len(ps) == 0 {
		return nil
	}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		sw := s.statusIn(ctx, tx)
		for _, p := range ps {
			if err := sw.apply(ctx, p); err != nil {
				return fmt.Errorf("task %s: %w", p.TaskID, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("set statuses of %d tasks: %w", len(ps), err)
	}
	return nil
}

// statusWriter applies task statuses inside one write transaction.
type statusWriter struct {
	tx     *sql.Tx
	all    *[statusVariants]*sql.Stmt // the store's prepared variants
	set    *[statusVariants]*sql.Stmt // those bound to tx so far
	mirror *sql.Stmt
	// allNoRow and setNoRow are the same for tasks of no row
	// (qSetTaskStatusNoRow; variant 0 is not used).
	allNoRow, setNoRow *[statusVariants]*sql.Stmt
}

// statusIn binds the status statements to tx (each variant of
// qSetTaskStatus when first used).
func (s *Store) statusIn(ctx context.Context, tx *sql.Tx) statusWriter {
	return statusWriter{tx: tx, all: &s.st.setStatus, set: new([statusVariants]*sql.Stmt),
		mirror: in(ctx, tx, s.st.mirrorStatus), allNoRow: &s.st.setStatusNoRow, setNoRow: new([statusVariants]*sql.Stmt)}
}

// applyNoRow records p on its task, which the caller knows is of no row
// (nothing to mirror): an UPDATE without RETURNING. A status that sets
// nothing reads the task as apply does.
func (sw statusWriter) applyNoRow(ctx context.Context, p store.TaskStatusParams) error {
	mask := statusMask(p)
	if mask == 0 {
		return sw.apply(ctx, p)
	}
	st := sw.setNoRow[mask]
	if st == nil {
		st = in(ctx, sw.tx, sw.allNoRow[mask])
		sw.setNoRow[mask] = st
	}
	n, err := execCount(ctx, st, statusArgs(p)...)
	if err != nil {
		return err
	}
	if n == 0 {
		return task.ErrNotFound
	}
	return nil
}

// apply records p on its task and mirrors it onto the task's row.
func (sw statusWriter) apply(ctx context.Context, p store.TaskStatusParams) error {
	mask := statusMask(p)
	st := sw.set[mask]
	if st == nil {
		st = in(ctx, sw.tx, sw.all[mask])
		sw.set[mask] = st
	}
	var (
		scenario, rowID, status string
		next, last              int64
	)
	err := st.QueryRowContext(ctx, statusArgs(p)...).Scan(&scenario, &rowID, &next, &last, &status)
	if err != nil {
		return translate(err)
	}
	if rowID == "" {
		return nil
	}
	_, err = sw.mirror.ExecContext(ctx, next, last, status, scenario, rowID)
	return err
}

// execCount runs a prepared write statement (on the writer, or bound to a
// transaction) and returns the rows it changed.
func execCount(ctx context.Context, st *sql.Stmt, args ...any) (int, error) {
	res, err := st.ExecContext(ctx, args...)
	if err != nil {
		return 0, translate(err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}
