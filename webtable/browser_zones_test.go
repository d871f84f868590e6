package webtable_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// wallIn is what the table shows of an instant in a zone: its wall time
// and the zone's short name, with the date unless it is the zone's today.
func wallIn(at time.Time, loc *time.Location, abbr string) string {
	at, now := at.In(loc), time.Now().In(loc)
	s := at.Format("15:04") + " " + abbr
	if at.Format(time.DateOnly) != now.Format(time.DateOnly) {
		s = at.Format(time.DateOnly) + " " + s
	}
	return s
}

// nextDaily is the next 09:00 of loc after now.
func nextDaily(loc *time.Location) time.Time {
	now := time.Now().In(loc)
	at := time.Date(now.Year(), now.Month(), now.Day(), 9, 0, 0, 0, loc)
	if !at.After(now) {
		at = at.AddDate(0, 0, 1)
	}
	return at
}

// TestBrowserTimeZones views the table from Asia/Shanghai (Chromium's
// zone emulation): a row in UTC shows its next fire as a UTC wall time
// named UTC with the viewer's Shanghai time beside it, a far one-shot
// shows its date, and the add-row form starts with the browser's zone, so a
// row added there fires at 09:00 in Shanghai and shows no second time.
func TestBrowserTimeZones(t *testing.T) {
	chromium := needBrowser(t)
	base := startNode(t)
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	postJSON(t, base, "/api/v1/scenarios/memos/rows",
		`{"memo_id":"tz-utc","title":"utc daily","content":"x","when":"daily 09:00","tz":"UTC"}`, http.StatusCreated)
	postJSON(t, base, "/api/v1/scenarios/memos/rows",
		`{"memo_id":"tz-far","title":"utc far","content":"x","when":"at 2031-05-01 09:00","tz":"UTC"}`, http.StatusCreated)
	waitSynced(t, base, "tz-utc", "tz-far")

	ctx := newBrowser(t, chromium)
	console := listenConsole(t, ctx)
	if _, err := chromedp.Call(ctx, emulation.SetTimezoneOverride, emulation.SetTimezoneOverrideParams{TimezoneID: "Asia/Shanghai"}); err != nil {
		t.Fatalf("emulate the zone: %v", err)
	}
	run(t, ctx, "load the table", 30*time.Second,
		chromedp.Navigate(base+"/?poll=300"),
		chromedp.WaitVisible(css(`body[data-ready="1"]`)),
		waitJS(`document.querySelectorAll('#rows tbody tr[id] time[data-zone]').length >= 2`),
	)
	if z := get(t, ctx, "read the browser's zone", chromedp.Evaluate[string](`Intl.DateTimeFormat().resolvedOptions().timeZone`)); z != "Asia/Shanghai" {
		t.Fatalf("the emulated zone is %q", z)
	}
	// next_fire is the 9th column (memo_id, title, content, when, channel,
	// to, active, status, next fire).
	type cell struct {
		Zone  string `json:"zone"`
		Shown string `json:"shown"`
		Local string `json:"local"`
		Rel   string `json:"rel"`
	}
	cellOf := func(id string) cell {
		return get(t, ctx, "read the next fire of "+id, chromedp.Evaluate[cell](fmt.Sprintf(`(() => {
			const td = document.querySelector('#rows tbody tr[id=%q] td:nth-child(9)');
			const tm = td.querySelector("time"), local = td.querySelector(".tz-local"), rel = td.querySelector(".rel");
			return {zone: tm ? tm.dataset.zone : "", shown: tm ? tm.textContent : td.textContent,
				local: local ? local.textContent : "", rel: rel ? rel.textContent : ""};
		})()`, id)))
	}
	daily := nextDaily(time.UTC)
	want := cell{Zone: "UTC", Shown: wallIn(daily, time.UTC, "UTC"), Local: wallIn(daily, shanghai, "GMT+8") + " here"}
	if got := cellOf("tz-utc"); got.Zone != want.Zone || got.Shown != want.Shown || got.Local != want.Local || got.Rel == "" {
		t.Errorf("the UTC row's next fire shows %+v, want %+v and a relative time", got, want)
	}
	far := time.Date(2031, 5, 1, 9, 0, 0, 0, time.UTC)
	want = cell{Zone: "UTC", Shown: "2031-05-01 09:00 UTC", Local: "2031-05-01 17:00 GMT+8 here"}
	if got := cellOf("tz-far"); got.Zone != want.Zone || got.Shown != want.Shown || got.Local != want.Local {
		t.Errorf("the far row's next fire shows %+v, want %+v (%s)", got, want, far)
	}

	// The form's zone is the browser's; a row added there is in it.
	if z := get(t, ctx, "read the form's zone", chromedp.Evaluate[string](
		`document.querySelector('#add-fields input[name="tz"]').value`)); z != "Asia/Shanghai" {
		t.Fatalf("the add-row form's zone starts as %q, want the browser's Asia/Shanghai", z)
	}
	run(t, ctx, "add a row", 20*time.Second,
		chromedp.SendKeys(css(`#add-fields input[name="title"]`), "shanghai daily"),
		chromedp.SendKeys(css(`#add-fields input[name="content"]`), "y"),
		chromedp.SendKeys(css(`#add-fields input[name="when"]`), "daily 09:00"),
		chromedp.Click(css(`#add-button`)),
		waitJS(`cronsheet.table.rows().data().toArray().some(r => r.fields.title === "shanghai daily")`),
	)
	id := get(t, ctx, "read the new row's id", chromedp.Evaluate[string](
		`cronsheet.table.rows().data().toArray().find(r => r.fields.title === "shanghai daily").id`))
	var row struct {
		Fields map[string]any `json:"fields"`
	}
	getDoc(t, base+"/api/v1/scenarios/memos/rows/"+id, &row)
	if row.Fields["tz"] != "Asia/Shanghai" {
		t.Fatalf("the added row's zone is %v, want Asia/Shanghai", row.Fields["tz"])
	}
	waitSynced(t, base, id)
	run(t, ctx, "see the added row's next fire", 20*time.Second,
		waitJS(fmt.Sprintf(`!!document.querySelector('#rows tbody tr[id=%q] td:nth-child(9) time')`, id)))
	want = cell{Zone: "Asia/Shanghai", Shown: wallIn(nextDaily(shanghai), shanghai, "GMT+8")}
	if got := cellOf(id); got.Zone != want.Zone || got.Shown != want.Shown || got.Local != "" {
		t.Errorf("the Shanghai row's next fire shows %+v, want %+v and no second time", got, want)
	}
	// The runs drawer shows a run's instants in its row's zone too.
	postJSON(t, base, "/api/v1/tasks/tz-utc/trigger", `{}`, http.StatusAccepted)
	run(t, ctx, "open the UTC row's runs", 20*time.Second,
		jsClick(`#rows tbody tr[id="tz-utc"] button.runs`),
		waitJS(`document.querySelectorAll("#runs tbody tr td.run-time").length >= 2`),
	)
	slot := get(t, ctx, "read the run's slot", chromedp.Evaluate[[]string](
		`(() => { const td = document.querySelector("#runs tbody tr td.run-time"); return [td.textContent, td.title]; })()`))
	at, err := time.Parse(time.RFC3339Nano, slot[1])
	if err != nil {
		t.Fatalf("the slot's title %q: %v", slot[1], err)
	}
	if want := wallIn(at, time.UTC, "UTC"); slot[0] != want {
		t.Errorf("the run's slot shows %q, want %q", slot[0], want)
	}
	for _, p := range console.take() {
		t.Errorf("%s", p)
	}
}
