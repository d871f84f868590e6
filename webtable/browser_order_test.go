package webtable_test

import (
	"encoding/csv"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// waitArmed waits until each row shows a next fire.
func waitArmed(t *testing.T, base string, ids ...string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for _, id := range ids {
		for {
			var row struct {
				NextFire string `json:"next_fire"`
			}
			getDoc(t, base+"/api/v1/scenarios/memos/rows/"+id, &row)
			if row.NextFire != "" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("row %s has no next fire after 20 s", id)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// TestBrowserNextFireOrder: the table opens sorted by next fire, the
// soonest first and the rows that do not fire after them; a row added
// whose place is on another page is turned to and flashed; a row that
// leaves its channel out shows the scenario's default channel, muted and
// titled so, which is not written into the row (the export leaves it out)
// and the cell still edits. In English and 简体中文, without a console
// error.
func TestBrowserNextFireOrder(t *testing.T) {
	chromium := needBrowser(t)
	base := startNode(t)
	for _, body := range []string{ // inserted out of next fire order
		`{"memo_id":"o-i1","title":"idle one","content":"c","when":"every 1h","active":false}`,
		`{"memo_id":"o-c","title":"third","content":"c","when":"at 2031-05-03 09:00"}`,
		`{"memo_id":"o-a","title":"first","content":"c","when":"at 2031-05-01 09:00"}`,
		`{"memo_id":"o-i2","title":"idle two","content":"c","when":"every 1h","active":false}`,
		`{"memo_id":"o-b","title":"second","content":"c","when":"at 2031-05-02 09:00","channel":"email","to":"ops@example.com"}`,
	} {
		postJSON(t, base, "/api/v1/scenarios/memos/rows", body, http.StatusCreated)
	}
	waitSynced(t, base, "o-i1", "o-c", "o-a", "o-i2", "o-b")
	waitArmed(t, base, "o-a", "o-b", "o-c")
	ctx := newBrowser(t, chromium)
	problems := listenTab(t, ctx, true)
	shownIDs := `[...document.querySelectorAll("#rows tbody tr[id]")].map((tr) => tr.id).filter((id) => id.startsWith("o-")).join(",")`
	for _, lang := range []struct {
		code, outbox, email, dflt, at string
	}{
		{"en", "outbox", "email", "default channel", "2031-05-02 12:00"},
		{"zh", "发件箱", "邮件", "默认渠道", "2031-05-02 13:00"},
	} {
		run(t, ctx, "set the language", 20*time.Second,
			chromedp.Navigate(base+"/login"),
			chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`localStorage.setItem("cronsheet.lang", %q)`, lang.code)),
		)
		problems.take()
		run(t, ctx, "load the table ("+lang.code+")", 30*time.Second,
			chromedp.Navigate(base+"/"),
			waitJS(`document.body.dataset.ready === "1"`),
			waitJS(shownIDs+` === "o-a,o-b,o-c,o-i1,o-i2"`),
		)
		cell := func(id string) string { return fmt.Sprintf(`#rows tbody tr[id=%q] td:nth-child(5)`, id) }
		type chanCell struct {
			Text, Title string
			Muted       bool
		}
		read := func(id string) chanCell {
			return get(t, ctx, "read "+id+"'s channel", chromedp.Evaluate[chanCell](fmt.Sprintf(
				`(td => ({text: td.textContent, title: (td.querySelector(".ch-default") || {}).title || "", muted: !!td.querySelector(".ch-default")}))(document.querySelector(%q))`, cell(id))))
		}
		if got := read("o-a"); got != (chanCell{lang.outbox, lang.dflt, true}) {
			t.Errorf("%s: the channel cell of a row without one = %+v, want the default %q muted, titled %q", lang.code, got, lang.outbox, lang.dflt)
		}
		if got := read("o-b"); got != (chanCell{Text: lang.email}) {
			t.Errorf("%s: the channel cell of a row with email = %+v, want %q, not muted", lang.code, got, lang.email)
		}
		title := "order " + lang.code
		run(t, ctx, "add a row whose place is on another page ("+lang.code+")", 30*time.Second,
			chromedp.Evaluate[chromedp.Void](`void cronsheet.table.page.len(2).draw(false)`),
			waitJS(`cronsheet.table.page.info().length === 2 && `+shownIDs+` === "o-a,o-b"`),
			chromedp.SendKeys(css(`#add-fields input[name="title"]`), title),
			chromedp.SendKeys(css(`#add-fields input[name="content"]`), "from the form"),
			chromedp.SendKeys(css(`#add-fields input[name="when"]`), "at "+lang.at),
			chromedp.Click(css(`#add-button`)),
			waitJS(fmt.Sprintf(`[...document.querySelectorAll("#rows tbody tr.row-new")].some((tr) => tr.textContent.includes(%q))`, title)),
			waitJS(`cronsheet.table.page.info().page > 0`),
		)
		visible := get(t, ctx, "is the new row in view", chromedp.Evaluate[bool](
			`(r => r.top >= 0 && r.bottom <= innerHeight)(document.querySelector("#rows tbody tr.row-new").getBoundingClientRect())`))
		if !visible {
			t.Errorf("%s: the new row is not scrolled into view", lang.code)
		}
		if errs := get(t, ctx, "read script errors", chromedp.Evaluate[string](`JSON.stringify(window.cronsheetErrors || [])`)); errs != "[]" {
			t.Errorf("%s: script errors: %s", lang.code, errs)
		}
		for _, p := range problems.takeButPreviews() {
			t.Errorf("%s: %s", lang.code, p)
		}
	}

	// The default shown is not written: the row and its export leave the
	// channel out.
	if ch, ok := rowFields(t, base, "o-a")["channel"]; ok {
		t.Errorf("o-a was given channel %v by being shown", ch)
	}
	q := url.Values{"columns[0][data]": {"fields.memo_id"}, "columns[1][data]": {"fields.channel"}}
	resp, err := http.Get(base + "/api/v1/scenarios/memos/table.csv?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(resp.Body).ReadAll()
	resp.Body.Close()
	if err != nil || len(recs) < 2 {
		t.Fatalf("export: %v %v", recs, err)
	}
	chCol := slices.Index(recs[0], "channel")
	for _, r := range recs[1:] {
		if r[0] == "o-a" && (chCol < 0 || r[chCol] != "") {
			t.Errorf("the export gives o-a channel %q (column %d of %v), want it left out", r[max(chCol, 0)], chCol, recs[0])
		}
	}

	// The cell still edits: the channel set outright is no longer the
	// muted default.
	run(t, ctx, "edit the default channel's cell", 30*time.Second,
		chromedp.Navigate(base+"/"),
		waitJS(`document.body.dataset.ready === "1"`),
		jsClick(`#rows tbody tr[id="o-a"] td:nth-child(5)`),
		chromedp.WaitVisible(css(`#rows td.editing select`)),
		chromedp.Evaluate[chromedp.Void](`(s => { s.value = "outbox"; s.focus(); })(document.querySelector("#rows td.editing select"))`),
		chromedp.KeyEvent(kb.Enter),
		waitJS(`!document.querySelector("#rows td.editing")`),
		waitJS(`!document.querySelector('#rows tbody tr[id="o-a"] td:nth-child(5) .ch-default')`),
	)
	if got := rowFields(t, base, "o-a")["channel"]; got != "outbox" {
		t.Errorf("after the edit o-a's channel = %v, want outbox", got)
	}
}
