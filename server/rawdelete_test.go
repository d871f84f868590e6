package server

import (
	"database/sql"
	"errors"
	"net/http"
	"testing"
	"time"

	"cronsheet/config"
	"cronsheet/store/mongo/mongotest"
	"cronsheet/task"
)

// deleteRowRaw deletes the row scenario/id straight in b's database, with
// its driver (SQL on SQLite, the collection on mongo), as another tool
// would: no store method runs.
func deleteRowRaw(t *testing.T, b *testBundle, scenario, id string) {
	t.Helper()
	cfg := b.srv.cfg.Store
	if cfg.Driver == "mongo" {
		mongotest.DeleteRowRaw(t, cfg.URI, cfg.Database, scenario, id)
		return
	}
	db, err := sql.Open("sqlite", "file:"+cfg.Path+"?_pragma=busy_timeout(30000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	res, err := db.ExecContext(t.Context(), `DELETE FROM rows WHERE scenario = ? AND id = ?`, scenario, id)
	if err != nil {
		t.Fatalf("delete row %s/%s: %v", scenario, id, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("delete row %s/%s: deleted %d", scenario, id, n)
	}
}

// TestRowDeletedInDatabaseStopsFiring: a row deleted straight in the
// database (other tools edit the rows) stops its task's deliveries,
// counted at the hook, and its task is retired within a few patrol
// passes. Before, the task went on firing for good while explain said
// "the row is deleted". On both drivers.
func TestRowDeletedInDatabaseStopsFiring(t *testing.T) {
	hook := startTriggerHook(t)
	b := setup(t, func(c *config.Config) { c.HTTP.Allow = []string{"127.0.0.0/8"} })
	target := map[string]any{"id": "hook", "kind": "http", "state": "running",
		"http": map[string]any{"method": "POST", "url": hook.srv.URL + "/t"}}
	if code := b.call(t, "POST", "/api/v1/targets", target, nil); code != http.StatusCreated {
		t.Fatalf("create target: status %d", code)
	}
	b.addRow(t, map[string]any{"memo_id": "gone", "content": "x", "when": "every 1s", "targets": "hook"})
	eventually(t, "two deliveries at the hook", func() bool { return hook.count() >= 2 })

	deleteRowRaw(t, b, "memos", "gone")
	deleted := time.Now()
	// Retired (disabled and deleted, or already purged) within a few
	// passes (the patrol interval is 50 ms here).
	var retiredAt time.Time
	for retiredAt.IsZero() && time.Since(deleted) < 5*time.Second {
		tk, err := b.srv.store.GetTask(t.Context(), "gone")
		switch {
		case errors.Is(err, task.ErrNotFound) || (err == nil && tk.IsEnable == 0):
			retiredAt = time.Now()
		case err != nil:
			t.Fatalf("get task: %v", err)
		default:
			time.Sleep(20 * time.Millisecond)
		}
	}
	quiet := retiredAt
	if quiet.IsZero() {
		t.Errorf("task still enabled %s after its row was deleted", time.Since(deleted).Round(time.Second))
		quiet = time.Now()
	}
	// At the hook: no slot after the retirement (or after the 5 s the
	// task had for it) is delivered (one in flight then may still land).
	time.Sleep(3 * time.Second)
	if late := hook.after(quiet); len(late) != 0 {
		t.Fatalf("%d deliveries of slots after %s, when the row had been deleted %s before",
			len(late), quiet.Format(time.StampMilli), quiet.Sub(deleted).Round(time.Millisecond))
	}
	// The deleted task is purged once released.
	eventually(t, "the retired task purged", func() bool {
		_, err := b.srv.store.GetTask(t.Context(), "gone")
		return errors.Is(err, task.ErrNotFound)
	})
}
