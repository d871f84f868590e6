package server

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// apiError is an error answer.
type apiError struct {
	Error string `json:"error"`
	Field string `json:"field"`
	Lines []struct {
		Line  int    `json:"line"`
		Field string `json:"field"`
		Error string `json:"error"`
	} `json:"lines"`
	Rows []struct {
		Field string `json:"field"`
		Error string `json:"error"`
	} `json:"rows"`
}

// TestTargetReferences: every door that names targets refuses an unknown
// one (400 naming the field and the id): a row's targets and alert on
// create, PATCH, batch and CSV import, a flow step's targets on create and
// PUT. A target that rows or flows name cannot be deleted (409 naming
// them and how many); once nothing names it, it can.
func TestTargetReferences(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	const rows = "/api/v1/scenarios/memos/rows"
	wantRefused := func(what string, code int, e apiError, field, id string) {
		t.Helper()
		if code != http.StatusBadRequest || e.Field != field || !strings.Contains(e.Error, `"`+id+`"`) {
			t.Errorf("%s: %d %+v, want 400 naming field %s and %q", what, code, e, field, id)
		}
	}
	var e apiError
	code := b.call(t, "POST", rows, map[string]any{"memo_id": "r0", "content": "x", "when": "daily 08:00", "targets": "ghost"}, &e)
	wantRefused("create a row naming an unknown target", code, e, "targets", "ghost")
	e = apiError{}
	code = b.call(t, "POST", rows, map[string]any{"memo_id": "r0", "content": "x", "when": "daily 08:00", "alert": "pager"}, &e)
	wantRefused("create a row naming an unknown alert target", code, e, "alert", "pager")
	if code := b.call(t, "GET", rows+"/r0", nil, nil); code != http.StatusNotFound {
		t.Errorf("a refused row was stored: GET %d", code)
	}

	if code := b.call(t, "POST", "/api/v1/targets", map[string]any{"id": "mail", "kind": "email", "state": "running"}, nil); code != http.StatusCreated {
		t.Fatalf("create target mail: %d", code)
	}
	if code := b.call(t, "POST", rows, map[string]any{"memo_id": "r1", "content": "x", "when": "daily 08:00",
		"targets": "mail", "to": "a@example.com"}, nil); code != http.StatusCreated {
		t.Fatalf("create a row naming mail: %d", code)
	}
	e = apiError{}
	code = b.call(t, "PATCH", rows+"/r1", map[string]any{"targets": "mail, ghost"}, &e)
	wantRefused("PATCH a row to an unknown target", code, e, "targets", "ghost")
	e = apiError{}
	code = b.call(t, "POST", rows+"/batch", map[string]any{"rows": []any{map[string]any{"id": "r1", "fields": map[string]any{"alert": "ghost"}}}}, &e)
	if code != http.StatusBadRequest || len(e.Rows) != 1 || e.Rows[0].Field != "alert" || !strings.Contains(e.Rows[0].Error, `"ghost"`) {
		t.Errorf("batch naming an unknown alert target: %d %+v, want 400 naming alert and ghost", code, e)
	}

	req, _ := http.NewRequest("POST", b.base+"/api/v1/scenarios/memos/import",
		strings.NewReader("memo_id,content,when,targets\nr2,x,daily 08:00,mail\nr3,x,daily 08:00,ghost\n"))
	req.Header.Set("Content-Type", "text/csv")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), `"line":3,"field":"targets"`) ||
		!strings.Contains(string(body), `ghost`) {
		t.Errorf("import naming an unknown target: %d %s, want 400 listing line 3, field targets", resp.StatusCode, body)
	}
	if code := b.call(t, "GET", rows+"/r2", nil, nil); code != http.StatusNotFound {
		t.Errorf("a refused import stored its good line: GET r2 %d", code)
	}

	flow := func(target string) map[string]any {
		return map[string]any{"id": "f1", "start": "a", "steps": []any{map[string]any{"id": "a", "targets": []string{"mail", target},
			"params": map[string]string{"to": "a@example.com"}}}}
	}
	e = apiError{}
	code = b.call(t, "POST", "/api/v1/flows", flow("ghost"), &e)
	wantRefused("create a flow naming an unknown target", code, e, "steps[0].targets[1]", "ghost")
	if code := b.call(t, "POST", "/api/v1/flows", flow("mail"), nil); code != http.StatusCreated {
		t.Fatalf("create flow f1: %d", code)
	}
	e = apiError{}
	code = b.call(t, "PUT", "/api/v1/flows/f1", flow("ghost"), &e)
	wantRefused("PUT a flow naming an unknown target", code, e, "steps[0].targets[1]", "ghost")

	// mail is named by row r1 (once its task is synced) and flow f1.
	eventually(t, "task r1 to be synced", func() bool { return b.call(t, "GET", "/api/v1/tasks/r1", nil, nil) == http.StatusOK })
	e = apiError{}
	if code := b.call(t, "DELETE", "/api/v1/targets/mail", nil, &e); code != http.StatusConflict ||
		!strings.Contains(e.Error, `1 row(s) ("r1")`) || !strings.Contains(e.Error, `1 flow(s) ("f1")`) {
		t.Errorf("DELETE a target in use: %d %+v, want 409 naming row r1 and flow f1", code, e)
	}
	if code := b.call(t, "DELETE", "/api/v1/flows/f1", nil, nil); code != http.StatusNoContent {
		t.Fatalf("DELETE flow f1: %d", code)
	}
	if code := b.call(t, "DELETE", rows+"/r1", nil, nil); code != http.StatusNoContent {
		t.Fatalf("DELETE row r1: %d", code)
	}
	if code := b.call(t, "DELETE", "/api/v1/targets/mail", nil, nil); code != http.StatusNoContent {
		t.Errorf("DELETE a target nothing names: %d, want 204", code)
	}
}
