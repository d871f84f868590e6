package webtable_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"cronsheet/internal/apitest"
	"cronsheet/mapping"
	"cronsheet/store"
	"cronsheet/task"
)

// TestTableRowTasks: the table answer carries each row's task beside the
// row (state, enabled, done), read with the page on the test driver, so the
// page needs no request per row; a row not synced yet has none.
func TestTableRowTasks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := apitest.OpenStore(t)
	memos, err := mapping.New(mapping.MemosConfig())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Millisecond)
	rows := map[string]map[string]any{
		"r-ok":      {"active": 1},
		"r-off":     {"active": 0},
		"r-bad":     {"when": "dayly 8:00"},
		"r-done":    {"when": "in 1h"},
		"r-stopped": {},
		"r-closed":  {},
		"r-new":     {},
	}
	for id, extra := range rows {
		fields := map[string]any{"memo_id": id, "title": id, "content": "c", "when": "every 1h", "channel": "outbox"}
		for k, v := range extra {
			fields[k] = v
		}
		row := &task.Row{Scenario: "memos", ID: id, Fields: fields}
		if err := st.InsertRow(ctx, row); err != nil {
			t.Fatal(err)
		}
		if id == "r-new" {
			continue // not synced yet: no task
		}
		// What the sync patrol does (patrol.Sync.syncRow).
		p := store.ApplySyncParams{Scenario: "memos", RowID: id, RowVersion: row.Version, Now: now}
		tk, err := memos.ToTask(row, now)
		if err != nil {
			p.DisableTask, p.IsActive, p.Error = true, task.RowError, err.Error()
		} else {
			p.Task, p.IsActive = tk, tk.IsEnable
		}
		if err := st.ApplySync(ctx, p); err != nil {
			t.Fatalf("ApplySync %s: %v", id, err)
		}
	}
	if err := st.SetTaskStatus(ctx, store.TaskStatusParams{TaskID: "r-done", LastFire: now, LastStatus: "done", Done: true}); err != nil {
		t.Fatal(err)
	}
	for id, state := range map[string]task.State{"r-stopped": task.StateStopped, "r-closed": task.StateClosed} {
		if _, err := st.SetTaskState(ctx, store.TaskStateParams{TaskID: id, State: state, Now: now}); err != nil {
			t.Fatal(err)
		}
	}

	rec := httptest.NewRecorder()
	memosTable(t, st).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tablePath+"?draw=1&length=50", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("table: %d %s", rec.Code, rec.Body)
	}
	var answer struct {
		Data []struct {
			ID       string         `json:"id"`
			IsActive int            `json:"is_active"`
			Error    string         `json:"error"`
			Task     *store.RowTask `json:"task"`
		} `json:"data"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &answer); err != nil {
		t.Fatal(err)
	}
	want := map[string]*store.RowTask{
		"r-ok":      {TaskID: "r-ok", State: task.StateRunning, Enabled: true},
		"r-off":     {TaskID: "r-off", State: task.StateRunning},
		"r-bad":     nil,
		"r-done":    {TaskID: "r-done", State: task.StateRunning, Enabled: true, Done: true},
		"r-stopped": {TaskID: "r-stopped", State: task.StateStopped, Enabled: true},
		"r-closed":  {TaskID: "r-closed", State: task.StateClosed, Enabled: true},
		"r-new":     nil,
	}
	if len(answer.Data) != len(want) {
		t.Fatalf("got %d rows, want %d: %s", len(answer.Data), len(want), rec.Body)
	}
	for _, d := range answer.Data {
		w, ok := want[d.ID]
		switch {
		case !ok:
			t.Errorf("unexpected row %s", d.ID)
		case w == nil && d.Task != nil:
			t.Errorf("row %s: task %+v, want none", d.ID, *d.Task)
		case w != nil && (d.Task == nil || *d.Task != *w):
			t.Errorf("row %s: task %+v, want %+v", d.ID, d.Task, *w)
		}
		if d.ID == "r-bad" && (d.IsActive != task.RowError || d.Error == "") {
			t.Errorf("row r-bad: is_active %d, error %q; want -1 and the reason", d.IsActive, d.Error)
		}
	}
}
