package auditapi_test

import (
	"net/http"
	"testing"

	"cronsheet/internal/apitest"
	"cronsheet/internal/apitest/fullapi"
	"cronsheet/store"
)

// titledAnswer is the answer of GET /api/v1/audit with the records'
// titles.
type titledAnswer struct {
	Records []struct {
		store.AuditRecord
		Title string `json:"title"`
	} `json:"records"`
}

// The trail names what each record changed: a row by its title field
// (even once deleted), a task by its title, a target by its name.
func TestAuditTitles(t *testing.T) {
	t.Parallel()
	b := fullapi.SetupControl(t)
	b.AddTitledTask(t, "t-water", "浇花 water the plants", 1)
	apitest.Want[any](t, b.Do(t, http.MethodPut, "/api/v1/tasks/t-water/state", `{"state":"stopped"}`), http.StatusOK)
	apitest.Want[any](t, b.Do(t, http.MethodPost, "/api/v1/targets", `{"id":"hook","name":"the hook","kind":"http",
		"state":"running","http":{"method":"POST","url":"https://example.com/hook"}}`), http.StatusCreated)
	apitest.Want[any](t, b.Do(t, http.MethodPost, fullapi.RowsPath,
		`{"memo_id":"m-gone","title":"short-lived","content":"x","when":"every 1h"}`), http.StatusCreated)
	apitest.Want[any](t, b.Do(t, http.MethodDelete, fullapi.RowsPath+"/m-gone", ""), http.StatusNoContent)

	got := apitest.Want[titledAnswer](t, b.Do(t, http.MethodGet, "/api/v1/audit?limit=50", ""), http.StatusOK)
	want := map[string]string{
		"memos/t-water/create": "浇花 water the plants",
		"@task/t-water/state":  "浇花 water the plants",
		"@target/hook/create":  "the hook",
		"memos/m-gone/create":  "short-lived",
		"memos/m-gone/delete":  "short-lived",
	}
	seen := map[string]bool{}
	for _, r := range got.Records {
		k := r.Scenario + "/" + r.RowID + "/" + r.Action
		if w, ok := want[k]; ok {
			seen[k] = true
			if r.Title != w {
				t.Errorf("%s: title %q, want %q", k, r.Title, w)
			}
		}
	}
	for k := range want {
		if !seen[k] {
			t.Errorf("no record %s in %+v", k, got.Records)
		}
	}
}
