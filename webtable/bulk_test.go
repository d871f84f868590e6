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

const bulkPath = fullapi.RowsPath + "/bulk"

// bulkAnswer is the answer of POST .../rows/bulk.
type bulkAnswer struct {
	Action  string `json:"action"`
	OK      int    `json:"ok"`
	Failed  int    `json:"failed"`
	Results []struct {
		ID     string `json:"id"`
		Status int    `json:"status"`
		Error  string `json:"error"`
	} `json:"results"`
}

func TestBulk(t *testing.T) {
	t.Parallel()
	b := fullapi.Setup(t)
	ctx := context.Background()
	for i := 1; i <= 3; i++ {
		apitest.Want[task.Row](t, b.Do(t, http.MethodPost, fullapi.RowsPath,
			fmt.Sprintf(`{"memo_id":"m-b%d","content":"x","when":"every 1h"}`, i)), http.StatusCreated)
	}

	got := apitest.Want[bulkAnswer](t, b.Do(t, http.MethodPost, bulkPath,
		`{"action":"deactivate","ids":["m-b1","m-b2","m-nope","m-b1"]}`, "X-Cronsheet-User", "bob"), http.StatusOK)
	if got.OK != 2 || got.Failed != 1 || len(got.Results) != 3 || got.Results[2].Status != http.StatusNotFound ||
		!strings.Contains(got.Results[2].Error, "m-nope") {
		t.Fatalf("deactivate = %+v", got)
	}
	for _, id := range []string{"m-b1", "m-b2"} {
		r, err := b.Store.GetRow(ctx, "memos", id)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(r.Fields["active"]) != "0" || r.Version != 2 || r.IsFetched != 0 {
			t.Errorf("%s after deactivate = %+v", id, r)
		}
		recs, err := b.Store.ListAudit(ctx, "memos", id, 0, 10)
		if err != nil || len(recs) != 2 || recs[0].Action != store.AuditDeactivate || recs[0].Who != "bob" ||
			recs[0].Old["active"] != nil || fmt.Sprint(recs[0].New["active"]) != "0" {
			t.Errorf("audit of %s = %+v, %v", id, recs, err)
		}
	}
	if r, _ := b.Store.GetRow(ctx, "memos", "m-b3"); r.Version != 1 {
		t.Errorf("m-b3 was touched: %+v", r)
	}

	// Activating: a row already active is left alone, but reported ok.
	got = apitest.Want[bulkAnswer](t, b.Do(t, http.MethodPost, bulkPath, `{"action":"activate","ids":["m-b1","m-b3"]}`), http.StatusOK)
	if got.OK != 2 || got.Failed != 0 {
		t.Errorf("activate = %+v", got)
	}
	if r, _ := b.Store.GetRow(ctx, "memos", "m-b1"); fmt.Sprint(r.Fields["active"]) != "1" || r.Version != 3 {
		t.Errorf("m-b1 after activate = %+v", r)
	}
	if r, _ := b.Store.GetRow(ctx, "memos", "m-b3"); r.Version != 1 {
		t.Errorf("m-b3 (already active) was rewritten: %+v", r)
	}

	wakes := b.Wakes.Load()
	got = apitest.Want[bulkAnswer](t, b.Do(t, http.MethodPost, bulkPath, `{"action":"delete","ids":["m-b2","m-b3"]}`), http.StatusOK)
	if got.OK != 2 {
		t.Errorf("delete = %+v", got)
	}
	if b.Wakes.Load() != wakes+1 {
		t.Error("bulk delete did not wake the patrols once")
	}
	for _, id := range []string{"m-b2", "m-b3"} {
		if _, err := b.Store.GetRow(ctx, "memos", id); err == nil {
			t.Errorf("%s still there", id)
		}
		recs, _ := b.Store.ListAudit(ctx, "memos", id, 0, 1)
		if len(recs) != 1 || recs[0].Action != store.AuditDelete || recs[0].New != nil || recs[0].Old["content"] != "x" {
			t.Errorf("audit of %s = %+v", id, recs)
		}
	}

	// Refusals.
	many := `"m"` + strings.Repeat(`,"m"`, 500)
	for _, tc := range []struct{ body, field, part string }{
		{`{"action":"explode","ids":["m-b1"]}`, "action", "activate, deactivate or delete"},
		{`{"action":"delete","ids":[]}`, "ids", "at least one"},
		{`{"action":"delete"}`, "ids", "at least one"},
		{`{"action":"delete","ids":"m-b1"}`, "ids", "list"},
		{`{"action":"delete","ids":[1]}`, "ids", "list"},
		{`{"action":"delete","ids":[""]}`, "ids", "empty"},
		{`{"action":"delete","ids":[` + many + `]}`, "ids", "at most 500"},
		{`[1]`, "body", "JSON object"},
	} {
		apitest.WantError(t, b.Do(t, http.MethodPost, bulkPath, tc.body), http.StatusBadRequest, tc.field, tc.part)
	}
	apitest.WantError(t, b.Do(t, http.MethodPost, "/api/v1/scenarios/nope/rows/bulk", `{}`), http.StatusNotFound, "", "unknown scenario")
}
