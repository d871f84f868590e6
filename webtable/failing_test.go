package webtable_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"cronsheet/internal/apitest"
	"cronsheet/mapping"
	"cronsheet/store"
	"cronsheet/task"
	"cronsheet/webtable"
)

// failingAnswer is what TestTableFailing reads of a table answer.
type failingAnswer struct {
	RecordsFiltered int64 `json:"recordsFiltered"`
	Data            []struct {
		ID        string `json:"id"`
		IsActive  int    `json:"is_active"`
		State     string `json:"state"`
		LastError string `json:"last_error"`
	} `json:"data"`
	Counts struct {
		Failing int64 `json:"failing"`
		Errors  int64 `json:"errors"`
	} `json:"counts"`
}

// getFailing asks the table endpoint h for query and decodes the answer.
func getFailing(t *testing.T, h http.Handler, query string) failingAnswer {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tablePath+"?"+query, nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("table %s: %d %s", query, rec.Code, rec.Body)
	}
	var a failingAnswer
	if err := json.Unmarshal(rec.Body.Bytes(), &a); err != nil {
		t.Fatal(err)
	}
	return a
}

// finishRun records a finished run of taskID in the ledger and writes its
// state as the task's last status, as the scheduler does when a run ends
// (fire.taskStatus).
func finishRun(t *testing.T, st store.Product, taskID string, n int, state task.RunState, msg string, at time.Time) {
	t.Helper()
	ctx := context.Background()
	run := &task.Run{TriggerID: fmt.Sprintf("%s-run-%d", taskID, n), TaskID: taskID, Slot: at, Target: "outbox",
		TriggerType: task.TriggerSchedule, State: state, Attempt: 1, Node: "test", FiredAt: at, FinishedAt: at, Error: msg}
	if _, err := st.InsertRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	if err := st.SetTaskStatus(ctx, store.TaskStatusParams{TaskID: taskID, LastFire: at, LastStatus: string(state)}); err != nil {
		t.Fatal(err)
	}
}

// syncRows inserts memos rows with ids (every 1h, the outbox) and syncs
// each into its task, as the sync patrol does at now.
func syncRows(t *testing.T, st store.Product, now time.Time, ids ...string) {
	t.Helper()
	ctx := context.Background()
	memos, err := mapping.New(mapping.MemosConfig())
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		row := &task.Row{Scenario: "memos", ID: id, Fields: map[string]any{"memo_id": id, "title": id, "content": "c",
			"when": "every 1h", "channel": "outbox"}}
		if err := st.InsertRow(ctx, row); err != nil {
			t.Fatal(err)
		}
		tk, err := memos.ToTask(row, now)
		if err != nil {
			t.Fatal(err)
		}
		p := store.ApplySyncParams{Scenario: "memos", RowID: id, RowVersion: row.Version, Now: now, Task: tk, IsActive: tk.IsEnable}
		if err := st.ApplySync(ctx, p); err != nil {
			t.Fatalf("ApplySync %s: %v", id, err)
		}
	}
}

// TestTableFailing: a row whose last three runs died is answered with
// state "failing" and its newest error, counted by the failing chip and
// kept by filter[state]=failing, while is_active stays 1; a healthy row is
// not; the next success clears it. On the test driver
// (CRONSHEET_TEST_DRIVER).
func TestTableFailing(t *testing.T) {
	t.Parallel()
	st := apitest.OpenStore(t)
	now := time.Now().UTC().Truncate(time.Millisecond)
	syncRows(t, st, now, "r-fail", "r-ok")
	for i := range 3 {
		finishRun(t, st, "r-fail", i, task.RunDead, fmt.Sprintf("target reported status 500 (#%d)", i), now.Add(time.Duration(i-3)*time.Minute))
	}
	finishRun(t, st, "r-ok", 0, task.RunDone, "", now.Add(-time.Minute))
	h := memosTable(t, st)

	a := getFailing(t, h, "draw=1&length=50&counts=1")
	states := map[string]string{}
	for _, d := range a.Data {
		states[d.ID] = d.State
		if d.ID == "r-fail" && (d.LastError != "target reported status 500 (#2)" || d.IsActive != 1) {
			t.Errorf("r-fail: last_error %q, is_active %d; want the newest run's error and 1", d.LastError, d.IsActive)
		}
	}
	if states["r-fail"] != "failing" || states["r-ok"] != "" {
		t.Errorf("states %v, want r-fail failing and r-ok none", states)
	}
	if a.Counts.Failing != 1 || a.Counts.Errors != 0 {
		t.Errorf("counts: failing %d, errors %d; want 1 and 0", a.Counts.Failing, a.Counts.Errors)
	}
	f := getFailing(t, h, "draw=2&length=50&filter[state]=failing")
	if f.RecordsFiltered != 1 || len(f.Data) != 1 || f.Data[0].ID != "r-fail" {
		t.Errorf("filter failing: %d rows %+v, want r-fail alone", f.RecordsFiltered, f.Data)
	}

	// The next success recovers the row.
	finishRun(t, st, "r-fail", 3, task.RunDone, "", now)
	a = getFailing(t, h, "draw=3&length=50&counts=1")
	for _, d := range a.Data {
		if d.State != "" || d.LastError != "" {
			t.Errorf("after a success, %s: state %q, last_error %q; want none", d.ID, d.State, d.LastError)
		}
	}
	if a.Counts.Failing != 0 {
		t.Errorf("after a success, the failing chip counts %d, want 0", a.Counts.Failing)
	}
	if f := getFailing(t, h, "draw=4&length=50&filter[state]=failing"); f.RecordsFiltered != 0 {
		t.Errorf("after a success, filter failing keeps %d rows", f.RecordsFiltered)
	}
}

// endingStore ends a run (end) just before the table's first count of
// failing rows: between the read of a page and the chips' counts, as a
// run that ends during a table request does.
type endingStore struct {
	webtable.TableStore
	once sync.Once
	end  func()
}

func (s *endingStore) QueryRows(ctx context.Context, q store.RowQuery) (*store.RowPage, error) {
	if q.Filter.State == store.RowStateFailing {
		s.once.Do(s.end)
	}
	return s.TableStore.QueryRows(ctx, q)
}

// TestTableCountsAgreeWithPage: a run that ends dead between the table's
// read of the page and its count of the failing chip does not give one
// answer that contradicts itself (the row not failing, the chip counting
// it): the answer shows the row failing and counts it. On the test
// driver.
func TestTableCountsAgreeWithPage(t *testing.T) {
	t.Parallel()
	st := apitest.OpenStore(t)
	now := time.Now().UTC().Truncate(time.Millisecond)
	syncRows(t, st, now, "r-1")
	finishRun(t, st, "r-1", 0, task.RunDone, "", now.Add(-time.Minute))
	h := memosTable(t, &endingStore{TableStore: st, end: func() {
		finishRun(t, st, "r-1", 1, task.RunDead, "target reported status 500", now)
	}})
	a := getFailing(t, h, "draw=1&length=50&counts=1")
	if len(a.Data) != 1 || a.Data[0].State != "failing" || a.Counts.Failing != 1 {
		t.Errorf("answer %+v with failing chip %d; want r-1 failing and counted", a.Data, a.Counts.Failing)
	}
}
