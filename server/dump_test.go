package server

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cronsheet/config"
	"cronsheet/store"
	"cronsheet/store/mongo/mongotest"
	"cronsheet/store/sqlite"
	"cronsheet/task"
)

// fillStore writes a bit of everything into st: targets of several kinds
// (one updated, so at version 2), rows of two scenarios, tasks (one
// claimed, one of a deleted row), fire feedback, runs in several states
// (two to a target, with params, a deadline and feedback reports) and
// outbox messages with and without a trigger id.
func fillStore(t *testing.T, st store.Product) {
	t.Helper()
	ctx := t.Context()
	at := func(d time.Duration) time.Time { return time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC).Add(d) }
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	for i, id := range []string{"r1", "r2", "r3"} {
		must("InsertRow", st.InsertRow(ctx, &task.Row{Scenario: "memos", ID: id, IsActive: 1,
			Fields: map[string]any{"memo": "text of " + id, "n": i + 1, "f": 1.5, "ok": true}}))
		tk := &task.Task{TaskID: "t-" + id, Scenario: "memos", RowID: id, TaskType: task.ChannelOutbox,
			TaskPara: "hello " + id, Params: map[string]string{task.ParamTo: "a@example.com"},
			ExecuteType: task.Periodic, CronPara: "every 5m", TZ: "Europe/Paris", TTL: time.Minute,
			MaxRetries: 3, Misfire: task.MisfireOnce, Targets: []string{"outbox"}, State: task.StateRunning,
			Anchor: at(time.Duration(i) * time.Minute), IsEnable: 1}
		must("ApplySync", st.ApplySync(ctx, store.ApplySyncParams{Scenario: "memos", RowID: id, RowVersion: 1,
			Task: tk, IsActive: 1, Now: at(0)}))
	}
	for _, tg := range []*task.Target{
		{ID: "hook", Name: "callback", Kind: task.ChannelHTTP, State: task.TargetRunning, FeedbackTimeout: 600,
			HTTP: &task.HTTPTarget{Method: "POST", URL: "https://hooks.example.com/fire?who={{.task_id}}",
				Headers: map[string]string{"X-Token": "t0ken", "Accept": "application/json"}, Body: `{"slot":"{{.slot}}"}`, Timeout: 10}},
		{ID: "kafka.events", Kind: task.ChannelKafka, State: task.TargetPaused,
			Kafka: &task.KafkaTarget{Topic: "fires", Key: "{{.task_id}}"}},
		{ID: "nightly-cleanup", Kind: task.ChannelBuiltin, State: task.TargetPreset,
			Builtin: &task.BuiltinTarget{Action: task.BuiltinCleanupRuns, KeepAge: 86400, KeepCount: 5}},
	} {
		must("CreateTarget", st.CreateTarget(ctx, tg))
	}
	tg, err := st.GetTarget(ctx, "hook")
	must("GetTarget", err)
	tg.Name = "callback, renamed"
	_, err = st.UpdateTarget(ctx, tg, 1)
	must("UpdateTarget", err)
	must("InsertRow other", st.InsertRow(ctx, &task.Row{Scenario: "other", ID: "r1", IsActive: -1, Error: "when: bad"}))
	_, err = st.ClaimTasks(ctx, store.ClaimParams{Owner: "node-a", LeaseUntil: at(time.Hour), Limit: 1})
	must("ClaimTasks", err)
	must("DeleteRow", st.DeleteRow(ctx, "memos", "r3"))
	for i, state := range []task.RunState{task.RunDone, task.RunFailed, task.RunPending} {
		slot := at(time.Duration(i) * 5 * time.Minute)
		r := &task.Run{TriggerID: "tr-" + string(state), TaskID: "t-r1", Slot: slot, Target: "outbox",
			TriggerType: task.TriggerSchedule, State: state, Attempt: i + 1, Node: "node-a", FiredAt: slot,
			Error: "e" + string(state), Output: "o" + string(state)}
		_, err := st.RecordFire(ctx, r, store.TaskStatusParams{TaskID: "t-r1", NextFire: slot.Add(5 * time.Minute),
			LastFire: slot, LastStatus: string(state)})
		must("RecordFire", err)
		must("AddOutbox", st.AddOutbox(ctx, &task.OutboxMessage{TaskID: "t-r1", TriggerID: r.TriggerID,
			Channel: task.ChannelOutbox, To: "a@example.com", Subject: "s", Body: "hello", CreatedAt: slot}))
	}
	// Two manual fires to the hook target, with params, both accepted:
	// one still waits for its final report (a deadline, a progress
	// report), the other got it (done).
	for i, id := range []string{"tr-hook-wait", "tr-hook-done"} {
		slot := at(20*time.Minute + time.Duration(i)*time.Minute)
		r := &task.Run{TriggerID: id, TaskID: "t-r1", Slot: slot, Target: "hook", TriggerType: task.TriggerManual,
			State: task.RunRunning, Attempt: 1, Node: "node-a", FiredAt: slot,
			Params: map[string]string{"who": "ops", "n": fmt.Sprint(i)}}
		_, err := st.RecordFire(ctx, r, store.TaskStatusParams{TaskID: "t-r1", LastFire: slot, LastStatus: string(task.RunRunning)})
		must("RecordFire hook", err)
		r.Deadline, r.Output = slot.Add(10*time.Minute), "queued as job "+id
		ok, err := st.AcceptRun(ctx, r, store.TaskStatusParams{TaskID: "t-r1", LastFire: slot, LastStatus: string(task.RunAccepted)})
		if err != nil || !ok {
			t.Fatalf("AcceptRun %s = %v, %v", id, ok, err)
		}
		_, err = st.AddFeedback(ctx, store.FeedbackParams{TriggerID: id, Feedback: task.Feedback{At: slot.Add(time.Minute),
			Message: "halfway", Output: "50%", Progress: true}})
		must("AddFeedback progress", err)
		if id == "tr-hook-done" {
			_, err = st.AddFeedback(ctx, store.FeedbackParams{TriggerID: id, Feedback: task.Feedback{At: slot.Add(2 * time.Minute),
				Message: "all good", Output: "100%"}})
			must("AddFeedback final", err)
		}
	}
	must("AddOutbox", st.AddOutbox(ctx, &task.OutboxMessage{TaskID: "api", Channel: task.ChannelOutbox,
		Body: "no trigger", CreatedAt: at(time.Hour)}))

	// The row audit trail: a create and an update of r1, with numbers and
	// a sub-document in the fields, and the delete of r3.
	al := st.(store.AuditLog)
	for _, rec := range []*store.AuditRecord{
		{Scenario: "memos", RowID: "r1", Action: store.AuditCreate, Who: "ann", At: at(time.Second),
			New: map[string]any{"memo": "text of r1", "n": 1, "sub": map[string]any{"k": 2.5}}},
		{Scenario: "memos", RowID: "r1", Action: store.AuditUpdate, Who: "bob", At: at(2 * time.Second),
			Old: map[string]any{"memo": "text of r1"}, New: map[string]any{"memo": "提醒我喝水"}},
		{Scenario: "memos", RowID: "r3", Action: store.AuditDelete, Who: "ann", At: at(3 * time.Second),
			Old: map[string]any{"memo": "text of r3"}},
	} {
		must("AddAudit", al.AddAudit(ctx, rec))
	}
	// A job and its transitions (two in the same millisecond, whose order
	// must hold), and another job's.
	job := &task.Task{TaskID: "job-1", Scenario: task.JobScenario, TaskType: task.ChannelHTTP, TaskPara: "job",
		ExecuteType: task.Once, TTL: 30 * time.Second, MaxRetries: 2, Misfire: task.MisfireOnce,
		Targets: []string{task.JobTargetID}, State: task.StateRunning, Anchor: at(0), IsEnable: 1,
		Job: &task.Job{Method: task.JobPOST, Name: "https://example.com/hook", Key: "order-42", DueAt: at(time.Hour)}}
	must("CreateJob", st.CreateJob(ctx, job))
	// A registered node: it describes a running process, not data, and is
	// never exported.
	must("RegisterNode", st.RegisterNode(ctx, store.Node{ID: "node-zz", Incarnation: "inc-1", Host: "h",
		StartedAt: at(0), BeatAt: at(0)}, at(-time.Hour)))
	must("AddJobEvents", st.AddJobEvents(ctx, []store.JobEvent{
		{JobID: "job-1", At: at(0), State: task.JobPending},
		{JobID: "job-1", At: at(time.Hour), State: task.JobRunning, TriggerID: "tr-job-1", Attempt: 1},
		{JobID: "job-1", At: at(time.Hour), State: task.JobFailed, TriggerID: "tr-job-1", Attempt: 1, Reason: "HTTP 500"},
		{JobID: "job-0", At: at(time.Minute), State: task.JobCancelled, Reason: "cancelled by the API"},
	}))
}

func openSQLite(t *testing.T) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "c.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// export dumps st and checks the counts.
func export(t *testing.T, st store.Product) string {
	t.Helper()
	var buf bytes.Buffer
	n, err := ExportStore(t.Context(), st, &buf)
	if err != nil {
		t.Fatal(err)
	}
	// r3's row was deleted; its task awaits purge and moves too.
	if want := (DumpCounts{Rows: 3, Tasks: 4, Runs: 5, Outbox: 4, Targets: 3, Audit: 3, JobEvents: 4}); n != want {
		t.Errorf("export counts = %+v, want %+v", n, want)
	}
	return buf.String()
}

// roundTrip imports dump into st twice: the first time stores everything,
// the second nothing; then st exports exactly dump again.
func roundTrip(t *testing.T, st store.Product, dump string) {
	t.Helper()
	n, err := ImportStore(t.Context(), st, strings.NewReader(dump))
	if err != nil {
		t.Fatal(err)
	}
	if n.Read != n.Stored || n.Read.Rows != 3 || n.Read.Targets != 3 || n.Read.Audit != 3 || n.Read.JobEvents != 4 {
		t.Errorf("first import = %+v, want everything read and stored", n)
	}
	again, err := ImportStore(t.Context(), st, strings.NewReader(dump))
	if err != nil {
		t.Fatalf("second import: %v", err)
	}
	if again.Stored != (DumpCounts{}) || again.Read != n.Read {
		t.Errorf("second import = %+v, want everything read and nothing stored", again)
	}
	if got := export(t, st); got != dump {
		t.Errorf("export after import differs\n got: %s\nwant: %s", got, dump)
	}
}

func TestExportImportSQLite(t *testing.T) {
	src := openSQLite(t)
	fillStore(t, src)
	dump := export(t, src)
	if !strings.HasPrefix(dump, `{"kind":"target","target":{"id":"hook",`) {
		t.Errorf("export does not start with the targets:\n%s", dump)
	}
	for _, want := range []string{`"deleted":true`, `"n":2`, `"f":1.5`, `"trigger_id":"tr-failed"`, `"body":"no trigger"`,
		`"name":"callback, renamed"`, `"version":2,"created_at":`, `"headers":{"Accept":"application/json","X-Token":"t0ken"}`,
		`"builtin":{"action":"cleanup_runs","keep_age":86400,"keep_count":5}`,
		`"params":{"n":"0","who":"ops"},"deadline":"2026-03-01T08:30:00Z","feedback":[{"at":"2026-03-01T08:21:00Z"`,
		`"progress":true},{"at":"2026-03-01T08:23:00Z","status":0,"message":"all good","output":"100%"}]`,
		`{"kind":"audit","audit":{"id":2,"scenario":"memos","row_id":"r1","action":"update","who":"bob","at":"2026-03-01T08:00:02Z","old":{"memo":"text of r1"},"new":{"memo":"提醒我喝水"}}}`,
		`"new":{"memo":"text of r1","n":1,"sub":{"k":2.5}}`,
		`{"kind":"job_event","job_event":{"job_id":"job-0",`,
		`"state":"running","trigger_id":"tr-job-1","attempt":1}}` + "\n" + `{"kind":"job_event","job_event":{"job_id":"job-1","at":"2026-03-01T09:00:00Z","state":"failed"`} {
		if !strings.Contains(dump, want) {
			t.Errorf("export lacks %s:\n%s", want, dump)
		}
	}
	if strings.Contains(dump, "node-zz") || strings.Contains(dump, "inc-1") {
		t.Errorf("export carries the node registry:\n%s", dump)
	}
	if strings.Contains(dump, "node-a\",\"lease") || strings.Contains(dump, `"is_claimed":1`) {
		t.Errorf("export keeps a claim:\n%s", dump)
	}
	roundTrip(t, openSQLite(t), dump)
}

// TestImportDumpWithoutTargets imports a dump that has no targets, audit
// records or job events (the shape of a dump from an older version):
// everything it has goes in.
func TestImportDumpWithoutTargets(t *testing.T) {
	src := openSQLite(t)
	fillStore(t, src)
	var old strings.Builder
	for line := range strings.Lines(export(t, src)) {
		if !strings.HasPrefix(line, `{"kind":"target",`) && !strings.HasPrefix(line, `{"kind":"audit",`) &&
			!strings.HasPrefix(line, `{"kind":"job_event",`) {
			old.WriteString(line)
		}
	}
	dst := openSQLite(t)
	n, err := ImportStore(t.Context(), dst, strings.NewReader(old.String()))
	if err != nil {
		t.Fatal(err)
	}
	if want := (DumpCounts{Rows: 3, Tasks: 4, Runs: 5, Outbox: 4}); n.Stored != want || n.Read != want {
		t.Errorf("import of a dump without targets = %+v, want read and stored %+v", n, want)
	}
	var buf bytes.Buffer
	got, err := ExportStore(t.Context(), dst, &buf)
	if err != nil {
		t.Fatal(err)
	}
	if got.Targets != 0 || got.Audit != 0 || got.JobEvents != 0 || buf.String() != old.String() {
		t.Errorf("export after importing a dump without targets differs (%+v)\n got: %s\nwant: %s", got, buf.String(), old.String())
	}
}

// TestExportImportSQLiteMongoSQLite moves a store from SQLite to MongoDB and
// back: nothing is lost on the way.
func TestExportImportSQLiteMongoSQLite(t *testing.T) {
	uri := mongotest.URI(t, "the export/import round trip on the mongo driver")
	src := openSQLite(t)
	fillStore(t, src)
	dump := export(t, src)

	cfg := config.Default()
	useMongo(t, uri)(&cfg)
	mst, err := openStore(t.Context(), cfg.Store)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mst.Close() })
	roundTrip(t, mst, dump)

	var fromMongo bytes.Buffer
	if _, err := ExportStore(t.Context(), mst, &fromMongo); err != nil {
		t.Fatal(err)
	}
	roundTrip(t, openSQLite(t), fromMongo.String())
	if fromMongo.String() != dump {
		t.Errorf("SQLite → MongoDB → SQLite changed the data")
	}
	// The imported store works: its tasks can be claimed again.
	got, err := mst.ClaimTasks(context.Background(), store.ClaimParams{Owner: "node-b", LeaseUntil: time.Now().Add(time.Hour), Limit: 10})
	if err != nil || len(got) != 3 {
		t.Errorf("claim after import = %d tasks, %v; want the 3 live ones (2 rows' and the job)", len(got), err)
	}
}
