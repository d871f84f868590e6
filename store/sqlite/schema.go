package sqlite

// Index choices.
//
// A claim rewrites is_claimed, claimed_by and lease_until of every task it
// takes, and a lease renewal rewrites lease_until of every task a node holds,
// so an index on those columns costs a B-tree write per task on the hottest
// paths (docs/DESIGN.md, "Storage"). Hence:
//
//   - ix_task_claim (arm_at) WHERE is_enable=1 AND is_claimed=0 AND
//     is_done=0 is the claim's index: it holds only claimable tasks, in
//     arming order (arm_at, then id), so a claim takes the soonest first
//     without a sort and a claimed task costs nothing in it (SetTaskStatus
//     rewrites next_fire of claimed tasks on every fire; they are not in
//     it). A claim removes the task's entry, a release or park adds one.
//   - ix_task_owner (claimed_by) WHERE is_claimed=1 serves RenewLeases,
//     ListClaimed and ReleaseTask. A claim adds one entry and a release
//     removes it; a renewal changes neither column, so it touches no index.
//   - lease_until is deliberately not indexed: every renewal would rewrite
//     it. ReleaseExpired walks the claimed tasks through ix_task_owner (a
//     partial index, so only claimed tasks) on a reader first, and takes the
//     write lock only when some lease has ended.
//   - ix_task_deleted (is_claimed) WHERE deleted=1 holds only deleted tasks,
//     for PurgeDeleted.
//   - ix_task_row (scenario, row_id) WHERE row_id <> '' finds a row's task
//     for DeleteRow and ApplySync; neither column ever changes after
//     insert. It holds only tasks of rows: a job (row_id '') costs nothing
//     in it, where a batch of new jobs would add an entry per job under
//     one key. Its queries say row_id <> '' too, or SQLite could not use
//     it.
//   - ix_task_absent (next_fire) holds the tasks alerting on absence; its
//     WHERE (absentWhere) looks for the text "absent": in the document
//     before parsing the document's JSON, so a task without such an alert
//     costs a substring search at insert and at each change of next_fire,
//     not a JSON parse.
//   - ix_task_created (scenario, created_at, task_id) pages the jobs API's
//     list of jobs (ListJobs); none of its columns changes after insert.
//   - next_fire and the doc are not indexed: SetTaskStatus rewrites them on
//     every fire and no patrol filters on them.
//
// rows: the primary key (scenario, id) serves GetRow and keyset ListRows;
// ix_rows_unfetched is partial (WHERE is_fetched=0), so it holds only rows
// waiting for the sync patrol and a synced row costs nothing in it.
//
// runs: UNIQUE(task_id, slot, target) is the ledger gate and also serves
// ListRuns (newest slot first) and every (task_id, slot) lookup. Two partial
// (task_id, slot) indexes keep LastSlot and UnfinishedRuns exact index
// searches however long a task's history grows: ix_runs_sched holds only
// schedule and misfire runs, ix_runs_unfinished only runs that are not final
// (entries leave it as runs finish).
//
// time_task and runs declare an INTEGER PRIMARY KEY so that the rowid the
// claim orders by stays stable across VACUUM.
//
// Control (store.Control, schema version 2):
//
//   - targets: the primary key (id) serves GetTarget and keyset ListTargets.
//   - ix_runs_accepted (deadline) WHERE state='accepted' holds only runs
//     waiting for feedback, for ExpireAccepted.
//   - QueryRuns pages newest first by (fired_at, trigger_id) through
//     three history indexes: ix_runs_hist (no filter), ix_runs_hist_task
//     and ix_runs_hist_target have the filter as equality prefix and
//     (fired_at, trigger_id) as tail, so a page is an index range read in
//     order. They are partial on unlisted = 0, and a fire inserts its run
//     with unlisted = 1: the fire path writes none of them. The history
//     loop (history.go) lists runs in bulk, off the fire path: it sets
//     unlisted = 0 on the runs after runs_history.mark in id order, a
//     chunk a transaction, and moves the mark. Every run with id <= mark
//     is listed; the runs after it (the tail, bounded by the loop) are
//     read by a rowid range search and sorted. A history query is the
//     union of both (historyUnion), read in one statement, so one
//     snapshot. A delete that leaves the mark above the largest id lowers
//     it (trigger runs_history_down), so a new run's id is always above
//     the mark. ix_runs_hist_target holds only runs of a target (WHERE
//     target <> ''): a task's own run (every job's) costs nothing in it,
//     and a target filter is never empty; its query says target <> ''
//     too, or SQLite could not use it. A target filter with a task filter
//     uses the task's index and checks the target on the way (a task has
//     a handful of targets). A state filter has no index of its own: it
//     walks the same index and skips other states. No index has state:
//     every state change of every run would rewrite it, on the hot path
//     of a run's insert and finish, while the history indexes are written
//     once, by the loop (UpdateRun names fired_at only when it changes,
//     qUpdateRunFired). Fires are the hot path; a state-filtered page is
//     an operator's query, and costs in proportion to how rare the state
//     is. FireStats and a task's outcomes read the same union.
//   - CleanupRuns: ix_runs_final_age (finished_at) and ix_runs_final_slot
//     (task_id, slot DESC, target DESC) are partial on the final states, so
//     unfinished runs are in neither and a run enters them once, when it
//     finishes. The age rule is a range read of the first; the keep rule
//     numbers each task's finished runs newest first straight off the
//     second (a window function over index order, no sort). It walks the
//     finished runs until it has Limit to delete, all of them when fewer
//     are due: a cleanup job's cost, paid by no fire.
//
// Jobs (store.Jobs, schema version 3):
//
//   - A job is a time_task row like any other (scenario 'jobs', row_id '',
//     task.Job in the document), so claims, fires and states need nothing
//     new. Its row_id is '' and no row has an empty id, so the row
//     mirroring of SetTaskStatus, DeleteRow and ApplySync never reach it,
//     and it is never deleted=1, so PurgeDeleted leaves it.
//   - job_keys: key -> task_id, its primary key making a key held by one
//     job at a time (WITHOUT ROWID: the key is the table). JobByKey is a
//     primary key lookup, then time_task's task_id index.
//   - job_events: a job's transitions, appended; ix_job_events (job_id, id)
//     reads one job's history oldest first as an index range, no sort.

// finalStates lists the run states that are final (task.RunState.Final is
// true): the only ones CleanupRuns deletes, as an IN list for the queries
// that need no index on it; the partial indexes and the queries on them
// use finalWhere.
const finalStates = `('done','dead','rejected','timeout','cancelled','skipped')`

// unfinishedWhere says "state is one a node resumes": not final
// (task.RunState.Final is false) and not accepted (the target has those);
// finalWhere says "state is final" (finalStates). A run that is accepted
// is in neither. Both are chains of equalities: the partial indexes on
// them and the queries that read those indexes spell them so (the same
// way, for the planner to match them). SQLite codes an IN list of more
// than two constants as an ephemeral table it builds at every run of a
// statement, and a partial index's WHERE is evaluated at every write of a
// run that changes its state: with IN lists, a run's update built five
// such tables, most of its cost (docs/BENCHMARKS.md, "2026-12-05 drain").
// TestUnfinishedStates checks that each spells its list.
const (
	unfinishedWhere = `(state = 'pending' OR state = 'running' OR state = 'failed')`
	finalWhere      = `(state = 'done' OR state = 'dead' OR state = 'rejected' OR state = 'timeout' OR state = 'cancelled' OR state = 'skipped')`
)

// scheduledTriggers lists the trigger types LastSlot considers (two: an IN
// list that short is coded as comparisons, with no ephemeral table).
const scheduledTriggers = `('schedule','misfire')`

// absentWhere is ix_task_absent's WHERE, which its query repeats. The
// instr test only saves work: a task alerting on absence has "absent": in
// its document (task.Alert.Absent is omitempty, and encoding/json writes no
// space before the colon; inside a JSON string a quote is escaped, so only
// a key can read so), and json_extract decides.
const absentWhere = `instr(doc, '"absent":') > 0 AND json_extract(doc, '$.alert.absent') > 0
	AND is_enable = 1 AND is_done = 0 AND deleted = 0`

// schemaVersion is the version of schemaSQL, kept in PRAGMA user_version.
// Version 1 had no targets table and no runs.params, runs.deadline and
// runs.feedback (nor their indexes); version 2 had no job_keys and
// job_events tables; version 3 had no runs.fence and no nodes table;
// version 4 had no flows and flow_executions tables; version 5 had no
// time_task.arm_at, and claimed through ix_task_due (is_enable,
// is_claimed, is_done) in id order; version 6 had ix_task_row over every
// task and ix_task_absent parsing every task's document; version 7 had
// ix_runs_target_fired over every run and the runs' partial indexes on
// state written with IN lists; version 8 had no runs.unlisted and no
// runs_history, and wrote ix_runs_fired, ix_runs_task_fired and
// ix_runs_target_fired at every run's insert; version 9 had no
// time_task.status_slot.
const schemaVersion = 10

// migrateFrom returns the statements that bring a database at version v to
// v+1 with what CREATE … IF NOT EXISTS cannot do (new columns of existing
// tables); schemaSQL, applied after them, creates the new tables and
// indexes. "" means there is nothing of that kind: version 2 to 3 only adds
// tables.
func migrateFrom(v int) string {
	switch v {
	case 1:
		return `
ALTER TABLE runs ADD COLUMN params   TEXT    NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN deadline INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN feedback TEXT    NOT NULL DEFAULT '';
`
	case 3:
		return `ALTER TABLE runs ADD COLUMN fence INTEGER NOT NULL DEFAULT 0;`
	case 5:
		return `ALTER TABLE time_task ADD COLUMN arm_at INTEGER NOT NULL DEFAULT 0;
DROP INDEX IF EXISTS ix_task_due;`
	case 6:
		return `DROP INDEX IF EXISTS ix_task_row;
DROP INDEX IF EXISTS ix_task_absent;`
	case 7:
		return `DROP INDEX IF EXISTS ix_runs_target_fired;
DROP INDEX IF EXISTS ix_runs_unfinished;
DROP INDEX IF EXISTS ix_runs_final_age;
DROP INDEX IF EXISTS ix_runs_final_slot;`
	case 8:
		return `ALTER TABLE runs ADD COLUMN unlisted INTEGER NOT NULL DEFAULT 0;
DROP INDEX IF EXISTS ix_runs_fired;
DROP INDEX IF EXISTS ix_runs_task_fired;
DROP INDEX IF EXISTS ix_runs_target_fired;`
	case 9:
		return `ALTER TABLE time_task ADD COLUMN status_slot INTEGER NOT NULL DEFAULT 0;`
	}
	return ""
}

// schemaSQL creates every table and index of the current schema version;
// it is idempotent. init applies the migrations first and stamps PRAGMA
// user_version afterwards.
const schemaSQL = `
CREATE TABLE IF NOT EXISTS rows (
	scenario    TEXT    NOT NULL,
	id          TEXT    NOT NULL,
	fields      TEXT    NOT NULL DEFAULT 'null',
	is_fetched  INTEGER NOT NULL DEFAULT 0,
	is_active   INTEGER NOT NULL DEFAULT 0,
	error       TEXT    NOT NULL DEFAULT '',
	next_fire   INTEGER NOT NULL DEFAULT 0,
	last_fire   INTEGER NOT NULL DEFAULT 0,
	last_status TEXT    NOT NULL DEFAULT '',
	version     INTEGER NOT NULL DEFAULT 1,
	created_at  INTEGER NOT NULL DEFAULT 0,
	updated_at  INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (scenario, id)
);
CREATE INDEX IF NOT EXISTS ix_rows_unfetched ON rows (updated_at) WHERE is_fetched = 0;

CREATE TABLE IF NOT EXISTS time_task (
	id          INTEGER PRIMARY KEY,
	task_id     TEXT    NOT NULL UNIQUE,
	scenario    TEXT    NOT NULL,
	row_id      TEXT    NOT NULL DEFAULT '',
	doc         TEXT    NOT NULL,
	is_enable   INTEGER NOT NULL DEFAULT 0,
	is_claimed  INTEGER NOT NULL DEFAULT 0,
	claimed_by  TEXT    NOT NULL DEFAULT '',
	lease_until INTEGER NOT NULL DEFAULT 0,
	is_done     INTEGER NOT NULL DEFAULT 0,
	deleted     INTEGER NOT NULL DEFAULT 0,
	next_fire   INTEGER NOT NULL DEFAULT 0,
	last_fire   INTEGER NOT NULL DEFAULT 0,
	last_status TEXT    NOT NULL DEFAULT '',
	version     INTEGER NOT NULL DEFAULT 1,
	created_at  INTEGER NOT NULL DEFAULT 0,
	updated_at  INTEGER NOT NULL DEFAULT 0,
	arm_at      INTEGER NOT NULL DEFAULT 0,
	status_slot INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS ix_task_claim ON time_task (arm_at)
	WHERE is_enable = 1 AND is_claimed = 0 AND is_done = 0;
CREATE INDEX IF NOT EXISTS ix_task_row ON time_task (scenario, row_id) WHERE row_id <> '';
CREATE INDEX IF NOT EXISTS ix_task_owner ON time_task (claimed_by) WHERE is_claimed = 1;
CREATE INDEX IF NOT EXISTS ix_task_deleted ON time_task (is_claimed) WHERE deleted = 1;
CREATE INDEX IF NOT EXISTS ix_task_created ON time_task (scenario, created_at, task_id);
CREATE INDEX IF NOT EXISTS ix_task_absent ON time_task (next_fire)
	WHERE ` + absentWhere + `;

CREATE TABLE IF NOT EXISTS runs (
	id           INTEGER PRIMARY KEY,
	trigger_id   TEXT    NOT NULL UNIQUE,
	task_id      TEXT    NOT NULL,
	slot         INTEGER NOT NULL,
	target       TEXT    NOT NULL DEFAULT '',
	trigger_type TEXT    NOT NULL,
	state        TEXT    NOT NULL,
	attempt      INTEGER NOT NULL DEFAULT 0,
	node         TEXT    NOT NULL DEFAULT '',
	fired_at     INTEGER NOT NULL DEFAULT 0,
	finished_at  INTEGER NOT NULL DEFAULT 0,
	next_attempt INTEGER NOT NULL DEFAULT 0,
	error        TEXT    NOT NULL DEFAULT '',
	output       TEXT    NOT NULL DEFAULT '',
	-- JSON object of one-off params, '' when none.
	params       TEXT    NOT NULL DEFAULT '',
	deadline     INTEGER NOT NULL DEFAULT 0,
	-- JSON array of the target's reports, '' when none.
	feedback     TEXT    NOT NULL DEFAULT '',
	-- the ownership epoch (task.Run.Fence); 0 for runs from before it.
	fence        INTEGER NOT NULL DEFAULT 0,
	-- 1 until the history loop lists the run in the history indexes.
	unlisted     INTEGER NOT NULL DEFAULT 0,
	UNIQUE (task_id, slot, target)
);
CREATE INDEX IF NOT EXISTS ix_runs_sched ON runs (task_id, slot)
	WHERE trigger_type IN ` + scheduledTriggers + `;
CREATE INDEX IF NOT EXISTS ix_runs_unfinished ON runs (task_id, slot)
	WHERE ` + unfinishedWhere + `;
CREATE INDEX IF NOT EXISTS ix_runs_accepted ON runs (deadline) WHERE state = 'accepted';
CREATE INDEX IF NOT EXISTS ix_runs_hist ON runs (fired_at, trigger_id) WHERE unlisted = 0;
CREATE INDEX IF NOT EXISTS ix_runs_hist_task ON runs (task_id, fired_at, trigger_id) WHERE unlisted = 0;
CREATE INDEX IF NOT EXISTS ix_runs_hist_target ON runs (target, fired_at, trigger_id)
	WHERE target <> '' AND unlisted = 0;
-- runs_history: one row, the history loop's mark (history.go). A file
-- from before it has every run listed (unlisted defaults to 0).
CREATE TABLE IF NOT EXISTS runs_history (
	id   INTEGER PRIMARY KEY CHECK (id = 1),
	mark INTEGER NOT NULL
);
INSERT OR IGNORE INTO runs_history (id, mark) SELECT 1, coalesce(max(id), 0) FROM runs;
CREATE TRIGGER IF NOT EXISTS runs_history_down AFTER DELETE ON runs
	WHEN old.id >= (SELECT mark FROM runs_history WHERE id = 1)
BEGIN
	UPDATE runs_history SET mark = (SELECT coalesce(max(id), 0) FROM runs)
		WHERE id = 1 AND mark > (SELECT coalesce(max(id), 0) FROM runs);
END;
CREATE INDEX IF NOT EXISTS ix_runs_final_age ON runs (finished_at)
	WHERE ` + finalWhere + `;
CREATE INDEX IF NOT EXISTS ix_runs_final_slot ON runs (task_id, slot DESC, target DESC)
	WHERE ` + finalWhere + `;

-- nodes: the processes sharing this file (store.Nodes), one row each.
CREATE TABLE IF NOT EXISTS nodes (
	node_id     TEXT    PRIMARY KEY,
	incarnation TEXT    NOT NULL,
	version     TEXT    NOT NULL DEFAULT '',
	host        TEXT    NOT NULL DEFAULT '',
	pid         INTEGER NOT NULL DEFAULT 0,
	started_at  INTEGER NOT NULL,
	beat_at     INTEGER NOT NULL,
	held        INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE IF NOT EXISTS targets (
	id         TEXT    PRIMARY KEY,
	-- The task.Target as JSON, without id, version and times.
	doc        TEXT    NOT NULL,
	version    INTEGER NOT NULL DEFAULT 1,
	created_at INTEGER NOT NULL DEFAULT 0,
	updated_at INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE IF NOT EXISTS outbox (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	task_id    TEXT    NOT NULL DEFAULT '',
	trigger_id TEXT    NOT NULL DEFAULT '',
	channel    TEXT    NOT NULL DEFAULT '',
	recipient  TEXT    NOT NULL DEFAULT '',
	subject    TEXT    NOT NULL DEFAULT '',
	body       TEXT    NOT NULL DEFAULT '',
	created_at INTEGER NOT NULL DEFAULT 0
);
-- One message per run: a resumed delivery does not add a second one.
CREATE UNIQUE INDEX IF NOT EXISTS ux_outbox_trigger ON outbox (trigger_id) WHERE trigger_id <> '';

CREATE TABLE IF NOT EXISTS job_keys (
	key     TEXT NOT NULL PRIMARY KEY,
	task_id TEXT NOT NULL
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS job_events (
	id         INTEGER PRIMARY KEY,
	job_id     TEXT    NOT NULL,
	at         INTEGER NOT NULL DEFAULT 0,
	state      TEXT    NOT NULL,
	trigger_id TEXT    NOT NULL DEFAULT '',
	attempt    INTEGER NOT NULL DEFAULT 0,
	reason     TEXT    NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS ix_job_events ON job_events (job_id, id);

CREATE TABLE IF NOT EXISTS flows (
	id         TEXT    NOT NULL PRIMARY KEY,
	doc        TEXT    NOT NULL,
	version    INTEGER NOT NULL DEFAULT 1,
	created_at INTEGER NOT NULL DEFAULT 0,
	updated_at INTEGER NOT NULL DEFAULT 0
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS flow_executions (
	id         TEXT    NOT NULL PRIMARY KEY,
	flow_id    TEXT    NOT NULL,
	state      TEXT    NOT NULL,
	started_at INTEGER NOT NULL DEFAULT 0,
	doc        TEXT    NOT NULL,
	version    INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX IF NOT EXISTS ix_flow_executions ON flow_executions (flow_id, started_at);
CREATE INDEX IF NOT EXISTS ix_flow_executions_running ON flow_executions (started_at) WHERE state = 'running';
`
