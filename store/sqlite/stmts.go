package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
)

// stmts holds every query of the store prepared once, in Open, so that no
// call pays for SQLite's parser (it took ~23 % of the CPU of a fire before).
// Reads are prepared on the read pool, writes on the writer; database/sql
// prepares a statement again on each pool connection the first time it runs
// there. Inside a write transaction a statement is bound to it with
// tx.StmtContext, which reuses what the writer connection prepared.
type stmts struct {
	// Reads, on the read pool.
	getTask, listClaimed, anyExpired            *sql.Stmt
	rowlessClaimed                              *sql.Stmt
	getRun, listRuns, lastSlot, unfinishedRuns  *sql.Stmt
	getRow, listRows, listUnfetched, listOutbox *sql.Stmt
	getTarget, listTargets, anyDueAccepted      *sql.Stmt
	jobByKey, jobEvents                         *sql.Stmt
	// queryRuns has one statement per filter combination of QueryRuns
	// (qQueryRuns).
	queryRuns [runQueryVariants]*sql.Stmt

	// Writes, on the writer.
	claim, renewLeases, releaseTask, taskExists *sql.Stmt
	parkTask, retireRowless                     *sql.Stmt
	releaseExpired, purgeDeleted, releaseClaims *sql.Stmt
	mirrorStatus                                *sql.Stmt
	insertRun, updateRun, deleteRun             *sql.Stmt
	addOutbox, outboxByTrigger                  *sql.Stmt
	insertRow, rowVersion, updateRowFields      *sql.Stmt
	deleteRow, retireRowTasks                   *sql.Stmt
	taskForUpsert, insertTask, rescheduleTask   *sql.Stmt
	updateTask, disableRowTask, markRowFetched  *sql.Stmt
	insertTarget, targetVersion, updateTarget   *sql.Stmt
	deleteTarget, taskForState, setTaskState    *sql.Stmt
	acceptRun, runExists, runForFeedback        *sql.Stmt
	addProgress, addFinal, dueAccepted          *sql.Stmt
	timeoutRun, cleanupAge, cleanupKeep         *sql.Stmt
	updateRunFired, takeOverRun, ledgerOwner    *sql.Stmt
	registerNode, beatNode, removeNode          *sql.Stmt
	keyHolder, insertJobKey, moveJobKey         *sql.Stmt
	addJobEvent                                 *sql.Stmt
	// insertRuns and addJobEvents write insertRows rows a statement (a
	// full chunk of RecordFires and AddJobEvents; a shorter last chunk is
	// parsed when it comes).
	insertRuns, addJobEvents *sql.Stmt

	// setStatus has one statement per set of fields a status sets
	// (qSetTaskStatus).
	setStatus [statusVariants]*sql.Stmt
	// setStatusNoRow is the same for tasks of no row, without RETURNING
	// (qSetTaskStatusNoRow); variant 0, a status setting nothing, is nil.
	setStatusNoRow [statusVariants]*sql.Stmt
}

// stmtSpec names one prepared statement: where it lives, its query and on
// which pool it is prepared.
type stmtSpec struct {
	dst   **sql.Stmt
	query string
	write bool
}

// specs lists every statement of st; prepare and close walk it, and
// TestQueryPlansCoverPrepared checks that TestQueryPlans explains each.
func (st *stmts) specs() []stmtSpec {
	r := func(dst **sql.Stmt, q string) stmtSpec { return stmtSpec{dst, q, false} }
	w := func(dst **sql.Stmt, q string) stmtSpec { return stmtSpec{dst, q, true} }
	specs := []stmtSpec{
		r(&st.getTask, qGetTask),
		r(&st.listClaimed, qListClaimed),
		r(&st.rowlessClaimed, qRowlessClaimed),
		w(&st.retireRowless, qRetireRowless),
		r(&st.anyExpired, qAnyExpired),
		r(&st.getRun, qGetRun),
		r(&st.listRuns, qListRuns),
		r(&st.lastSlot, qLastSlot),
		r(&st.unfinishedRuns, qUnfinishedRuns),
		r(&st.getRow, qGetRow),
		r(&st.listRows, qListRows),
		r(&st.listUnfetched, qListUnfetchedRows),
		r(&st.listOutbox, qListOutbox),

		w(&st.claim, qClaim),
		w(&st.parkTask, qParkTask),
		w(&st.renewLeases, qRenewLeases),
		w(&st.releaseTask, qReleaseTask),
		w(&st.releaseClaims, qReleaseClaims),
		w(&st.taskExists, qTaskExists),
		w(&st.releaseExpired, qReleaseExpired),
		w(&st.purgeDeleted, qPurgeDeleted),
		w(&st.mirrorStatus, qMirrorStatus),
		w(&st.insertRun, qInsertRun),
		w(&st.updateRun, qUpdateRun),
		w(&st.takeOverRun, qTakeOverRun),
		w(&st.ledgerOwner, qLedgerOwner),
		w(&st.registerNode, qRegisterNode),
		w(&st.beatNode, qBeatNode),
		w(&st.removeNode, qRemoveNode),
		w(&st.updateRunFired, qUpdateRunFired),
		w(&st.deleteRun, qDeleteRun),
		w(&st.addOutbox, qAddOutbox),
		w(&st.outboxByTrigger, qOutboxByTrigger),
		w(&st.insertRow, qInsertRow),
		w(&st.rowVersion, qRowVersion),
		w(&st.updateRowFields, qUpdateRowFields),
		w(&st.deleteRow, qDeleteRow),
		w(&st.retireRowTasks, qRetireRowTasks),
		w(&st.taskForUpsert, qTaskForUpsert),
		w(&st.insertTask, qInsertTask),
		w(&st.rescheduleTask, qRescheduleTask),
		w(&st.updateTask, qUpdateTask),
		w(&st.disableRowTask, qDisableRowTask),
		w(&st.markRowFetched, qMarkRowFetched),

		r(&st.getTarget, qGetTarget),
		r(&st.listTargets, qListTargets),
		r(&st.anyDueAccepted, qAnyDueAccepted),
		w(&st.insertTarget, qInsertTarget),
		w(&st.targetVersion, qTargetVersion),
		w(&st.updateTarget, qUpdateTarget),
		w(&st.deleteTarget, qDeleteTarget),
		w(&st.taskForState, qTaskForState),
		w(&st.setTaskState, qSetTaskState),
		w(&st.acceptRun, qAcceptRun),
		w(&st.runExists, qRunExists),
		w(&st.runForFeedback, qRunForFeedback),
		w(&st.addProgress, qAddProgress),
		w(&st.addFinal, qAddFinal),
		w(&st.dueAccepted, qDueAccepted),
		w(&st.timeoutRun, qTimeoutRun),
		w(&st.cleanupAge, qCleanupAge),
		w(&st.cleanupKeep, qCleanupKeep),

		r(&st.jobByKey, qJobByKey),
		r(&st.jobEvents, qJobEvents),
		w(&st.keyHolder, qKeyHolder),
		w(&st.insertJobKey, qInsertJobKey),
		w(&st.moveJobKey, qMoveJobKey),
		w(&st.addJobEvent, qAddJobEvent),
		w(&st.insertRuns, qInsertRuns(insertRows)),
		w(&st.addJobEvents, qAddJobEvents(insertRows)),
	}
	for v := range st.queryRuns {
		specs = append(specs, r(&st.queryRuns[v], qQueryRuns(v)))
	}
	for v := range st.setStatus {
		if !statusMaskUsed(v) {
			continue
		}
		specs = append(specs, w(&st.setStatus[v], qSetTaskStatus(v)))
		if v != 0 {
			specs = append(specs, w(&st.setStatusNoRow[v], qSetTaskStatusNoRow(v)))
		}
	}
	return specs
}

// prepare prepares every statement of st: writes on w, reads on r. On
// failure it closes what it prepared.
func (st *stmts) prepare(ctx context.Context, w, r *sql.DB) error {
	for _, sp := range st.specs() {
		db := r
		if sp.write {
			db = w
		}
		stmt, err := db.PrepareContext(ctx, sp.query)
		if err != nil {
			return errors.Join(fmt.Errorf("prepare %q: %w", firstLine(sp.query), err), st.close())
		}
		*sp.dst = stmt
	}
	return nil
}

// close closes every statement prepared so far (Open's failure path; Close
// lets the pools' Close finalize them).
func (st *stmts) close() error {
	var errs []error
	for _, sp := range st.specs() {
		if *sp.dst != nil {
			errs = append(errs, (*sp.dst).Close())
		}
	}
	return errors.Join(errs...)
}

// firstLine returns the first line of a query, for error messages.
func firstLine(q string) string {
	line, _, _ := strings.Cut(q, "\n")
	return line
}

// in binds the prepared statement st to tx.
func in(ctx context.Context, tx *sql.Tx, st *sql.Stmt) *sql.Stmt {
	return tx.StmtContext(ctx, st)
}
