package webtable_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// laterJS moves the page's clock (Date.now) by h hours, so a relative
// time that ticks reads differently without the test waiting.
func laterJS(h int) string {
	return fmt.Sprintf(`(() => { const real = Date.now.bind(Date); Date.now = () => real() + %d * 3600e3; return true; })()`, h)
}

// TestBrowserLocaleTimes: relative times tick — the runs page rewrites
// "3 s ago" as the clock moves (every 30 s; ?tick= shortens it for the
// test), the table too — and times, dates, run states, channel cells and
// the close buttons read in the page's language: in 简体中文 no "AM"/"PM"
// in a tooltip, the status timeline or the "updated" notice, a done run
// is 已完成 in the table's runs drawer, an outbox row's channel is 发件箱,
// the drawer's close button is named 关闭. In English and 简体中文,
// without a console error.
func TestBrowserLocaleTimes(t *testing.T) {
	chromium := needBrowser(t)
	base := startNode(t)
	seedPages(t, base)
	postJSON(t, base, "/api/v1/scenarios/memos/rows",
		`{"memo_id":"pg-out","title":"out","content":"c","when":"every 1h","channel":"outbox"}`, http.StatusCreated)
	waitSynced(t, base, "pg-out")
	ctx := newBrowser(t, chromium)
	console := listenConsole(t, ctx)
	type words struct{ code, threeHAgo, done, outbox, close string }
	for _, w := range []words{{"en", "3 h ago", "done", "outbox", "Close"}, {"zh", "3 小时前", "已完成", "发件箱", "关闭"}} {
		noAMPM := func(expr string) string {
			if w.code == "en" {
				return `true`
			}
			return `!/AM|PM/.test(` + expr + `)`
		}
		run(t, ctx, "the runs page's times tick ("+w.code+")", 30*time.Second,
			chromedp.Navigate(base+"/login"),
			chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`localStorage.setItem("cronsheet.lang", %q)`, w.code)),
			chromedp.Navigate(base+"/runs?tick=250"),
			chromedp.WaitVisible(css(`body[data-ready="1"]`)),
			waitJS(`document.querySelectorAll("#runs-table tbody time.rel-time").length > 0`),
			waitJS(noAMPM(`document.querySelector("#runs-table tbody time.rel-time").title`)),
			chromedp.Evaluate[chromedp.Void](laterJS(3)),
			waitJS(fmt.Sprintf(`[...document.querySelectorAll("#runs-table tbody time.rel-time")].some((e) => e.textContent === %q)`, w.threeHAgo)),
		)
		run(t, ctx, "the table's words and times ("+w.code+")", 30*time.Second,
			chromedp.Navigate(base+"/"),
			chromedp.WaitVisible(css(`body[data-ready="1"]`)),
			waitJS(`!!document.querySelector('#rows tbody tr[id="pg-out"]')`),
			waitJS(fmt.Sprintf(`document.querySelector(%q).textContent === %q`, cellSel("pg-out", 5), w.outbox)),
			waitJS(fmt.Sprintf(`document.getElementById("drawer-close").getAttribute("aria-label") === %q`, w.close)),
			chromedp.Evaluate[chromedp.Void](laterJS(3)),
			waitJS(`document.querySelector('#rows tbody tr[id="pg-out"] .rel').textContent.includes("`+map[string]string{"en": "ago", "zh": "前"}[w.code]+`")`),
			jsClick(`#rows tbody tr[id="pg-1"] button.runs`),
			waitJS(fmt.Sprintf(`[...document.querySelectorAll("#runs tbody tr")].some((tr) => tr.children[2] && tr.children[2].textContent === %q)`, w.done)),
		)
		run(t, ctx, "the status page's times ("+w.code+")", 30*time.Second,
			chromedp.Navigate(base+"/status"),
			chromedp.WaitVisible(css(`body[data-ready="1"]`)),
			waitJS(`document.querySelectorAll(".tl-hour").length > 0 && document.getElementById("notice").textContent !== ""`),
			waitJS(noAMPM(`[...document.querySelectorAll(".tl-hour")].map((e) => e.textContent).join()`)),
			waitJS(noAMPM(`document.getElementById("notice").textContent`)),
			waitJS(noAMPM(`[...document.querySelectorAll(".tl-item")].map((e) => e.title).join()`)),
			waitJS(fmt.Sprintf(`document.getElementById("job-close").getAttribute("aria-label") === %q`, w.close)),
		)
		for _, e := range console.take() {
			t.Errorf("console error (%s): %q", w.code, e)
		}
	}
}
