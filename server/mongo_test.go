package server

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"cronsheet/config"
	"cronsheet/store/mongo/mongotest"
	"cronsheet/task"
)

// useMongo points cfg at a database of its own on uri, dropped when t ends
// (after the node has stopped).
func useMongo(t *testing.T, uri string) func(*config.Config) {
	t.Helper()
	db := mongotest.TempDatabase(t, uri, "cronsheet_server_")
	return func(c *config.Config) {
		c.Store.Driver, c.Store.URI, c.Store.Database = "mongo", uri, db
	}
}

// TestMemosLoopOnMongo runs the memos loop on the mongo driver: a row due
// every second delivers to the outbox again and again, read through the API.
func TestMemosLoopOnMongo(t *testing.T) {
	b := setup(t, useMongo(t, mongotest.URI(t, "the server on the mongo driver")))
	var row task.Row
	code := b.call(t, "POST", "/api/v1/scenarios/memos/rows", map[string]any{
		"title": "stand-up", "content": "Stand up, please.", "when": "every 1s", "channel": "outbox",
	}, &row)
	if code != http.StatusCreated || row.ID == "" {
		t.Fatalf("create row: status %d, row %+v", code, row)
	}
	deadline := time.Now().Add(20 * time.Second)
	type outboxPage struct {
		Messages []*task.OutboxMessage `json:"messages"`
	}
	var page outboxPage
	for {
		page = outboxPage{}
		if code := b.call(t, "GET", "/api/v1/outbox?limit=100", nil, &page); code != http.StatusOK {
			t.Fatalf("list outbox: status %d", code)
		}
		if len(page.Messages) >= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(page.Messages) < 2 {
		t.Fatalf("outbox holds %d messages after 20s, want at least 2", len(page.Messages))
	}
	seen := map[string]bool{}
	for _, m := range page.Messages {
		if m.TaskID != row.ID || !strings.Contains(m.Body, "Stand up, please.") || m.TriggerID == "" {
			t.Errorf("message = %+v", m)
		}
		if seen[m.TriggerID] {
			t.Errorf("run %s delivered twice", m.TriggerID)
		}
		seen[m.TriggerID] = true
	}
	runs := b.runs(t, row.ID)
	for i := 1; i < len(runs); i++ {
		if d := runs[i-1].Slot.Sub(runs[i].Slot); d != time.Second {
			t.Errorf("slots %s and %s are %s apart, want 1s", runs[i].Slot, runs[i-1].Slot, d)
		}
	}
	got := b.waitRow(t, row.ID, 10*time.Second, func(r *task.Row) bool { return r.LastStatus == "done" })
	if got.IsActive != 1 || got.IsFetched != 1 || got.LastFire.IsZero() || got.NextFire.IsZero() {
		t.Errorf("row feedback = %+v", got)
	}
	// The node is registered, and its leases run on the server's clock
	// (read from hello; the same host here, so the offset is small).
	var st status
	b.call(t, "GET", "/api/v1/status", nil, &st)
	if len(st.Nodes) != 1 || st.Nodes[0].ID != "test-node" || !st.Nodes[0].Live {
		t.Errorf("status nodes = %+v, want test-node live", st.Nodes)
	}
	if st.ClockOffset < -2000 || st.ClockOffset > 2000 {
		t.Errorf("clock offset %d ms to a server on this host, want within 2 s", st.ClockOffset)
	}
}

// TestMongoUnreachableStopsStartup needs no server: nothing listens on
// port 1, so New must fail after the connect timeout, naming the driver.
func TestMongoUnreachableStopsStartup(t *testing.T) {
	cfg := config.Default()
	cfg.Listen = "127.0.0.1:0"
	cfg.Store = config.Default().Store
	cfg.Store.Driver, cfg.Store.URI, cfg.Store.Database = "mongo", "mongodb://127.0.0.1:1/", "cronsheet"
	cfg.Store.ConnectTimeout = time.Second
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := New(t.Context(), cfg, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err == nil {
		t.Fatal("New with an unreachable mongo server: no error")
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("New took %s, want about the 1s connect timeout", d)
	}
	for _, want := range []string{"store.driver mongo", "127.0.0.1:1", "no server answered within 1s"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

func TestLoadConfigMongo(t *testing.T) {
	t.Parallel()
	body := "store: {driver: mongo, uri: 'mongodb://file-host/', database: cronsheet}\n"
	cfg, err := config.Load(writeConfig(t, body), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Store.URI != "mongodb://file-host/" || cfg.Store.ConnectTimeout != 10*time.Second ||
		cfg.Store.WriteConcern != "majority" || cfg.Store.ReadPreference != "primary" {
		t.Errorf("store = %+v", cfg.Store)
	}
	env := func(k string) string {
		if k == "CRONSHEET_MONGO_URI" {
			return "mongodb://user:secret@env-host/"
		}
		return ""
	}
	if cfg, err = config.Load(writeConfig(t, body), env); err != nil || cfg.Store.URI != "mongodb://user:secret@env-host/" {
		t.Errorf("CRONSHEET_MONGO_URI did not replace store.uri: %q, %v", cfg.Store.URI, err)
	}
	// The URI may come from the environment alone.
	if _, err := config.Load(writeConfig(t, "store: {driver: mongo, database: cronsheet}\n"), env); err != nil {
		t.Errorf("uri from the environment only: %v", err)
	}
}

// mongoForPath moves cfg from its SQLite file to a database of its own on
// the test server, one per file: nodes that a test starts on one file
// share one database.
func mongoForPath(t *testing.T, cfg *config.Config) {
	t.Helper()
	uri := mongotest.URI(t, "the server tests on the mongo driver")
	sum := sha256.Sum256([]byte(cfg.Store.Path))
	db := mongotest.Database(t, uri, "cronsheet_server_"+hex.EncodeToString(sum[:6]))
	cfg.Store.Driver, cfg.Store.URI, cfg.Store.Database = "mongo", uri, db
}

// testDriver is the store driver the server tests run on:
// CRONSHEET_TEST_DRIVER=mongo runs them on CRONSHEET_TEST_MONGO_URI (.ci/run
// does, after the SQLite run); anything else, SQLite.
func testDriver() string {
	if os.Getenv("CRONSHEET_TEST_DRIVER") == "mongo" {
		return "mongo"
	}
	return "sqlite"
}

// skipOnFerretDB skips t when b's store is FerretDB (as its status says),
// giving why; docs/FERRETDB.md lists every such case.
func skipOnFerretDB(t *testing.T, b *testBundle, why string) {
	t.Helper()
	if testDriver() != "mongo" {
		return
	}
	var st struct {
		Store struct {
			FerretDB bool `json:"ferretdb"`
		} `json:"store"`
	}
	if code := b.call(t, "GET", "/api/v1/status", nil, &st); code != http.StatusOK {
		t.Fatalf("status: %d", code)
	}
	if st.Store.FerretDB {
		t.Skip("skipped on FerretDB: " + why)
	}
}
