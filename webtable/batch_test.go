package webtable_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"cronsheet/internal/apitest"
	"cronsheet/internal/apitest/fullapi"
	"cronsheet/store"
	"cronsheet/task"
)

const batchPath = fullapi.RowsPath + "/batch"

// batchAnswer is the answer of POST .../rows/batch, saved or refused.
type batchAnswer struct {
	Rows []struct {
		ID     string         `json:"id"`
		Fields map[string]any `json:"fields"`
		Status int            `json:"status"`
		Error  string         `json:"error"`
		Field  string         `json:"field"`
	} `json:"rows"`
	Error string `json:"error"`
}

func TestBatch(t *testing.T) {
	t.Parallel()
	b := fullapi.Setup(t)
	ctx := context.Background()
	for i := 1; i <= 3; i++ {
		apitest.Want[task.Row](t, b.Do(t, http.MethodPost, fullapi.RowsPath,
			fmt.Sprintf(`{"memo_id":"m-p%d","title":"t%d","content":"x","when":"every 1h"}`, i, i)), http.StatusCreated)
	}
	version := func(id string) int64 {
		r, err := b.Store.GetRow(ctx, "memos", id)
		if err != nil {
			t.Fatal(err)
		}
		return r.Version
	}

	// One invalid row refuses the whole batch: nothing is written, and
	// each refused row says why, with its field.
	got := apitest.Want[batchAnswer](t, b.Do(t, http.MethodPost, batchPath, `{"rows":[
		{"id":"m-p1","version":1,"fields":{"title":"new 1","when":"every 2h"}},
		{"id":"m-p2","version":1,"fields":{"title":"new 2","when":"dayly 8:00"}},
		{"id":"m-p3","version":7,"fields":{"title":"new 3"}}]}`), http.StatusBadRequest)
	if len(got.Rows) != 2 || got.Rows[0].ID != "m-p2" || got.Rows[0].Field != "when" || !strings.Contains(got.Rows[0].Error, "dayly") ||
		got.Rows[1].ID != "m-p3" || got.Rows[1].Status != http.StatusConflict || !strings.Contains(got.Error, "nothing was saved") {
		t.Fatalf("refused batch = %+v", got)
	}
	for _, id := range []string{"m-p1", "m-p2", "m-p3"} {
		if v := version(id); v != 1 {
			t.Errorf("%s was written by a refused batch (version %d)", id, v)
		}
	}

	// A valid batch is written whole, each row audited.
	got = apitest.Want[batchAnswer](t, b.Do(t, http.MethodPost, batchPath, `{"rows":[
		{"id":"m-p1","version":1,"fields":{"title":"new 1","when":"every 2h"}},
		{"id":"m-p2","fields":{"title":"new 2","to":null}}]}`, "X-Cronsheet-User", "ann"), http.StatusOK)
	if len(got.Rows) != 2 || got.Rows[0].Fields["title"] != "new 1" || got.Rows[1].Fields["title"] != "new 2" {
		t.Fatalf("saved batch = %+v", got)
	}
	for _, id := range []string{"m-p1", "m-p2"} {
		recs, err := b.Store.ListAudit(ctx, "memos", id, 0, 10)
		if err != nil || len(recs) != 2 || recs[0].Action != store.AuditUpdate || recs[0].Who != "ann" {
			t.Errorf("audit of %s = %+v, %v", id, recs, err)
		}
	}
	if v := version("m-p3"); v != 1 {
		t.Errorf("m-p3 was written (version %d)", v)
	}

	// Refusals of the request itself.
	many := `{"id":"m","fields":{"a":1}}` + strings.Repeat(`,{"id":"m","fields":{"a":1}}`, 500)
	for _, tc := range []struct{ body, part string }{
		{`{"rows":[]}`, "at least one"},
		{`{}`, "at least one"},
		{`{"rows":"x"}`, "list"},
		{`{"rows":[{"id":"","fields":{"title":"x"}}]}`, "empty"},
		{`{"rows":[{"id":"m-p1","fields":{}}]}`, "fields is empty"},
		{`{"rows":[{"id":"m-p1","fields":{"title":"a"}},{"id":"m-p1","fields":{"to":"b"}}]}`, "twice"},
		{`{"rows":[` + many + `]}`, "at most 500"},
	} {
		apitest.WantError(t, b.Do(t, http.MethodPost, batchPath, tc.body), http.StatusBadRequest, "rows", tc.part)
	}
	got = apitest.Want[batchAnswer](t, b.Do(t, http.MethodPost, batchPath, `{"rows":[{"id":"m-nope","fields":{"title":"x"}}]}`), http.StatusNotFound)
	if len(got.Rows) != 1 || got.Rows[0].Status != http.StatusNotFound {
		t.Errorf("missing row = %+v", got)
	}
}
