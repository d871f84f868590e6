package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// rawCall is testBundle.call for goroutines: it reports a transport error
// as status 0 rather than stopping the test from another goroutine.
func (b *testBundle) rawCall(method, path string, body any) (int, string) {
	raw, _ := json.Marshal(body)
	req, err := http.NewRequest(method, b.base+path, bytes.NewReader(raw))
	if err != nil {
		return 0, err.Error()
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}

// TestTargetDeleteRacesRowCreate: a row created naming target T and a
// delete of T, sent at once, never both succeed (20 pairs): either the
// row is stored and the delete refused (409), or the target is deleted and
// the row refused. A row just created, not synced yet, makes a delete of
// its target 409 too, and a row naming a flow that does not exist is
// refused. Runs on the test driver (CRONSHEET_TEST_DRIVER=mongo: FerretDB).
func TestTargetDeleteRacesRowCreate(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	const rows = "/api/v1/scenarios/memos/rows"
	target := func(id string) {
		t.Helper()
		if code := b.call(t, "POST", "/api/v1/targets", map[string]any{"id": id, "kind": "email", "state": "running"}, nil); code != http.StatusCreated {
			t.Fatalf("create target %s: %d", id, code)
		}
	}
	row := func(id, tg string) map[string]any {
		return map[string]any{"memo_id": id, "content": "x", "when": "daily 08:00", "targets": tg, "to": "a@example.com"}
	}

	// Created, then deleted at once: the row is not synced yet.
	target("fresh")
	if code := b.call(t, "POST", rows, row("fresh-row", "fresh"), nil); code != http.StatusCreated {
		t.Fatalf("create row naming fresh: %d", code)
	}
	var e apiError
	if code := b.call(t, "DELETE", "/api/v1/targets/fresh", nil, &e); code != http.StatusConflict || !strings.Contains(e.Error, `"fresh-row"`) {
		t.Errorf("DELETE a target a row just created names: %d %+v, want 409 naming fresh-row", code, e)
	}

	const pairs = 20
	for i := range pairs {
		target(fmt.Sprintf("t%d", i))
	}
	type outcome struct {
		create, del int
		body        string
	}
	out := make([]outcome, pairs)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range pairs {
		tg := fmt.Sprintf("t%d", i)
		wg.Go(func() {
			<-start
			out[i].create, out[i].body = b.rawCall("POST", rows, row("race-"+tg, tg))
		})
		wg.Go(func() {
			<-start
			out[i].del, _ = b.rawCall("DELETE", "/api/v1/targets/"+tg, nil)
		})
	}
	close(start)
	wg.Wait()
	for i, o := range out {
		tg := fmt.Sprintf("t%d", i)
		stored := b.call(t, "GET", rows+"/race-"+tg, nil, nil) == http.StatusOK
		exists := b.call(t, "GET", "/api/v1/targets/"+tg, nil, nil) == http.StatusOK
		switch {
		case o.create == 0 || o.del == 0:
			t.Errorf("pair %d: a call failed: create %d (%s), delete %d", i, o.create, o.body, o.del)
		case stored && !exists:
			t.Errorf("pair %d: row stored naming deleted target %s (create %d, delete %d)", i, tg, o.create, o.del)
		case o.create == http.StatusCreated && o.del == http.StatusNoContent:
			t.Errorf("pair %d: both the create and the delete of %s succeeded", i, tg)
		case o.create != http.StatusCreated && o.create != http.StatusBadRequest && o.create != http.StatusConflict:
			t.Errorf("pair %d: create answered %d (%s), want 201, 400 or 409", i, o.create, o.body)
		case o.del != http.StatusNoContent && o.del != http.StatusConflict:
			t.Errorf("pair %d: delete answered %d, want 204 or 409", i, o.del)
		}
	}

	e = apiError{}
	code := b.call(t, "POST", rows, row("to-nowhere", "flow:nope"), &e)
	if code != http.StatusBadRequest || e.Field != "targets" || !strings.Contains(e.Error, `"nope"`) {
		t.Errorf("create a row naming flow:nope: %d %+v, want 400 naming targets and nope", code, e)
	}
}

// TestTargetDeleteRacesFlowCreate: a flow created with a step naming
// target T and a delete of T, sent at once, never both succeed (20 pairs).
func TestTargetDeleteRacesFlowCreate(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	const pairs = 20
	for i := range pairs {
		if code := b.call(t, "POST", "/api/v1/targets", map[string]any{"id": fmt.Sprintf("ft%d", i), "kind": "email", "state": "running"}, nil); code != http.StatusCreated {
			t.Fatalf("create target ft%d: %d", i, code)
		}
	}
	create := make([]int, pairs)
	del := make([]int, pairs)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range pairs {
		tg := fmt.Sprintf("ft%d", i)
		wg.Go(func() {
			<-start
			create[i], _ = b.rawCall("POST", "/api/v1/flows", map[string]any{"id": "f-" + tg, "start": "a",
				"steps": []any{map[string]any{"id": "a", "targets": []string{tg}, "params": map[string]string{"to": "a@example.com"}}}})
		})
		wg.Go(func() {
			<-start
			del[i], _ = b.rawCall("DELETE", "/api/v1/targets/"+tg, nil)
		})
	}
	close(start)
	wg.Wait()
	for i := range pairs {
		tg := fmt.Sprintf("ft%d", i)
		stored := b.call(t, "GET", "/api/v1/flows/f-"+tg, nil, nil) == http.StatusOK
		exists := b.call(t, "GET", "/api/v1/targets/"+tg, nil, nil) == http.StatusOK
		if stored && !exists {
			t.Errorf("pair %d: flow stored naming deleted target %s (create %d, delete %d)", i, tg, create[i], del[i])
		}
	}
}
