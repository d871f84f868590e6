package webtable_test

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"

	"cronsheet/internal/apitest"
	"cronsheet/internal/apitest/fullapi"
	"cronsheet/task"
)

// TestBodyTextRuleDoors: through the real router, the one text rule
// holds for a target (NUL in http.body, a member named twice), a row (a
// member named twice) and a CSV import (NUL in a cell), each a 400 naming
// the field; a target's body after a byte-order mark and a multi-line
// http.body are taken; GET /api/v1/jobs/backfill is a 405 with Allow.
func TestBodyTextRuleDoors(t *testing.T) {
	t.Parallel()
	b := fullapi.Setup(t)
	target := func(id, body string) string {
		return `{"id":"` + id + `","kind":"http","http":{"method":"POST","url":"http://example.com/hook","body":` + body + `}}`
	}
	apitest.WantError(t, b.Do(t, http.MethodPost, "/api/v1/targets", target("t-nul", `"a\u0000b"`)),
		http.StatusBadRequest, "http.body", "NUL")
	apitest.WantError(t, b.Do(t, http.MethodPost, "/api/v1/targets",
		`{"id":"t-dup","kind":"http","http":{"method":"POST","method":"GET","url":"http://example.com/hook"}}`),
		http.StatusBadRequest, "http.method", "twice")
	apitest.WantError(t, b.Do(t, http.MethodPost, "/api/v1/targets", target(`t-lf\n`, `"x"`)),
		http.StatusBadRequest, "id", "one line")
	apitest.Want[task.Target](t, b.Do(t, http.MethodPost, "/api/v1/targets", "\ufeff"+target("t-bom", `"line 1\r\nline 2"`)),
		http.StatusCreated)
	apitest.WantError(t, b.Do(t, http.MethodPost, fullapi.RowsPath,
		`{"memo_id":"m-dup","content":"x","when":"every 1h","when":"every 2h"}`), http.StatusBadRequest, "when", "twice")
	apitest.WantError(t, b.Do(t, http.MethodPost, importPath, "memo_id,title,when\nm-c1,a\x00b,every 1h\n",
		"Content-Type", "text/csv"), http.StatusBadRequest, "", "(title): holds a NUL")

	rec := b.Do(t, http.MethodGet, "/api/v1/jobs/backfill", "")
	apitest.WantCode(t, rec, task.CodeMethodNotAllowed)
	if rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != http.MethodPost {
		t.Errorf("GET /api/v1/jobs/backfill = %d Allow %q, want 405 Allow POST", rec.Code, rec.Header().Get("Allow"))
	}
}

// TestRowParamsObject: a row's params given as a JSON object, as the
// README shows, is taken (201) and stored as its JSON text, which an
// export and an import of that export keep as it is.
func TestRowParamsObject(t *testing.T) {
	t.Parallel()
	src, dst := fullapi.Setup(t), fullapi.Setup(t)
	apitest.Want[task.Row](t, src.Do(t, http.MethodPost, fullapi.RowsPath,
		`{"memo_id":"m-obj","content":"x","when":"every 1h","params":{"day":"mon","n":2,"tag":"<b>"}}`), http.StatusCreated)
	const want = `{"day":"mon","n":2,"tag":"<b>"}`
	r, err := src.Store.GetRow(context.Background(), "memos", "m-obj")
	if err != nil {
		t.Fatal(err)
	}
	if r.Fields["params"] != want {
		t.Fatalf("stored params = %#v, want the text %s", r.Fields["params"], want)
	}
	first := exportAll(t, src.Store)
	apitest.Want[importAnswer](t, dst.Do(t, http.MethodPost, importPath, first, "Content-Type", "text/csv"), http.StatusCreated)
	if r, err = dst.Store.GetRow(context.Background(), "memos", "m-obj"); err != nil || r.Fields["params"] != want {
		t.Fatalf("params after export and import = %#v (%v), want %s", r.Fields["params"], err, want)
	}
	if second := exportAll(t, dst.Store); second != first {
		t.Errorf("export after import differs:\n%s\nfirst:\n%s", second, first)
	}
	apitest.WantError(t, src.Do(t, http.MethodPost, fullapi.RowsPath,
		`{"memo_id":"m-bad","content":"x","when":"every 1h","params":{"day":{"x":1}}}`), http.StatusBadRequest, "params", "day")
}

// TestBatchAnyVersionRace: 20 clients each batch-edit one row with
// version 0 ("any version"), each its own field, at once, 5 edits each:
// every edit is saved (200) and the row holds each client's last value,
// as PATCHes without If-Match would leave it.
func TestBatchAnyVersionRace(t *testing.T) {
	t.Parallel()
	b := fullapi.Setup(t)
	apitest.Want[task.Row](t, b.Do(t, http.MethodPost, fullapi.RowsPath,
		`{"memo_id":"m-race","content":"x","when":"every 1h"}`), http.StatusCreated)
	const clients, edits = 20, 5
	codes := make([]int, clients*edits)
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for e := range edits {
				body := fmt.Sprintf(`{"rows":[{"id":"m-race","version":0,"fields":{"f%d":"v%d"}}]}`, c, e)
				codes[c*edits+e] = b.Do(t, http.MethodPost, batchPath, body).Code
			}
		})
	}
	wg.Wait()
	r, err := b.Store.GetRow(context.Background(), "memos", "m-race")
	if err != nil {
		t.Fatal(err)
	}
	for i, code := range codes {
		if code != http.StatusOK {
			t.Errorf("client %d edit %d: %d, want 200", i/edits, i%edits, code)
		}
	}
	for c := range clients {
		if got, want := r.Fields[fmt.Sprintf("f%d", c)], fmt.Sprintf("v%d", edits-1); got != want {
			t.Errorf("field f%d = %#v, want %s: the edit was lost", c, got, want)
		}
	}
}
