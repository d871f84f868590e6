package sqlite_test

import (
	"database/sql"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"cronsheet/store"
	"cronsheet/store/sqlite"
	"cronsheet/task"
)

// schemaV1 is the schema as version 1 created it (before store.Control),
// frozen here so that the migration is tested against what is on disk.
const schemaV1 = `
CREATE TABLE rows (
	scenario TEXT NOT NULL, id TEXT NOT NULL, fields TEXT NOT NULL DEFAULT 'null',
	is_fetched INTEGER NOT NULL DEFAULT 0, is_active INTEGER NOT NULL DEFAULT 0, error TEXT NOT NULL DEFAULT '',
	next_fire INTEGER NOT NULL DEFAULT 0, last_fire INTEGER NOT NULL DEFAULT 0, last_status TEXT NOT NULL DEFAULT '',
	version INTEGER NOT NULL DEFAULT 1, created_at INTEGER NOT NULL DEFAULT 0, updated_at INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (scenario, id)
);
CREATE INDEX ix_rows_unfetched ON rows (updated_at) WHERE is_fetched = 0;
CREATE TABLE time_task (
	id INTEGER PRIMARY KEY, task_id TEXT NOT NULL UNIQUE, scenario TEXT NOT NULL, row_id TEXT NOT NULL DEFAULT '',
	doc TEXT NOT NULL, is_enable INTEGER NOT NULL DEFAULT 0, is_claimed INTEGER NOT NULL DEFAULT 0,
	claimed_by TEXT NOT NULL DEFAULT '', lease_until INTEGER NOT NULL DEFAULT 0, is_done INTEGER NOT NULL DEFAULT 0,
	deleted INTEGER NOT NULL DEFAULT 0, next_fire INTEGER NOT NULL DEFAULT 0, last_fire INTEGER NOT NULL DEFAULT 0,
	last_status TEXT NOT NULL DEFAULT '', version INTEGER NOT NULL DEFAULT 1, created_at INTEGER NOT NULL DEFAULT 0,
	updated_at INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX ix_task_due ON time_task (is_enable, is_claimed, is_done);
CREATE INDEX ix_task_row ON time_task (scenario, row_id);
CREATE INDEX ix_task_owner ON time_task (claimed_by) WHERE is_claimed = 1;
CREATE INDEX ix_task_deleted ON time_task (is_claimed) WHERE deleted = 1;
CREATE TABLE runs (
	id INTEGER PRIMARY KEY, trigger_id TEXT NOT NULL UNIQUE, task_id TEXT NOT NULL, slot INTEGER NOT NULL,
	target TEXT NOT NULL DEFAULT '', trigger_type TEXT NOT NULL, state TEXT NOT NULL,
	attempt INTEGER NOT NULL DEFAULT 0, node TEXT NOT NULL DEFAULT '', fired_at INTEGER NOT NULL DEFAULT 0,
	finished_at INTEGER NOT NULL DEFAULT 0, next_attempt INTEGER NOT NULL DEFAULT 0,
	error TEXT NOT NULL DEFAULT '', output TEXT NOT NULL DEFAULT '',
	UNIQUE (task_id, slot, target)
);
CREATE INDEX ix_runs_sched ON runs (task_id, slot) WHERE trigger_type IN ('schedule','misfire');
CREATE INDEX ix_runs_unfinished ON runs (task_id, slot) WHERE state IN ('pending','running','failed');
CREATE TABLE outbox (
	id INTEGER PRIMARY KEY AUTOINCREMENT, task_id TEXT NOT NULL DEFAULT '', trigger_id TEXT NOT NULL DEFAULT '',
	channel TEXT NOT NULL DEFAULT '', recipient TEXT NOT NULL DEFAULT '', subject TEXT NOT NULL DEFAULT '',
	body TEXT NOT NULL DEFAULT '', created_at INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX ux_outbox_trigger ON outbox (trigger_id) WHERE trigger_id <> '';
PRAGMA user_version = 1;
`

// v1Data is what a version 1 database held: a row, its task and a
// running run of it.
var v1Data = fmt.Sprintf(`
INSERT INTO rows (scenario, id, fields, is_fetched, is_active, version) VALUES ('memos', 'm1', '{"memo":"kept"}', 1, 1, 3);
INSERT INTO time_task (task_id, scenario, row_id, doc, is_enable, version) VALUES ('t1', 'memos', 'm1',
	'{"task_type":"outbox","task_para":"hi","execute_type":"periodic","cron_para":"every 1m","ttl":60000000000,"max_retries":3,"misfire":"once","targets":["hook"],"state":"running","anchor":%[1]d}',
	1, 4);
INSERT INTO runs (trigger_id, task_id, slot, target, trigger_type, state, attempt, node, fired_at, output)
	VALUES ('tr-1', 't1', %[1]d, 'hook', 'schedule', 'running', 1, 'node-a', %[1]d, 'sent');
`, v1Time.UnixMilli())

var v1Time = time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)

// openRaw opens the file at path with the driver alone.
func openRaw(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+filepath.ToSlash(path)+"?_journal_mode=WAL")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

// layout describes a database's schema: its user_version, the columns of
// each table and the names of its tables and indexes.
func layout(t *testing.T, path string) string {
	t.Helper()
	db := openRaw(t, path)
	var v int
	if err := db.QueryRow("PRAGMA user_version").Scan(&v); err != nil {
		t.Fatal(err)
	}
	var names, tables []string
	rs, err := db.Query("SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'")
	if err != nil {
		t.Fatal(err)
	}
	for rs.Next() {
		var typ, n string
		if err := rs.Scan(&typ, &n); err != nil {
			t.Fatal(err)
		}
		names = append(names, typ+" "+n)
		if typ == "table" {
			tables = append(tables, n)
		}
	}
	rs.Close()
	slices.Sort(names)
	slices.Sort(tables)
	var out []string
	for _, table := range tables {
		var cols []string
		rs, err := db.Query("SELECT name, type, \"notnull\", coalesce(dflt_value, ''), pk FROM pragma_table_info(?)", table)
		if err != nil {
			t.Fatal(err)
		}
		for rs.Next() {
			var name, typ, dflt string
			var notNull, pk int
			if err := rs.Scan(&name, &typ, &notNull, &dflt, &pk); err != nil {
				t.Fatal(err)
			}
			cols = append(cols, fmt.Sprintf("%s %s %d %s %d", name, typ, notNull, dflt, pk))
		}
		rs.Close()
		out = append(out, table+": "+strings.Join(cols, ", "))
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("user_version %d\n%s\n%s", v, strings.Join(out, "\n"), strings.Join(names, "\n"))
}

// checkMigrated checks the file at path, migrated and closed: it has the
// same tables, columns and indexes as a fresh file of the current
// version, and opening it again changes none of that.
func checkMigrated(t *testing.T, path string) {
	t.Helper()
	migrated := layout(t, path)
	fresh := filepath.Join(t.TempDir(), "fresh.db")
	s, err := sqlite.Open(t.Context(), fresh)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if want := layout(t, fresh); migrated != want {
		t.Errorf("migrated schema differs from a fresh one\nmigrated:\n%s\nfresh:\n%s", migrated, want)
	}
	if !strings.HasPrefix(migrated, "user_version 10\n") {
		t.Errorf("migrated file: %s, want user_version 10", firstLineOf(migrated))
	}
	s, err = sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatalf("reopen the migrated file: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if again := layout(t, path); again != migrated {
		t.Errorf("schema changed on reopen:\n%s\nwas:\n%s", again, migrated)
	}
}

// TestMigrateV1 opens a version 1 file: it is migrated through version 2
// to 3 and gets the current schema (the same tables, columns and indexes as
// a fresh file), keeps its data, its old runs take part in store.Control,
// and it takes jobs.
func TestMigrateV1(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "v1.db")
	db := openRaw(t, path)
	if _, err := db.Exec(schemaV1 + v1Data); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatalf("open a version 1 file: %v", err)
	}
	ctx := t.Context()
	r, err := s.GetRun(ctx, "tr-1")
	if err != nil || r.State != task.RunRunning || r.Output != "sent" || !r.FiredAt.Equal(v1Time) ||
		r.Params != nil || !r.Deadline.IsZero() || r.Feedback != nil {
		t.Fatalf("old run after migration = %+v, %v", r, err)
	}
	if tk, err := s.GetTask(ctx, "t1"); err != nil || tk.State != task.StateRunning || tk.Version != 4 {
		t.Fatalf("old task after migration = %+v, %v", tk, err)
	}
	// The old run goes through the new paths.
	r.Deadline = v1Time.Add(time.Hour)
	if ok, err := s.AcceptRun(ctx, r, store.TaskStatusParams{TaskID: "t1", LastStatus: "accepted"}); !ok || err != nil {
		t.Fatalf("AcceptRun of the old run = %v, %v", ok, err)
	}
	got, err := s.AddFeedback(ctx, store.FeedbackParams{TriggerID: "tr-1", Feedback: task.Feedback{At: v1Time.Add(time.Minute)},
		Status: store.TaskStatusParams{TaskID: "t1", LastStatus: "done"}})
	if err != nil || got.State != task.RunDone || len(got.Feedback) != 1 {
		t.Fatalf("AddFeedback to the old run = %+v, %v", got, err)
	}
	if row, err := s.GetRow(ctx, "memos", "m1"); err != nil || row.LastStatus != "done" || row.Fields["memo"] != "kept" {
		t.Errorf("old row after feedback = %+v, %v", row, err)
	}
	if err := s.CreateTarget(ctx, &task.Target{ID: "hook", Kind: task.ChannelEmail, State: task.TargetRunning}); err != nil {
		t.Errorf("CreateTarget after migration: %v", err)
	}
	if runs, err := s.QueryRuns(ctx, store.RunQuery{State: task.RunDone, Limit: 10}); err != nil || len(runs) != 1 {
		t.Errorf("QueryRuns after migration = %d runs, %v", len(runs), err)
	}
	// And the jobs of version 3.
	if err := s.CreateJob(ctx, migratedJob("j1", "k1")); err != nil {
		t.Errorf("CreateJob after migration: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	checkMigrated(t, path)

	// Opening again keeps the data.
	s, err = sqlite.Open(ctx, path)
	if err != nil {
		t.Fatalf("reopen the migrated file: %v", err)
	}
	if r, err := s.GetRun(ctx, "tr-1"); err != nil || r.State != task.RunDone || len(r.Feedback) != 1 {
		t.Errorf("run after reopen = %+v, %v", r, err)
	}
	if j, err := s.JobByKey(ctx, "k1"); err != nil || j.TaskID != "j1" {
		t.Errorf("job after reopen = %+v, %v", j, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// migratedJob is a job for a migrated file.
func migratedJob(id, key string) *task.Task {
	return &task.Task{TaskID: id, Scenario: task.JobScenario, TaskType: task.ChannelHTTP, ExecuteType: task.Once,
		State: task.StateRunning, IsEnable: 1, Job: &task.Job{Method: task.JobGET, Name: "https://example.com/",
			Key: key, DueAt: v1Time.Add(time.Hour + 5*time.Millisecond)}}
}

// schemaV2 is the schema as version 2 created it (before store.Jobs),
// audit trail included, frozen here like schemaV1.
const schemaV2 = `
CREATE TABLE rows (
	scenario TEXT NOT NULL, id TEXT NOT NULL, fields TEXT NOT NULL DEFAULT 'null',
	is_fetched INTEGER NOT NULL DEFAULT 0, is_active INTEGER NOT NULL DEFAULT 0, error TEXT NOT NULL DEFAULT '',
	next_fire INTEGER NOT NULL DEFAULT 0, last_fire INTEGER NOT NULL DEFAULT 0, last_status TEXT NOT NULL DEFAULT '',
	version INTEGER NOT NULL DEFAULT 1, created_at INTEGER NOT NULL DEFAULT 0, updated_at INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (scenario, id)
);
CREATE INDEX ix_rows_unfetched ON rows (updated_at) WHERE is_fetched = 0;
CREATE TABLE time_task (
	id INTEGER PRIMARY KEY, task_id TEXT NOT NULL UNIQUE, scenario TEXT NOT NULL, row_id TEXT NOT NULL DEFAULT '',
	doc TEXT NOT NULL, is_enable INTEGER NOT NULL DEFAULT 0, is_claimed INTEGER NOT NULL DEFAULT 0,
	claimed_by TEXT NOT NULL DEFAULT '', lease_until INTEGER NOT NULL DEFAULT 0, is_done INTEGER NOT NULL DEFAULT 0,
	deleted INTEGER NOT NULL DEFAULT 0, next_fire INTEGER NOT NULL DEFAULT 0, last_fire INTEGER NOT NULL DEFAULT 0,
	last_status TEXT NOT NULL DEFAULT '', version INTEGER NOT NULL DEFAULT 1, created_at INTEGER NOT NULL DEFAULT 0,
	updated_at INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX ix_task_due ON time_task (is_enable, is_claimed, is_done);
CREATE INDEX ix_task_row ON time_task (scenario, row_id);
CREATE INDEX ix_task_owner ON time_task (claimed_by) WHERE is_claimed = 1;
CREATE INDEX ix_task_deleted ON time_task (is_claimed) WHERE deleted = 1;
CREATE TABLE runs (
	id INTEGER PRIMARY KEY, trigger_id TEXT NOT NULL UNIQUE, task_id TEXT NOT NULL, slot INTEGER NOT NULL,
	target TEXT NOT NULL DEFAULT '', trigger_type TEXT NOT NULL, state TEXT NOT NULL,
	attempt INTEGER NOT NULL DEFAULT 0, node TEXT NOT NULL DEFAULT '', fired_at INTEGER NOT NULL DEFAULT 0,
	finished_at INTEGER NOT NULL DEFAULT 0, next_attempt INTEGER NOT NULL DEFAULT 0,
	error TEXT NOT NULL DEFAULT '', output TEXT NOT NULL DEFAULT '',
	params TEXT NOT NULL DEFAULT '', deadline INTEGER NOT NULL DEFAULT 0, feedback TEXT NOT NULL DEFAULT '',
	UNIQUE (task_id, slot, target)
);
CREATE INDEX ix_runs_sched ON runs (task_id, slot) WHERE trigger_type IN ('schedule','misfire');
CREATE INDEX ix_runs_unfinished ON runs (task_id, slot) WHERE state IN ('pending','running','failed');
CREATE INDEX ix_runs_accepted ON runs (deadline) WHERE state = 'accepted';
CREATE INDEX ix_runs_fired ON runs (fired_at, trigger_id);
CREATE INDEX ix_runs_task_fired ON runs (task_id, fired_at, trigger_id);
CREATE INDEX ix_runs_target_fired ON runs (target, fired_at, trigger_id);
CREATE INDEX ix_runs_final_age ON runs (finished_at)
	WHERE state IN ('done','dead','rejected','timeout','cancelled','skipped');
CREATE INDEX ix_runs_final_slot ON runs (task_id, slot DESC, target DESC)
	WHERE state IN ('done','dead','rejected','timeout','cancelled','skipped');
CREATE TABLE targets (
	id TEXT PRIMARY KEY, doc TEXT NOT NULL, version INTEGER NOT NULL DEFAULT 1,
	created_at INTEGER NOT NULL DEFAULT 0, updated_at INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE outbox (
	id INTEGER PRIMARY KEY AUTOINCREMENT, task_id TEXT NOT NULL DEFAULT '', trigger_id TEXT NOT NULL DEFAULT '',
	channel TEXT NOT NULL DEFAULT '', recipient TEXT NOT NULL DEFAULT '', subject TEXT NOT NULL DEFAULT '',
	body TEXT NOT NULL DEFAULT '', created_at INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX ux_outbox_trigger ON outbox (trigger_id) WHERE trigger_id <> '';
CREATE TABLE audit (
	id INTEGER PRIMARY KEY AUTOINCREMENT, scenario TEXT NOT NULL, row_id TEXT NOT NULL, action TEXT NOT NULL,
	who TEXT NOT NULL DEFAULT '', at INTEGER NOT NULL DEFAULT 0, old TEXT NOT NULL DEFAULT 'null',
	new TEXT NOT NULL DEFAULT 'null'
);
CREATE INDEX ix_audit_row ON audit (scenario, row_id, id);
PRAGMA user_version = 2;
`

// v2Data is what a version 2 database held: v1Data, a target and an
// accepted run.
var v2Data = v1Data + fmt.Sprintf(`
INSERT INTO targets (id, doc, version) VALUES ('hook', '{"kind":"email","state":"running"}', 2);
INSERT INTO runs (trigger_id, task_id, slot, target, trigger_type, state, attempt, fired_at, deadline, params)
	VALUES ('tr-2', 't1', %[1]d, 'hook', 'schedule', 'accepted', 1, %[1]d, %[2]d, '{"x":"y"}');
`, v1Time.Add(time.Minute).UnixMilli(), v1Time.Add(time.Hour).UnixMilli())

// TestMigrateV2 opens a version 2 file: it gets the version 3 schema (the
// same tables, columns and indexes as a fresh file), keeps its data, and
// takes jobs.
func TestMigrateV2(t *testing.T) {
	path := filepath.Join(t.TempDir(), "v2.db")
	db := openRaw(t, path)
	if _, err := db.Exec(schemaV2 + v2Data); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	s, err := sqlite.Open(ctx, path)
	if err != nil {
		t.Fatalf("open a version 2 file: %v", err)
	}
	if tk, err := s.GetTask(ctx, "t1"); err != nil || tk.Version != 4 || tk.Job != nil || tk.RowID != "m1" {
		t.Fatalf("old task after migration = %+v, %v", tk, err)
	}
	if r, err := s.GetRun(ctx, "tr-2"); err != nil || r.State != task.RunAccepted || r.Params["x"] != "y" ||
		!r.Deadline.Equal(v1Time.Add(time.Hour)) {
		t.Fatalf("old run after migration = %+v, %v", r, err)
	}
	if tg, err := s.GetTarget(ctx, "hook"); err != nil || tg.Version != 2 {
		t.Fatalf("old target after migration = %+v, %v", tg, err)
	}
	j := migratedJob("j1", "k1")
	if err := s.CreateJob(ctx, j); err != nil {
		t.Fatalf("CreateJob after migration: %v", err)
	}
	if got, err := s.JobByKey(ctx, "k1"); err != nil || got.Job == nil || !got.Job.DueAt.Equal(j.Job.DueAt) {
		t.Errorf("JobByKey after migration = %+v, %v", got, err)
	}
	if err := s.AddJobEvents(ctx, []store.JobEvent{{JobID: "j1", At: v1Time, State: task.JobPending}}); err != nil {
		t.Errorf("AddJobEvents after migration: %v", err)
	}
	if evs, err := s.JobEvents(ctx, "j1", 10); err != nil || len(evs) != 1 {
		t.Errorf("JobEvents after migration = %+v, %v", evs, err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	checkMigrated(t, path)
}

// TestOpenRefusesNewerSchema: a file written by a newer build is not
// touched.
func TestOpenRefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "future.db")
	db := openRaw(t, path)
	if _, err := db.Exec("PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := sqlite.Open(t.Context(), path)
	if err == nil {
		s.Close()
		t.Fatal("Open of a version 99 file: no error")
	}
	if !strings.Contains(err.Error(), "99") {
		t.Errorf("Open of a version 99 file = %v, want it to name the version", err)
	}
}

func firstLineOf(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
