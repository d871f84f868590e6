package webtable_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"cronsheet/internal/apitest"
	"cronsheet/internal/apitest/fullapi"
	"cronsheet/task"
)

// page is the answer of GET .../rows.
type page struct {
	Rows      []task.Row `json:"rows"`
	NextAfter string     `json:"next_after"`
}

func TestRowLifecycle(t *testing.T) {
	t.Parallel()
	b := fullapi.Setup(t)

	// Create: the id is generated, every field is kept, unknown ones too.
	rec := b.Do(t, http.MethodPost, fullapi.RowsPath,
		`{"title":"standup","content":"daily standup","when":"daily 09:00","color":"red","count":42}`)
	row := apitest.Want[task.Row](t, rec, http.StatusCreated)
	if !strings.HasPrefix(row.ID, "m") || len(row.ID) != 17 {
		t.Errorf("generated id = %q, want m + 16 characters", row.ID)
	}
	if row.Fields["memo_id"] != row.ID || row.Fields["color"] != "red" || row.Fields["title"] != "standup" {
		t.Errorf("fields = %v, want the posted ones plus memo_id", row.Fields)
	}
	if row.Scenario != "memos" || row.Version != 1 || row.IsFetched != 0 || row.IsActive != 1 {
		t.Errorf("row = %+v, want scenario memos, version 1, is_fetched 0, is_active 1", row)
	}
	if loc := rec.Header().Get("Location"); loc != fullapi.RowsPath+"/"+row.ID {
		t.Errorf("Location = %q", loc)
	}
	if etag := rec.Header().Get("ETag"); etag != `"1"` {
		t.Errorf("ETag = %q, want \"1\"", etag)
	}
	if n := b.Wakes.Load(); n != 1 {
		t.Errorf("wakes after create = %d, want 1", n)
	}
	rowPath := fullapi.RowsPath + "/" + row.ID

	t.Run("CreateInactiveWithID", func(t *testing.T) {
		rec := b.Do(t, http.MethodPost, fullapi.RowsPath, `{"memo_id":"m-off","content":"x","when":"every 1h","active":false}`)
		got := apitest.Want[task.Row](t, rec, http.StatusCreated)
		if got.ID != "m-off" || got.IsActive != 0 {
			t.Errorf("row = %+v, want id m-off, is_active 0", got)
		}
		rec = b.Do(t, http.MethodPost, fullapi.RowsPath, `{"memo_id":"m-off","content":"again"}`)
		apitest.WantError(t, rec, http.StatusConflict, "", `row "m-off" already exists`)
	})

	t.Run("Get", func(t *testing.T) {
		got := apitest.Want[task.Row](t, b.Do(t, http.MethodGet, rowPath, ""), http.StatusOK)
		if got.ID != row.ID || got.Fields["content"] != "daily standup" {
			t.Errorf("got %+v", got)
		}
		if !strings.Contains(b.Do(t, http.MethodGet, rowPath, "").Body.String(), `"count":42`) {
			t.Error("number field not kept as a number")
		}
	})

	t.Run("PatchMergesAndRemoves", func(t *testing.T) {
		wakes := b.Wakes.Load()
		rec := b.Do(t, http.MethodPatch, rowPath, `{"title":"standup!","color":null,"room":"B2"}`, "If-Match", `"1"`)
		got := apitest.Want[task.Row](t, rec, http.StatusOK)
		if got.Version != 2 || got.Fields["title"] != "standup!" || got.Fields["room"] != "B2" ||
			got.Fields["content"] != "daily standup" || got.Fields["memo_id"] != row.ID {
			t.Errorf("patched row = %+v", got)
		}
		if _, ok := got.Fields["color"]; ok {
			t.Error("color still present after null")
		}
		if b.Wakes.Load() != wakes+1 {
			t.Error("patch did not wake the patrols")
		}
	})

	t.Run("PatchStaleVersion", func(t *testing.T) {
		rec := b.Do(t, http.MethodPatch, rowPath, `{"title":"lost"}`, "If-Match", "1")
		apitest.WantError(t, rec, http.StatusConflict, "",
			"changed since you loaded it (version 2 now, you sent 1); reload and try again")
		apitest.WantCode(t, rec, task.CodeVersionConflict)
		rec = b.Do(t, http.MethodPatch, rowPath, `{"title":"lost","_version":1}`)
		apitest.WantError(t, rec, http.StatusConflict, "", "reload and try again")
		apitest.WantCode(t, rec, task.CodeVersionConflict)
		rec = b.Do(t, http.MethodPatch, rowPath, `{"title":"kept","_version":2}`)
		got := apitest.Want[task.Row](t, rec, http.StatusOK)
		if got.Version != 3 || got.Fields["title"] != "kept" {
			t.Errorf("row = %+v, want version 3 titled kept", got)
		}
		if _, ok := got.Fields["_version"]; ok {
			t.Error("_version was stored as a field")
		}
	})

	t.Run("PatchRefused", func(t *testing.T) {
		apitest.WantError(t, b.Do(t, http.MethodPatch, rowPath, `{"memo_id":"other"}`),
			http.StatusBadRequest, "memo_id", "cannot change")
		apitest.WantError(t, b.Do(t, http.MethodPatch, rowPath, `{"memo_id":null}`),
			http.StatusBadRequest, "memo_id", "cannot change")
		apitest.WantError(t, b.Do(t, http.MethodPatch, rowPath, `{"timeout":"soon"}`),
			http.StatusBadRequest, "timeout", "whole number")
		apitest.WantError(t, b.Do(t, http.MethodPatch, rowPath, `{}`, "If-Match", "abc"),
			http.StatusBadRequest, "If-Match", "positive integer")
		apitest.WantError(t, b.Do(t, http.MethodPatch, rowPath, `{"_version":3}`, "If-Match", "2"),
			http.StatusBadRequest, "_version", "If-Match")
		apitest.WantError(t, b.Do(t, http.MethodPatch, fullapi.RowsPath+"/nope", `{"title":"x"}`),
			http.StatusNotFound, "", `row "nope" not found`)
		// Repeating the id unchanged is fine.
		got := apitest.Want[task.Row](t, b.Do(t, http.MethodPatch, rowPath, fmt.Sprintf(`{"memo_id":%q}`, row.ID)), http.StatusOK)
		if got.Version != 4 {
			t.Errorf("version = %d, want 4", got.Version)
		}
	})

	t.Run("Delete", func(t *testing.T) {
		wakes := b.Wakes.Load()
		apitest.Want[any](t, b.Do(t, http.MethodDelete, rowPath, ""), http.StatusNoContent)
		if b.Wakes.Load() != wakes+1 {
			t.Error("delete did not wake the patrols")
		}
		apitest.WantError(t, b.Do(t, http.MethodGet, rowPath, ""), http.StatusNotFound, "", "not found")
		apitest.WantError(t, b.Do(t, http.MethodDelete, rowPath, ""), http.StatusNotFound, "", "not found")
	})
}

func TestListRows(t *testing.T) {
	t.Parallel()
	b := fullapi.Setup(t)
	for i := 1; i <= 5; i++ {
		apitest.Want[task.Row](t, b.Do(t, http.MethodPost, fullapi.RowsPath, fmt.Sprintf(`{"memo_id":"r%d","content":"c"}`, i)),
			http.StatusCreated)
	}

	var ids []string
	after := ""
	for range 4 {
		p := apitest.Want[page](t, b.Do(t, http.MethodGet, fullapi.RowsPath+"?limit=2&after="+after, ""), http.StatusOK)
		for _, r := range p.Rows {
			ids = append(ids, r.ID)
		}
		if after = p.NextAfter; after == "" {
			break
		}
	}
	if got := strings.Join(ids, ","); got != "r1,r2,r3,r4,r5" {
		t.Errorf("paged ids = %s, want r1..r5", got)
	}

	all := apitest.Want[page](t, b.Do(t, http.MethodGet, fullapi.RowsPath, ""), http.StatusOK)
	if len(all.Rows) != 5 || all.NextAfter != "" {
		t.Errorf("default page: %d rows, next_after %q", len(all.Rows), all.NextAfter)
	}
	empty := b.Do(t, http.MethodGet, fullapi.RowsPath+"?after=r5", "")
	if apitest.Want[page](t, empty, http.StatusOK); !strings.Contains(empty.Body.String(), `"rows":[]`) {
		t.Errorf("empty page = %s, want rows []", empty.Body)
	}
	for _, q := range []string{"limit=0", "limit=501", "limit=x"} {
		apitest.WantError(t, b.Do(t, http.MethodGet, fullapi.RowsPath+"?"+q, ""), http.StatusBadRequest, "limit", "from 1 to 500")
	}
	apitest.WantError(t, b.Do(t, http.MethodGet, fullapi.RowsPath+"?after="+strings.Repeat("a", 600), ""),
		http.StatusBadRequest, "after", "longer than")
}

func TestRowInputErrors(t *testing.T) {
	t.Parallel()
	b := fullapi.Setup(t)
	manyFields := make([]string, 0, 70)
	for i := range 70 {
		manyFields = append(manyFields, fmt.Sprintf(`"f%d":1`, i))
	}
	tests := []struct {
		name, method, path, body string
		status                   int
		field, msg               string
	}{
		{"UnknownScenarioCreate", http.MethodPost, "/api/v1/scenarios/nope/rows", `{}`, 404, "", `unknown scenario "nope"`},
		{"UnknownScenarioList", http.MethodGet, "/api/v1/scenarios/nope/rows", "", 404, "", `unknown scenario "nope"`},
		{"UnknownScenarioGet", http.MethodGet, "/api/v1/scenarios/nope/rows/x", "", 404, "", `unknown scenario "nope"`},
		{"UnknownScenarioPatch", http.MethodPatch, "/api/v1/scenarios/nope/rows/x", `{}`, 404, "", `unknown scenario "nope"`},
		{"UnknownScenarioDelete", http.MethodDelete, "/api/v1/scenarios/nope/rows/x", "", 404, "", `unknown scenario "nope"`},
		{"BadJSON", http.MethodPost, fullapi.RowsPath, `{"title":`, 400, "body", "body: invalid JSON: "},
		{"BadJSONPatch", http.MethodPatch, fullapi.RowsPath + "/x", `{title}`, 400, "body", "body: invalid JSON: "},
		{"EmptyBody", http.MethodPost, fullapi.RowsPath, "", 400, "body", "empty body"},
		{"TrailingData", http.MethodPost, fullapi.RowsPath, `{} {}`, 400, "body", "after the JSON value"},
		{"Array", http.MethodPost, fullapi.RowsPath, `[1,2]`, 400, "body", "must be a JSON object"},
		{"String", http.MethodPost, fullapi.RowsPath, `"hi"`, 400, "body", "must be a JSON object"},
		{"Null", http.MethodPost, fullapi.RowsPath, `null`, 400, "body", "must be a JSON object"},
		{"Oversize", http.MethodPost, fullapi.RowsPath, `{"content":"` + strings.Repeat("x", 300<<10) + `"}`, 413, "body", "larger than 256 KiB"},
		{"TooManyFields", http.MethodPost, fullapi.RowsPath, "{" + strings.Join(manyFields, ",") + "}", 400, "fields", "at most 64"},
		{"TooLongTitle", http.MethodPost, fullapi.RowsPath, `{"title":"` + strings.Repeat("t", 5000) + `"}`, 400, "title", "at most 4096"},
		{"NestedValue", http.MethodPost, fullapi.RowsPath, `{"tags":{"a":1}}`, 400, "tags", "must be text"},
		{"ReservedName", http.MethodPost, fullapi.RowsPath, `{"is_active":1}`, 400, "is_active", "reserved"},
		{"BadID", http.MethodPost, fullapi.RowsPath, `{"memo_id":"a/b"}`, 400, "memo_id", "[A-Za-z0-9_.-]"},
		{"BadActive", http.MethodPost, fullapi.RowsPath, `{"active":"maybe"}`, 400, "active", "1 or 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			apitest.WantError(t, b.Do(t, tt.method, tt.path, tt.body), tt.status, tt.field, tt.msg)
		})
	}
	t.Cleanup(func() {
		if n := b.Wakes.Load(); n != 0 {
			t.Errorf("failed edits woke the patrols %d times", n)
		}
	})
}
