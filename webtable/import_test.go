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
)

const importPath = "/api/v1/scenarios/memos/import"

// importAnswer is the answer of POST .../import, either way.
type importAnswer struct {
	Imported int      `json:"imported"`
	IDs      []string `json:"ids"`
	Error    string   `json:"error"`
	Lines    []struct {
		Line  int    `json:"line"`
		Field string `json:"field"`
		Error string `json:"error"`
	} `json:"lines"`
}

// rowCount counts the memos rows in the store.
func rowCount(t *testing.T, b *fullapi.Bundle) int {
	t.Helper()
	rows, err := b.Store.ListRows(context.Background(), "memos", "", 500)
	if err != nil {
		t.Fatal(err)
	}
	return len(rows)
}

func TestImportCSV(t *testing.T) {
	t.Parallel()
	b := fullapi.Setup(t)

	t.Run("Good", func(t *testing.T) {
		csv := "\uFEFFmemo_id,title,when,channel,timeout,note\n" +
			"m-i1,first,every 1h,outbox,30,\"a, quoted\nnote\"\n" +
			",second,daily 08:30,,,\n" +
			"m-i3,third,weekly mon 09:00,outbox,,x\n"
		got := apitest.Want[importAnswer](t, b.Do(t, http.MethodPost, importPath, csv, "Content-Type", "text/csv",
			"X-Cronsheet-User", "importer"), http.StatusCreated)
		if got.Imported != 3 || len(got.IDs) != 3 || got.IDs[0] != "m-i1" || got.IDs[2] != "m-i3" {
			t.Fatalf("answer = %+v", got)
		}
		r, err := b.Store.GetRow(context.Background(), "memos", "m-i1")
		if err != nil {
			t.Fatal(err)
		}
		if r.Fields["note"] != "a, quoted\nnote" || r.Fields["timeout"] != "30" || r.IsActive != 1 {
			t.Errorf("row m-i1 = %+v", r)
		}
		r2, err := b.Store.GetRow(context.Background(), "memos", got.IDs[1])
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := r2.Fields["channel"]; ok {
			t.Errorf("an empty cell was stored: %v", r2.Fields)
		}
		recs, err := b.Store.ListAudit(context.Background(), "memos", "m-i3", 0, 10)
		if err != nil || len(recs) != 1 || recs[0].Action != store.AuditImport || recs[0].Who != "importer" {
			t.Errorf("audit of m-i3 = %+v, %v", recs, err)
		}
		// Importing the same ids again writes nothing: 409 naming the lines.
		got = apitest.Want[importAnswer](t, b.Do(t, http.MethodPost, importPath,
			"memo_id,title,when\nm-new,x,every 1h\nm-i1,dup,every 1h\n"), http.StatusConflict)
		if len(got.Lines) != 1 || got.Lines[0].Line != 3 || got.Lines[0].Field != "memo_id" {
			t.Errorf("conflict answer = %+v", got)
		}
		if _, err := b.Store.GetRow(context.Background(), "memos", "m-new"); err == nil {
			t.Error("m-new was written by a refused import")
		}
	})

	t.Run("LineErrors", func(t *testing.T) {
		before := rowCount(t, b)
		csv := "memo_id,title,when,timeout\n" + // line 1
			"m-e2,ok,every 1h,\n" + // 2
			"m-e3,typo,dayly 8:00,\n" + // 3: schedule typo
			"m-e4,ok,every 2h,\n" + // 4
			"m-e5,ok,every 3h,\n" + // 5
			"m-e6,ok,every 4h,\n" + // 6
			"m-e7,bad,every 5h,soon\n" + // 7: timeout not a number
			"m-e8,ok,every 6h,\n" // 8
		got := apitest.Want[importAnswer](t, b.Do(t, http.MethodPost, importPath, csv), http.StatusBadRequest)
		if len(got.Lines) != 2 || got.Lines[0].Line != 3 || got.Lines[0].Field != "when" ||
			!strings.Contains(got.Lines[0].Error, "dayly") ||
			got.Lines[1].Line != 7 || got.Lines[1].Field != "timeout" {
			t.Errorf("answer = %+v, want lines 3 (when) and 7 (timeout)", got)
		}
		// The page shows "line 3 (when): <error>": the error does not
		// repeat the field.
		for _, l := range got.Lines {
			if strings.HasPrefix(l.Error, l.Field+":") {
				t.Errorf("line %d: error %q repeats its field %q", l.Line, l.Error, l.Field)
			}
		}
		if !strings.Contains(got.Error, "nothing was imported") {
			t.Errorf("error = %q", got.Error)
		}
		if n := rowCount(t, b); n != before {
			t.Errorf("rows = %d after a refused import, want %d", n, before)
		}
		// Duplicate ids in one file and a wrong number of cells.
		got = apitest.Want[importAnswer](t, b.Do(t, http.MethodPost, importPath,
			"memo_id,when\nm-d,every 1h\nm-d,every 2h\nm-x,every 1h,extra\n"), http.StatusBadRequest)
		if len(got.Lines) != 2 || got.Lines[0].Line != 3 || !strings.Contains(got.Lines[0].Error, "line 2") ||
			got.Lines[1].Line != 4 || !strings.Contains(got.Lines[1].Error, "number of fields") {
			t.Errorf("answer = %+v", got)
		}
	})

	t.Run("BadHeader", func(t *testing.T) {
		for _, tc := range []struct{ csv, part string }{
			{"memo_id,,when\nm,x,every 1h\n", "no field name"},
			{"memo_id,when,when\nm,every 1h,every 2h\n", "twice"},
			{"memo_id,is_fetched,when\nm,1,every 1h\n", "reserved"},
			{"memo id,when\nm,every 1h\n", "letters, digits"},
			{"", "empty"},
			{"memo_id,when\n", "no rows"},
			{"memo_id,content,when\nm1,\xb2\xe2\xca\xd4,every 1h\n", "save the file as \"CSV UTF-8\""}, // GBK
			{"\xe6\n", "not UTF-8"},
		} {
			got := apitest.Want[importAnswer](t, b.Do(t, http.MethodPost, importPath, tc.csv), http.StatusBadRequest)
			if len(got.Lines) == 0 || !strings.Contains(got.Lines[0].Error+got.Error, tc.part) {
				t.Errorf("%q: answer = %+v, want %q", tc.csv, got, tc.part)
			}
		}
	})

	t.Run("BrokenQuotes", func(t *testing.T) {
		before := rowCount(t, b)
		for _, tc := range []struct {
			name, csv string
			line      int
			field     string
			part      string
		}{
			{"BareQuote", "memo_id,title,when\nm-q1,ok,every 1h\nm-q2,say \"hi,every 1h\n", 3, "title", "does not start with one"},
			{"UnclosedQuote", "memo_id,title,when\nm-q1,ok,every 1h\nm-q2,\"open,every 1h\n", 3, "title", "not closed, or text follows"},
			{"TextAfterQuote", "memo_id,title,when\nm-q3,\"a\"b,every 1h\n", 2, "title", "not closed, or text follows"},
			{"QuoteInHeader", "memo_id,ti\"tle,when\nm,x,every 1h\n", 1, "", "does not start with one"},
			{"FirstLineBare", "memo_id,when\n\"m\"x,every 1h\n", 2, "memo_id", "not closed, or text follows"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				got := apitest.Want[importAnswer](t, b.Do(t, http.MethodPost, importPath, tc.csv), http.StatusBadRequest)
				if len(got.Lines) != 1 || got.Lines[0].Line != tc.line || got.Lines[0].Field != tc.field ||
					!strings.Contains(got.Lines[0].Error, tc.part) {
					t.Errorf("answer = %+v, want line %d, field %q, saying %q", got, tc.line, tc.field, tc.part)
				}
			})
		}
		if n := rowCount(t, b); n != before {
			t.Errorf("rows = %d after refused imports, want %d", n, before)
		}
	})

	t.Run("Oversize", func(t *testing.T) {
		before := rowCount(t, b)
		big := "title,when\n" + strings.Repeat(strings.Repeat("x", 1000)+",every 1h\n", 4300)
		apitest.WantError(t, b.Do(t, http.MethodPost, importPath, big), http.StatusRequestEntityTooLarge, "body", "MiB")
		var sb strings.Builder
		sb.WriteString("title,when\n")
		for i := range 10_001 {
			fmt.Fprintf(&sb, "t%d,every 1h\n", i)
		}
		got := apitest.Want[importAnswer](t, b.Do(t, http.MethodPost, importPath, sb.String()), http.StatusRequestEntityTooLarge)
		if !strings.Contains(got.Error, "10000 lines") {
			t.Errorf("answer = %+v", got)
		}
		if n := rowCount(t, b); n != before {
			t.Errorf("rows = %d after refused imports, want %d", n, before)
		}
		apitest.WantError(t, b.Do(t, http.MethodPost, "/api/v1/scenarios/nope/import", "a\n1\n"), http.StatusNotFound, "", "unknown scenario")
	})
}
