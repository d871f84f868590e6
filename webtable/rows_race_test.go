package webtable_test

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"cronsheet/internal/apitest"
	"cronsheet/internal/apitest/fullapi"
	"cronsheet/task"
)

// TestParallelPatchWithoutIfMatchApplies sends 20 PATCHes of one row at
// once, none naming a version: every one is saved (the last writer wins),
// none is answered with a version the client never sent, and the row ends
// holding one of the values sent.
func TestParallelPatchWithoutIfMatchApplies(t *testing.T) {
	t.Parallel()
	b := fullapi.Setup(t)
	apitest.Want[task.Row](t, b.Do(t, http.MethodPost, fullapi.RowsPath,
		`{"memo_id":"race","content":"x","when":"every 1h"}`), http.StatusCreated)
	path := fullapi.RowsPath + "/race"

	const n = 20
	var wg sync.WaitGroup
	recs := make([]string, n)
	codes := make([]int, n)
	for i := range n {
		wg.Go(func() {
			rec := b.Do(t, http.MethodPatch, path, fmt.Sprintf(`{"f":%d}`, i))
			codes[i], recs[i] = rec.Code, rec.Body.String()
		})
	}
	wg.Wait()
	for i := range n {
		if codes[i] != http.StatusOK {
			t.Errorf("PATCH %d = %d %s, want 200", i, codes[i], recs[i])
		}
		if strings.Contains(recs[i], "you sent") {
			t.Errorf("PATCH %d claims the client sent a version: %s", i, recs[i])
		}
	}
	row := apitest.Want[task.Row](t, b.Do(t, http.MethodGet, path, ""), http.StatusOK)
	sent := make([]string, n)
	for i := range n {
		sent[i] = fmt.Sprint(i)
	}
	if got := fmt.Sprint(row.Fields["f"]); !slices.Contains(sent, got) {
		t.Errorf("final f = %q, want one of the values sent", got)
	}
	// SQLite serializes the writes: each PATCH is one version. (FerretDB
	// does not make the version check atomic, so there two may share one.)
	if apitest.Driver() == "sqlite" && row.Version != n+1 {
		t.Errorf("version = %d, want %d (one per PATCH)", row.Version, n+1)
	}
}

// TestPatchWithStaleIfMatchConflicts keeps the 409 of a PATCH based on a
// version the row no longer has, naming the version sent.
func TestPatchWithStaleIfMatchConflicts(t *testing.T) {
	t.Parallel()
	b := fullapi.Setup(t)
	apitest.Want[task.Row](t, b.Do(t, http.MethodPost, fullapi.RowsPath,
		`{"memo_id":"stale","content":"x","when":"every 1h"}`), http.StatusCreated)
	path := fullapi.RowsPath + "/stale"
	apitest.Want[task.Row](t, b.Do(t, http.MethodPatch, path, `{"f":1}`), http.StatusOK)
	rec := b.Do(t, http.MethodPatch, path, `{"f":2}`, "If-Match", `"1"`)
	apitest.WantError(t, rec, http.StatusConflict, "", "you sent 1")
}
