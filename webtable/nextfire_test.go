package webtable_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"cronsheet/internal/apitest"
	"cronsheet/internal/apitest/fullapi"
	"cronsheet/store"
	"cronsheet/task"
	"cronsheet/webtable"
)

// TestSwitchedOffRowShowsNoNextFire: a row switched off shows no next
// fire in the rows API, the table and its CSV export, though its task's
// stored next fire has not been cleared yet (no node disarmed it): right
// after the switch-off and after the sync patrol has seen it.
func TestSwitchedOffRowShowsNoNextFire(t *testing.T) {
	t.Parallel()
	b := fullapi.Setup(t)
	table := webtable.NewTable(webtable.TableDeps{Store: b.Store, Scenarios: b.Scenarios})
	if err := table.Prepare(context.Background()); err != nil {
		t.Fatalf("prepare the table: %v", err)
	}
	table.Register(b.Engine)
	ctx := context.Background()
	b.AddTask(t, "nf", 1)
	next := apitest.FixedNow.Add(time.Hour)
	if err := b.Store.SetTaskStatus(ctx, store.TaskStatusParams{TaskID: "nf", NextFire: next, SetNextFire: true}); err != nil {
		t.Fatal(err)
	}
	path := fullapi.RowsPath + "/nf"

	// shown reports the next fire each answer gives the row.
	shown := func(t *testing.T) map[string]string {
		t.Helper()
		out := map[string]string{}
		row := apitest.Want[task.Row](t, b.Do(t, http.MethodGet, path, ""), http.StatusOK)
		out["GET row"] = timeOrEmpty(row.NextFire)
		list := apitest.Want[page](t, b.Do(t, http.MethodGet, fullapi.RowsPath, ""), http.StatusOK)
		for _, r := range list.Rows {
			if r.ID == "nf" {
				out["GET rows"] = timeOrEmpty(r.NextFire)
			}
		}
		var tbl struct {
			Data []struct {
				ID       string    `json:"id"`
				NextFire time.Time `json:"next_fire"`
			} `json:"data"`
		}
		rec := b.Do(t, http.MethodGet, "/api/v1/scenarios/memos/table?draw=1", "")
		if err := json.Unmarshal(rec.Body.Bytes(), &tbl); err != nil || rec.Code != http.StatusOK {
			t.Fatalf("table: %d %s", rec.Code, rec.Body)
		}
		for _, r := range tbl.Data {
			if r.ID == "nf" {
				out["table"] = timeOrEmpty(r.NextFire)
			}
		}
		q := url.Values{"columns[0][data]": {"fields.memo_id"}, "columns[1][data]": {"next_fire"}}
		rec = b.Do(t, http.MethodGet, "/api/v1/scenarios/memos/table.csv?"+q.Encode(), "")
		recs, err := csv.NewReader(strings.NewReader(rec.Body.String())).ReadAll()
		if err != nil || len(recs) == 0 {
			t.Fatalf("csv export: %v\n%s", err, rec.Body)
		}
		nfCol := slices.Index(recs[0], "next_fire")
		for _, r := range recs[1:] {
			if r[0] == "nf" {
				out["csv"] = r[nfCol]
			}
		}
		return out
	}
	for door, got := range shown(t) {
		if got == "" {
			t.Errorf("active row: %s shows no next fire, want %s", door, next)
		}
	}

	off := apitest.Want[task.Row](t, b.Do(t, http.MethodPatch, path, `{"active":false}`), http.StatusOK)
	if !off.NextFire.IsZero() {
		t.Errorf("PATCH answer shows next_fire %s for a switched-off row", off.NextFire)
	}
	check := func(when string) {
		got := shown(t)
		if len(got) != 4 {
			t.Errorf("%s: answers %v, want the row in all four", when, got)
		}
		for door, nf := range got {
			if nf != "" {
				t.Errorf("%s: %s shows next_fire %s for a switched-off row", when, door, nf)
			}
		}
	}
	check("before the sync")

	// The sync patrol's verdict: the row inactive, its task disabled; the
	// task's next fire stays stored until a node disarms it.
	cur := apitest.Want[task.Row](t, b.Do(t, http.MethodGet, path, ""), http.StatusOK)
	tk, err := b.Scenarios["memos"].ToTask(&cur, apitest.FixedNow)
	if err != nil {
		t.Fatal(err)
	}
	tk.IsEnable = 0
	if err := b.Store.ApplySync(ctx, store.ApplySyncParams{Scenario: "memos", RowID: "nf", RowVersion: cur.Version,
		Task: tk, IsActive: task.RowInactive, Now: apitest.FixedNow}); err != nil {
		t.Fatalf("ApplySync: %v", err)
	}
	check("after the sync")
}

func timeOrEmpty(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
