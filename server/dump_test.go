package server

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cronsheet/store"
	"cronsheet/store/mongo/mongotest"
	"cronsheet/store/sqlite"
	"cronsheet/task"
)

// fillStore writes a bit of everything into st: rows of two scenarios,
// tasks (one claimed, one of a deleted row), fire feedback, runs in several
// states and outbox messages with and without a trigger id.
func fillStore(t *testing.T, st store.Store) {
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
	must("InsertRow other", st.InsertRow(ctx, &task.Row{Scenario: "other", ID: "r1", IsActive: -1, Error: "when: bad"}))
	_, err := st.ClaimTasks(ctx, store.ClaimParams{Owner: "node-a", LeaseUntil: at(time.Hour), Limit: 1})
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
	must("AddOutbox", st.AddOutbox(ctx, &task.OutboxMessage{TaskID: "api", Channel: task.ChannelOutbox,
		Body: "no trigger", CreatedAt: at(time.Hour)}))
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
func export(t *testing.T, st store.Store) string {
	t.Helper()
	var buf bytes.Buffer
	n, err := ExportStore(t.Context(), st, &buf)
	if err != nil {
		t.Fatal(err)
	}
	// r3's row was deleted; its task awaits purge and moves too.
	if want := (DumpCounts{Rows: 3, Tasks: 3, Runs: 3, Outbox: 4}); n != want {
		t.Errorf("export counts = %+v, want %+v", n, want)
	}
	return buf.String()
}

// roundTrip imports dump into st twice: the first time stores everything,
// the second nothing; then st exports exactly dump again.
func roundTrip(t *testing.T, st store.Store, dump string) {
	t.Helper()
	n, err := ImportStore(t.Context(), st, strings.NewReader(dump))
	if err != nil {
		t.Fatal(err)
	}
	stored := n.Stored
	stored.Outbox = n.Read.Outbox // not counted, see ImportCounts
	if n.Read != stored || n.Read.Rows != 3 {
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
	for _, want := range []string{`"deleted":true`, `"n":2`, `"f":1.5`, `"trigger_id":"tr-failed"`, `"body":"no trigger"`} {
		if !strings.Contains(dump, want) {
			t.Errorf("export lacks %s:\n%s", want, dump)
		}
	}
	if strings.Contains(dump, "node-a\",\"lease") || strings.Contains(dump, `"is_claimed":1`) {
		t.Errorf("export keeps a claim:\n%s", dump)
	}
	roundTrip(t, openSQLite(t), dump)
}

// TestExportImportSQLiteMongoSQLite moves a store from SQLite to MongoDB and
// back: nothing is lost on the way.
func TestExportImportSQLiteMongoSQLite(t *testing.T) {
	uri := mongotest.URI(t, "the export/import round trip on the mongo driver")
	src := openSQLite(t)
	fillStore(t, src)
	dump := export(t, src)

	cfg := DefaultConfig()
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
	if err != nil || len(got) != 2 {
		t.Errorf("claim after import = %d tasks, %v; want the 2 live ones", len(got), err)
	}
}
