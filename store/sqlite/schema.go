package sqlite

// Index choices.
//
// A claim rewrites is_claimed, claimed_by and lease_until of every task it
// takes, and a lease renewal rewrites lease_until of every task a node holds,
// so an index on those columns costs a B-tree write per task on the hottest
// paths (SQLITE-PROBE.md §3: dropping one such index made claims 1.8×
// faster). Hence:
//
//   - ix_task_due (is_enable, is_claimed, is_done) is the claim's index; the
//     claim must change it, since it moves the task out of the due range.
//     Ties come in id order from the index itself (no sort).
//   - ix_task_owner (claimed_by) WHERE is_claimed=1 serves RenewLeases,
//     ListClaimed and ReleaseTask. A claim adds one entry and a release
//     removes it; a renewal changes neither column, so it touches no index.
//   - lease_until is deliberately not indexed: every renewal would rewrite
//     it. ReleaseExpired walks the claimed tasks through ix_task_owner (a
//     partial index, so only claimed tasks) on a reader first, and takes the
//     write lock only when some lease has ended.
//   - ix_task_deleted (is_claimed) WHERE deleted=1 holds only deleted tasks,
//     for PurgeDeleted.
//   - ix_task_row (scenario, row_id) finds a row's task for DeleteRow and
//     ApplySync; neither column ever changes after insert.
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

// unfinishedStates lists the run states that are not final
// (task.RunState.Final is false); the partial index and the query must spell
// it the same way for the planner to match them.
const unfinishedStates = `('pending','running','failed')`

// scheduledTriggers lists the trigger types LastSlot considers.
const scheduledTriggers = `('schedule','misfire')`

// schemaSQL creates every table and index; it is idempotent. It stamps
// PRAGMA user_version with the schema's version (1) for future migrations.
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
	updated_at  INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS ix_task_due ON time_task (is_enable, is_claimed, is_done);
CREATE INDEX IF NOT EXISTS ix_task_row ON time_task (scenario, row_id);
CREATE INDEX IF NOT EXISTS ix_task_owner ON time_task (claimed_by) WHERE is_claimed = 1;
CREATE INDEX IF NOT EXISTS ix_task_deleted ON time_task (is_claimed) WHERE deleted = 1;

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
	UNIQUE (task_id, slot, target)
);
CREATE INDEX IF NOT EXISTS ix_runs_sched ON runs (task_id, slot)
	WHERE trigger_type IN ` + scheduledTriggers + `;
CREATE INDEX IF NOT EXISTS ix_runs_unfinished ON runs (task_id, slot)
	WHERE state IN ` + unfinishedStates + `;

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

PRAGMA user_version = 1;
`
