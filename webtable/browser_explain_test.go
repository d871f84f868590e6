package webtable_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserExplain: a switched-off row's Why? opens a dialog whose
// sentence says the row is switched off, above the list of checks with
// their verdicts, in English and 简体中文, with no script error.
func TestBrowserExplain(t *testing.T) {
	chromium := needBrowser(t)
	base := startNode(t)
	postJSON(t, base, "/api/v1/scenarios/memos/rows",
		`{"memo_id":"why-off","title":"off","content":"x","when":"daily 03:00","channel":"outbox","active":0}`, http.StatusCreated)
	waitSynced(t, base, "why-off")

	ctx := newBrowser(t, chromium)
	want := map[string][]string{
		"en": {"Why?", ": the row is switched off.", "fail"},
		"zh": {"为什么？", "：该行已关闭。", "未通过"},
	}
	for _, lang := range []string{"en", "zh"} {
		run(t, ctx, "set the language", 20*time.Second,
			chromedp.Navigate(base+"/login"),
			chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`localStorage.setItem("cronsheet.lang", %q)`, lang)),
		)
		run(t, ctx, "open Why? ("+lang+")", 30*time.Second,
			chromedp.Navigate(base+"/"),
			waitJS(`document.body.dataset.ready === "1" && !!document.querySelector('#rows tbody tr[id="why-off"] button.why')`),
			jsClick(`#rows tbody tr[id="why-off"] button.why`),
			waitJS(`document.getElementById("explain").open && document.getElementById("explain-checks").children.length > 0`),
		)
		got := get(t, ctx, "read the dialog", chromedp.Evaluate[map[string]string](`({
			button: document.querySelector('#rows tbody tr[id="why-off"] button.why').textContent,
			sentence: document.getElementById("explain-sentence").textContent,
			first: document.querySelector("#explain-checks li.check-fail strong").textContent,
			checks: String(document.getElementById("explain-checks").children.length)})`))
		w := want[lang]
		if got["button"] != w[0] || !strings.HasSuffix(got["sentence"], w[1]) || got["first"] != w[2] || got["checks"] != "10" {
			t.Errorf("%s: dialog = %v; want button %q, a sentence ending %q, a check marked %q, the 10 checks listed", lang, got, w[0], w[1], w[2])
		}
		if errs := get(t, ctx, "read script errors", chromedp.Evaluate[string](`JSON.stringify(window.cronsheetErrors)`)); errs != "[]" {
			t.Errorf("%s: script errors: %s", lang, errs)
		}
	}
	screenshot(t, ctx, "explain")
}
