package server

import (
	"encoding/csv"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// TestProductOnTheTestDriver checks the product end to end, on whichever
// driver the tests run on (CRONSHEET_TEST_DRIVER): the table pages, sorts,
// searches Chinese terms and exports; /healthz is ok; the status names the
// driver and the server's version.
func TestProductOnTheTestDriver(t *testing.T) {
	b := setup(t, nil)
	for _, title := range []string{"每天早上提醒我喝水", "周末提醒我浇花", "water the plants", "Buy zebra food"} {
		code := b.call(t, "POST", "/api/v1/scenarios/memos/rows", map[string]any{
			"title": title, "content": "c", "when": "daily 08:00", "channel": "outbox",
		}, nil)
		if code != http.StatusCreated {
			t.Fatalf("create row %q: status %d", title, code)
		}
	}
	type answer struct {
		RecordsTotal    int64 `json:"recordsTotal"`
		RecordsFiltered int64 `json:"recordsFiltered"`
		Data            []struct {
			Fields map[string]any `json:"fields"`
		} `json:"data"`
	}
	table := func(q url.Values) (answer, []string) {
		t.Helper()
		var a answer
		if code := b.call(t, "GET", "/api/v1/scenarios/memos/table?"+q.Encode(), nil, &a); code != http.StatusOK {
			t.Fatalf("table %v: status %d", q, code)
		}
		var titles []string
		for _, r := range a.Data {
			titles = append(titles, r.Fields["title"].(string))
		}
		return a, titles
	}
	// Sorted by title (columns[1] is the title), descending.
	q := url.Values{"draw": {"1"}, "start": {"0"}, "length": {"10"},
		"columns[0][data]": {"fields.memo_id"}, "columns[1][data]": {"fields.title"},
		"order[0][column]": {"1"}, "order[0][dir]": {"desc"}}
	a, titles := table(q)
	want := []string{"每天早上提醒我喝水", "周末提醒我浇花", "water the plants", "Buy zebra food"}
	if a.RecordsTotal != 4 || a.RecordsFiltered != 4 || !slices.Equal(titles, want) {
		t.Errorf("by title desc: %d/%d %q, want 4/4 %q", a.RecordsFiltered, a.RecordsTotal, titles, want)
	}
	q.Set("search[value]", "提醒我")
	a, titles = table(q)
	if a.RecordsTotal != 4 || a.RecordsFiltered != 2 || !slices.Equal(titles, want[:2]) {
		t.Errorf("search 提醒我: %d/%d %q, want 2/4 %q", a.RecordsFiltered, a.RecordsTotal, titles, want[:2])
	}

	resp, err := http.Get(b.base + "/api/v1/scenarios/memos/table.csv?search[value]=" + url.QueryEscape("ZEBRA"))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(resp.Body).ReadAll()
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || len(recs) != 2 || !slices.Contains(recs[1], "Buy zebra food") {
		t.Errorf("CSV export of ZEBRA: %d %q %v, want a header and the zebra row", resp.StatusCode, recs, err)
	}

	resp, err = http.Get(b.base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "ok") {
		t.Errorf("/healthz = %d %s, want 200 ok", resp.StatusCode, body)
	}
	var st struct {
		Store struct {
			Driver  string `json:"driver"`
			Version string `json:"version"`
			OK      bool   `json:"ok"`
		} `json:"store"`
	}
	if code := b.call(t, "GET", "/api/v1/status", nil, &st); code != http.StatusOK || !st.Store.OK ||
		st.Store.Driver != testDriver() || st.Store.Version == "" {
		t.Errorf("status store = %d %+v, want ok, driver %s and a version", code, st.Store, testDriver())
	}
}
