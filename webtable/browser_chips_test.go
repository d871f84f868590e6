package webtable_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"cronsheet/config"
	"cronsheet/task"
)

// TestBrowserFilterChips filters the table with the chips above it (the
// server filters and counts: Errors, Off, Failing, Due within 1 h, by
// channel) and searches it for a two-character Chinese word, which the
// trigram search alone could not find.
func TestBrowserFilterChips(t *testing.T) {
	chromium := needBrowser(t)
	var cfg config.Config
	base := startNodeWith(t, func(c *config.Config) { cfg = *c })
	st := openNodeStore(t, cfg)
	rows := []string{
		`{"memo_id":"c-due","title":"soon","content":"c","when":"every 1h","channel":"outbox"}`,
		`{"memo_id":"c-off","title":"switched off","content":"c","when":"every 1h","channel":"outbox","active":0}`,
		`{"memo_id":"c-far","title":"far away","content":"c","when":"at 2031-05-01 09:00"}`,
		`{"memo_id":"c-mail","title":"mail","content":"c","when":"at 2031-05-01 09:00","channel":"email","to":"ops@example.com"}`,
		`{"memo_id":"c-week","title":"写周报","content":"c","when":"at 2031-05-01 09:00","channel":"sms","to":"+15005550006"}`,
		`{"memo_id":"c-duty","title":"值班提醒","content":"c","when":"at 2031-05-01 09:00","channel":"outbox"}`,
	}
	for _, r := range rows {
		postJSON(t, base, "/api/v1/scenarios/memos/rows", r, http.StatusCreated)
	}
	bad := &task.Row{Scenario: "memos", ID: "c-bad", IsActive: 1, Fields: map[string]any{
		"memo_id": "c-bad", "title": "bad", "content": "c", "when": "dayly 8:00", "channel": "outbox"}}
	if err := st.InsertRow(t.Context(), bad); err != nil {
		t.Fatal(err)
	}
	waitSynced(t, base, "c-due", "c-off", "c-far", "c-mail", "c-week", "c-duty", "c-bad")

	ctx := newBrowser(t, chromium)
	console := listenTab(t, ctx, true)
	run(t, ctx, "load the table", 30*time.Second,
		chromedp.Navigate(base+"/?poll=300"),
		chromedp.WaitVisible(css(`body[data-ready="1"]`)),
		waitJS(`document.querySelectorAll("#rows tbody tr[id]").length === 7`),
	)
	chipsText := func() []string {
		return get(t, ctx, "read the chips", chromedp.Evaluate[[]string](
			`[...document.querySelectorAll("#chips .chip")].map(b => b.textContent + (b.getAttribute("aria-pressed") === "true" ? "*" : ""))`))
	}
	want := []string{"Errors (1)", "Off (1)", "Failing (0)", "Due within 1 h (1)", "email (1)", "sms (1)", "outbox (5)"}
	run(t, ctx, "see the counts", 10*time.Second,
		waitJS(fmt.Sprintf(`[...document.querySelectorAll("#chips .chip")].map(b => b.textContent).join("|") === %q`, strings.Join(want, "|"))))

	click := func(label string) {
		t.Helper()
		run(t, ctx, "click "+label, 10*time.Second, jsClick(fmt.Sprintf(`#chips .chip[data-label=%q]`, label)))
	}
	see := func(step string, ids ...string) {
		t.Helper()
		js := make([]string, len(ids))
		for i, id := range ids {
			js[i] = fmt.Sprintf("%q", id)
		}
		run(t, ctx, step, 10*time.Second, waitJS(fmt.Sprintf(
			`JSON.stringify([...document.querySelectorAll("#rows tbody tr[id]")].map(tr => tr.id).sort()) === JSON.stringify([%s])`,
			strings.Join(js, ","))))
	}
	click("Errors")
	see("see the rows in error", "c-bad")
	if got := chipsText(); got[0] != "Errors (1)*" {
		t.Errorf("chips after Errors: %v, want Errors pressed", got)
	}
	click("Due within 1 h")
	see("see the rows due within the hour", "c-due")
	click("Due within 1 h")
	see("see every row again", "c-bad", "c-due", "c-duty", "c-far", "c-mail", "c-off", "c-week")
	click("Off")
	see("see the rows switched off", "c-off")
	click("Off")
	click("outbox") // the default channel: also the rows that name none
	see("see the outbox rows", "c-bad", "c-due", "c-duty", "c-far", "c-off")
	click("email")
	see("see the email rows", "c-mail")
	click("email")

	// Two Chinese characters are a search.
	for word, id := range map[string]string{"周报": "c-week", "值班": "c-duty"} {
		run(t, ctx, "search "+word, 10*time.Second,
			chromedp.Evaluate[chromedp.Void](`document.querySelector(".dt-search input").value = ""`),
			chromedp.SendKeys(css(`.dt-search input`), word),
		)
		see("see the rows of "+word, id)
		if n := get(t, ctx, "read the notice", chromedp.Evaluate[string](`document.getElementById("notice").textContent`)); n != "" {
			t.Errorf("searching %s: notice %q", word, n)
		}
	}
	// Two Latin letters are still too few.
	run(t, ctx, "search ma", 10*time.Second,
		chromedp.Evaluate[chromedp.Void](`document.querySelector(".dt-search input").value = ""`),
		chromedp.SendKeys(css(`.dt-search input`), "ma"),
		waitJS(`document.getElementById("notice").textContent.includes("3")`),
	)
	see("see every row after a two-letter search", "c-bad", "c-due", "c-duty", "c-far", "c-mail", "c-off", "c-week")
	for _, p := range console.take() {
		t.Errorf("%s", p)
	}
}
