package auditapi_test

import (
	"net/http"
	"strconv"
	"strings"
	"testing"

	"cronsheet/internal/apitest"
	"cronsheet/internal/apitest/fullapi"
	"cronsheet/store"
	"cronsheet/task"
)

// auditAnswer is the answer of GET .../rows/:id/audit.
type auditAnswer struct {
	Records    []store.AuditRecord `json:"records"`
	NextBefore int64               `json:"next_before"`
}

func TestAuditTrail(t *testing.T) {
	t.Parallel()
	b := fullapi.Setup(t)

	row := apitest.Want[task.Row](t, b.Do(t, http.MethodPost, fullapi.RowsPath,
		`{"memo_id":"m-aud","title":"one","content":"x","when":"every 1h"}`, "X-Cronsheet-User", "alice"), http.StatusCreated)
	apitest.Want[task.Row](t, b.Do(t, http.MethodPatch, fullapi.RowsPath+"/m-aud", `{"title":"two"}`,
		"X-Cronsheet-User", strings.Repeat("b", 300)), http.StatusOK)
	// A refused edit leaves no record.
	apitest.WantError(t, b.Do(t, http.MethodPatch, fullapi.RowsPath+"/m-aud", `{"timeout":"soon"}`), http.StatusBadRequest, "timeout", "")
	apitest.Want[any](t, b.Do(t, http.MethodDelete, fullapi.RowsPath+"/m-aud", ""), http.StatusNoContent)

	got := apitest.Want[auditAnswer](t, b.Do(t, http.MethodGet, fullapi.RowsPath+"/m-aud/audit", ""), http.StatusOK)
	if len(got.Records) != 3 {
		t.Fatalf("records = %+v, want 3", got.Records)
	}
	del, upd, cre := got.Records[0], got.Records[1], got.Records[2]
	if cre.Action != store.AuditCreate || cre.Who != "alice" || cre.Old != nil || cre.New["title"] != "one" ||
		cre.RowID != row.ID || cre.Scenario != "memos" || !cre.At.Equal(apitest.FixedNow) {
		t.Errorf("create record = %+v", cre)
	}
	if upd.Action != store.AuditUpdate || upd.Who != strings.Repeat("b", store.MaxAuditWho) ||
		upd.Old["title"] != "one" || upd.New["title"] != "two" {
		t.Errorf("update record = %+v", upd)
	}
	// Without the header the client IP stands in (httptest's is 192.0.2.1).
	if del.Action != store.AuditDelete || del.Who != "192.0.2.1" || del.Old["title"] != "two" || del.New != nil {
		t.Errorf("delete record = %+v", del)
	}

	// Paging.
	p1 := apitest.Want[auditAnswer](t, b.Do(t, http.MethodGet, fullapi.RowsPath+"/m-aud/audit?limit=2", ""), http.StatusOK)
	if len(p1.Records) != 2 || p1.NextBefore != upd.ID {
		t.Fatalf("page 1 = %+v", p1)
	}
	p2 := apitest.Want[auditAnswer](t, b.Do(t, http.MethodGet, fullapi.RowsPath+"/m-aud/audit?limit=2&before="+itoa(p1.NextBefore), ""), http.StatusOK)
	if len(p2.Records) != 1 || p2.Records[0].ID != cre.ID || p2.NextBefore != 0 {
		t.Errorf("page 2 = %+v", p2)
	}
	apitest.WantError(t, b.Do(t, http.MethodGet, fullapi.RowsPath+"/m-aud/audit?limit=0", ""), http.StatusBadRequest, "limit", "")
	apitest.WantError(t, b.Do(t, http.MethodGet, "/api/v1/scenarios/nope/rows/x/audit", ""), http.StatusNotFound, "", "unknown scenario")
	if got := apitest.Want[auditAnswer](t, b.Do(t, http.MethodGet, fullapi.RowsPath+"/other/audit", ""), http.StatusOK); len(got.Records) != 0 {
		t.Errorf("audit of an unknown row = %+v", got)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
