package server

import (
	"net/http"
	"slices"
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
