package server

import (
	"net/http"
	"slices"
	"strings"
	"testing"
)

// TestJobsListEveryState: GET /api/v1/jobs lists pending and blocked jobs
// (which have no run yet) like dead letters, with the same method and name
// filters and paging.
func TestJobsListEveryState(t *testing.T) {
	b, h := setupJobs(t)
	submit := func(method, path string) string {
		t.Helper()
		var v jobView
		body := map[string]any{"method": method, "delay": 600, "name": h.srv.URL + path}
		if code := b.call(t, "POST", "/api/v1/jobs", body, &v); code != http.StatusCreated {
			t.Fatalf("submit: status %d", code)
		}
		return v.ID
	}
	p1, p2, g1 := submit("POST", "/alpha"), submit("POST", "/beta"), submit("GET", "/alpha")
	blk := submit("POST", "/blocked")
	if code := b.call(t, "POST", "/api/v1/jobs/"+blk+"/block", nil, nil); code != http.StatusOK {
		t.Fatalf("block: status %d", code)
	}
	type page struct {
		Jobs []jobView `json:"jobs"`
		Next string    `json:"next"`
	}
	list := func(query string) ([]string, string) {
		t.Helper()
		var p page
		if code := b.call(t, "GET", "/api/v1/jobs?"+query, nil, &p); code != http.StatusOK {
			t.Fatalf("list %s: status %d", query, code)
		}
		var ids []string
		for _, j := range p.Jobs {
			ids = append(ids, j.ID)
		}
		return ids, p.Next
	}
	sameSet := func(what string, got, want []string) {
		t.Helper()
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%s = %v, want %v", what, got, want)
		}
	}
	got, _ := list("state=pending")
	sameSet("pending", got, []string{p1, p2, g1})
	got, _ = list("state=blocked")
	sameSet("blocked", got, []string{blk})
	got, _ = list("state=pending&method=get")
	sameSet("pending GET", got, []string{g1})
	got, _ = list("state=pending&name=alpha")
	sameSet("pending named alpha", got, []string{p1, g1})

	// Paging: one per page, every pending job once.
	var all []string
	cursor := ""
	for range 10 {
		ids, next := list("state=pending&limit=1&cursor=" + cursor)
		all = append(all, ids...)
		if next == "" {
			break
		}
		cursor = next
	}
	sameSet("pending, paged", all, []string{p1, p2, g1})

	var e struct {
		Field string `json:"field"`
	}
	if code := b.call(t, "GET", "/api/v1/jobs?state=sleeping", nil, &e); code != http.StatusBadRequest || e.Field != "state" {
		t.Errorf("unknown state: status %d field %q, want 400 on state", code, e.Field)
	}
}

// TestJobsListSearch: q narrows GET /api/v1/jobs to the jobs whose name
// or key holds it, in any case; a q past the length bound is a 400 on q.
func TestJobsListSearch(t *testing.T) {
	b, h := setupJobs(t)
	submit := func(path, key string) string {
		t.Helper()
		var v jobView
		body := map[string]any{"method": "POST", "delay": 600, "name": h.srv.URL + path}
		if key != "" {
			body["key"] = key
		}
		if code := b.call(t, "POST", "/api/v1/jobs", body, &v); code != http.StatusCreated {
			t.Fatalf("submit: status %d", code)
		}
		return v.ID
	}
	report, invoice, keyed := submit("/Monthly-Report", ""), submit("/invoice", ""), submit("/x", "report-2026")
	var p struct {
		Jobs []jobView `json:"jobs"`
	}
	for q, want := range map[string][]string{
		"report":  {report, keyed},
		"MONTHLY": {report},
		"invoice": {invoice},
		"nothing": nil,
		"":        {report, invoice, keyed},
	} {
		p.Jobs = nil
		if code := b.call(t, "GET", "/api/v1/jobs?state=pending&q="+q, nil, &p); code != http.StatusOK {
			t.Fatalf("q=%s: status %d", q, code)
		}
		var got []string
		for _, j := range p.Jobs {
			got = append(got, j.ID)
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("q=%s: jobs %v, want %v", q, got, want)
		}
	}
	var e struct {
		Field string `json:"field"`
	}
	long := strings.Repeat("x", 513)
	if code := b.call(t, "GET", "/api/v1/jobs?state=pending&q="+long, nil, &e); code != http.StatusBadRequest || e.Field != "q" {
		t.Errorf("long q: status %d field %q, want 400 on q", code, e.Field)
	}
}
