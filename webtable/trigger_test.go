package webtable_test

import (
	"context"
	"log/slog"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"cronsheet/executors"
	"cronsheet/fire"
	"cronsheet/mapping"
	"cronsheet/store"
	"cronsheet/store/sqlite"
	"cronsheet/task"
	"cronsheet/webtable"
)

// triggerBundle is an API whose Trigger is a real firer over SQLite.
type triggerBundle struct {
	*testBundle
	firer *fire.Firer
}

func setupTrigger(t *testing.T) *triggerBundle {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "cronsheet.db"))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	memos, err := mapping.New(mapping.MemosConfig())
	if err != nil {
		t.Fatalf("memos scenario: %v", err)
	}
	logger := slog.New(slog.DiscardHandler)
	execs := executors.NewRegistry()
	execs.Register(task.ChannelOutbox, executors.NewOutbox(logger, st))
	f := fire.New(logger, fire.Config{Node: "api-node"}, st, execs, nil)
	t.Cleanup(func() { _ = f.Shutdown(context.Background()) })
	b := &triggerBundle{testBundle: &testBundle{store: st, logs: &syncBuffer{}}, firer: f}
	api := webtable.New(webtable.Deps{
		Logger:    logger,
		Store:     st,
		Scenarios: map[string]*mapping.Scenario{"memos": memos},
		Now:       func() time.Time { return fixedNow },
		Trigger: func(ctx context.Context, taskID string) (*task.Run, error) {
			return f.Trigger(ctx, taskID, fixedNow)
		},
	})
	r := gin.New()
	r.Use(webtable.Middleware(logger)...)
	api.Register(r)
	b.router = r
	return b
}

// addTask stores a row and its synced task (not claimed by anyone).
func (b *triggerBundle) addTask(t *testing.T, id string, active int) {
	t.Helper()
	body := `{"memo_id":"` + id + `","title":"hi","content":"body","when":"every 1h","channel":"outbox"}`
	row := want[task.Row](t, b.do(t, http.MethodPost, rowsPath, body), http.StatusCreated)
	memos, err := mapping.New(mapping.MemosConfig())
	if err != nil {
		t.Fatal(err)
	}
	tk, err := memos.ToTask(&row, fixedNow)
	if err != nil {
		t.Fatalf("ToTask: %v", err)
	}
	tk.IsEnable = active
	if err := b.store.ApplySync(context.Background(), store.ApplySyncParams{Scenario: "memos", RowID: id,
		RowVersion: row.Version, Task: tk, IsActive: task.RowActive, Now: fixedNow}); err != nil {
		t.Fatalf("ApplySync: %v", err)
	}
}

func TestTriggerEndpoint(t *testing.T) {
	t.Parallel()
	b := setupTrigger(t)
	b.addTask(t, "t1", 1)
	b.addTask(t, "off", 0)

	run := want[task.Run](t, b.do(t, http.MethodPost, "/api/v1/tasks/t1/trigger", ""), http.StatusAccepted)
	if run.TaskID != "t1" || run.TriggerType != task.TriggerManual || !run.Slot.Equal(fixedNow) || run.TriggerID == "" {
		t.Errorf("run = %+v, want a manual run of t1 at %s", run, fixedNow)
	}
	// The same instant again: already fired.
	wantError(t, b.do(t, http.MethodPost, "/api/v1/tasks/t1/trigger", ""), http.StatusConflict, "", "already fired")
	wantError(t, b.do(t, http.MethodPost, "/api/v1/tasks/off/trigger", ""), http.StatusConflict, "", "disabled")
	wantError(t, b.do(t, http.MethodPost, "/api/v1/tasks/nope/trigger", ""), http.StatusNotFound, "", `task "nope" not found`)

	if err := b.firer.Shutdown(t.Context()); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	runs, err := b.store.ListRuns(t.Context(), "t1", time.Time{}, 10)
	if err != nil {
		t.Fatalf("ListRuns: %v", err)
	}
	if len(runs) != 1 || runs[0].TriggerID != run.TriggerID || runs[0].State != task.RunDone {
		t.Errorf("ledger = %+v, want the one manual run, done", runs)
	}
}

func TestTriggerEndpointWithoutFirer(t *testing.T) {
	t.Parallel()
	b := setup(t) // no Deps.Trigger
	wantError(t, b.do(t, http.MethodPost, "/api/v1/tasks/t1/trigger", ""), http.StatusNotImplemented, "", "not available")
}
