package webtable_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"cronsheet/mapping"
	"cronsheet/store"
	"cronsheet/task"
)

// TestTableUnchanged: the table answer carries the
// page's tag (ETag); the same request sent again with If-None-Match is
// answered 304 without the rows while nothing the page shows changed, on
// the test driver; an edit of a row of the page, its sync, a fire, a
// finished run (the outcome strip), a task's state and a new row (the
// counts) each change the tag. An edit of a row on another page does not.
func TestTableUnchanged(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	b := setupTable(t)
	memos, err := mapping.New(mapping.MemosConfig())
	if err != nil {
		t.Fatal(err)
	}
	q := columnsQuery(t, b)
	q.Set("length", "5")
	q.Set("counts", "1")

	send := func(method, draw, etag string) *httptest.ResponseRecorder {
		t.Helper()
		q.Set("draw", draw)
		var req *http.Request
		if method == http.MethodPost {
			req = httptest.NewRequest(method, tablePath, strings.NewReader(q.Encode()))
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		} else {
			req = httptest.NewRequest(method, tablePath+"?"+q.Encode(), nil)
		}
		if etag != "" {
			req.Header.Set("If-None-Match", etag)
		}
		rec := httptest.NewRecorder()
		b.router.ServeHTTP(rec, req)
		if rec.Header().Get("Server-Timing") == "" && rec.Code < 400 {
			t.Errorf("%s: no Server-Timing header", method)
		}
		return rec
	}
	tag := ""
	// changed asserts the page's tag moved after what was done, and takes
	// the new one.
	changed := func(what string) {
		t.Helper()
		rec := send(http.MethodGet, "7", tag)
		if rec.Code != http.StatusOK || rec.Header().Get("ETag") == tag || rec.Body.Len() == 0 {
			t.Fatalf("after %s: %d, ETag %q (was %q); want 200 with a new tag and the page", what, rec.Code, rec.Header().Get("ETag"), tag)
		}
		tag = rec.Header().Get("ETag")
	}
	unchanged := func(what string) {
		t.Helper()
		rec := send(http.MethodGet, "8", tag)
		if rec.Code != http.StatusNotModified || rec.Body.Len() != 0 || rec.Header().Get("ETag") != tag {
			t.Fatalf("%s: %d, ETag %q, %d bytes; want 304, tag %q, no body", what, rec.Code, rec.Header().Get("ETag"), rec.Body.Len(), tag)
		}
	}

	first := send(http.MethodGet, "1", "")
	tag = first.Header().Get("ETag")
	if first.Code != http.StatusOK || !strings.HasPrefix(tag, `W/"`) {
		t.Fatalf("first answer: %d, ETag %q; want 200 and a weak tag", first.Code, tag)
	}
	unchanged("the same request (another draw)")
	if rec := send(http.MethodGet, "9", `"other", `+tag); rec.Code != http.StatusNotModified {
		t.Errorf("If-None-Match listing the tag second: %d, want 304", rec.Code)
	}
	if rec := send(http.MethodPost, "9", tag); rec.Code != http.StatusOK || rec.Body.Len() == 0 {
		t.Errorf("POST with If-None-Match: %d, want 200 with the page (304 is for GET)", rec.Code)
	}

	// A row of another page (the page shows m00..m04).
	if _, err := b.store.UpdateRowFields(ctx, store.UpdateRowParams{Scenario: "memos", ID: "m20",
		Fields: map[string]any{"memo_id": "m20", "title": "elsewhere", "content": "c", "when": "every 1h", "channel": "outbox"}}); err != nil {
		t.Fatal(err)
	}
	unchanged("an edit of a row on another page")

	row, err := b.store.UpdateRowFields(ctx, store.UpdateRowParams{Scenario: "memos", ID: "m01",
		Fields: map[string]any{"memo_id": "m01", "title": "edited", "content": "c", "when": "every 1h", "channel": "outbox"}})
	if err != nil {
		t.Fatal(err)
	}
	changed("an edit of a row of the page")
	unchanged("the edited page asked again")

	now := time.Now().UTC().Truncate(time.Millisecond)
	tk, err := memos.ToTask(row, now)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.store.ApplySync(ctx, store.ApplySyncParams{Scenario: "memos", RowID: "m01", RowVersion: row.Version,
		Task: tk, IsActive: tk.IsEnable, Now: now}); err != nil {
		t.Fatal(err)
	}
	changed("the row's sync (is_fetched, its task)")

	run := &task.Run{TriggerID: "tr-1", TaskID: "m01", Slot: now, TriggerType: task.TriggerSchedule,
		State: task.RunPending, Attempt: 1, Node: "n1", Fence: 1, FiredAt: now}
	if _, err := b.store.RecordFire(ctx, run, store.TaskStatusParams{TaskID: "m01", LastFire: now,
		NextFire: now.Add(time.Hour), SetNextFire: true}); err != nil {
		t.Fatal(err)
	}
	changed("a fire (last and next fire)")
	unchanged("the fired page asked again")

	run.State, run.FinishedAt = task.RunDone, now.Add(time.Second)
	if err := b.store.FinishRun(ctx, run, store.TaskStatusParams{TaskID: "m01", LastStatus: "done"}); err != nil {
		t.Fatal(err)
	}
	changed("a finished run (last status, the outcome strip)")

	if _, err := b.store.SetTaskState(ctx, store.TaskStateParams{TaskID: "m01", State: task.StateStopped, Now: now}); err != nil {
		t.Fatal(err)
	}
	changed("the task's state")

	if err := b.store.InsertRow(ctx, &task.Row{Scenario: "memos", ID: "m99", IsActive: 1, Fields: map[string]any{
		"memo_id": "m99", "title": "new", "content": "c", "when": "every 1h", "channel": "outbox"}}); err != nil {
		t.Fatal(err)
	}
	changed("a new row on another page (the counts)")
	unchanged("nothing since")

	// The tag follows the query: another page has another tag.
	q.Set("start", "5")
	if rec := send(http.MethodGet, "10", tag); rec.Code != http.StatusOK {
		t.Errorf("the next page with the first page's tag: %d, want 200", rec.Code)
	}
}
