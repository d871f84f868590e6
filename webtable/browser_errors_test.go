package webtable_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserErrorsByCode: the pages show a server error in their own
// language by its stable code (the server writes English): in 简体中文 a
// missing run reads 未找到 and a refused field names the field in a
// Chinese sentence, each followed by the server's detail; in English the
// server's text is shown as it is.
func TestBrowserErrorsByCode(t *testing.T) {
	chromium := needBrowser(t)
	base := startNode(t)
	ctx := newBrowser(t, chromium)
	for _, lang := range []string{"en", "zh"} {
		run(t, ctx, "set the language", 20*time.Second,
			chromedp.Navigate(base+"/login"),
			chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`localStorage.setItem("cronsheet.lang", %q)`, lang)),
		)
		run(t, ctx, "open a run that does not exist ("+lang+")", 30*time.Second,
			chromedp.Navigate(base+"/runs?trigger_id=tr_missing"),
			waitJS(`document.getElementById("notice").textContent !== ""`),
		)
		notice := get(t, ctx, "read the notice", chromedp.Evaluate[string](`document.getElementById("notice").textContent`))
		// A target whose kind needs a field it lacks, through the page's own
		// request helper.
		refused := get(t, ctx, "a refused field", chromedp.Evaluate[map[string]string](`(async () => {
			const r = await window.cronsheetUI.getJSON("/api/v1/targets", {method: "POST",
			  headers: {"Content-Type": "application/json"}, body: JSON.stringify({id: "err-1", kind: "http"})});
			return {status: String(r.status), error: r.body.error, en: r.body.errorEN, field: r.body.field || ""};
		})()`, chromedp.EvalAwaitPromise))
		if refused["status"] != "400" || refused["field"] == "" || refused["en"] == "" {
			t.Fatalf("%s: POST of a target without its url = %v, want a 400 naming the field", lang, refused)
		}
		switch lang {
		case "en":
			if !strings.Contains(notice, "not found") || strings.Contains(notice, "未找到") {
				t.Errorf("en: notice %q, want the server's English text", notice)
			}
			if refused["error"] != refused["en"] {
				t.Errorf("en: error %q, want the server's text %q unchanged", refused["error"], refused["en"])
			}
		case "zh":
			if !strings.HasPrefix(notice, "未找到：") || !strings.Contains(notice, "not found") {
				t.Errorf("zh: notice %q, want 未找到： then the server's detail", notice)
			}
			want := "字段「" + refused["field"] + "」有误：" + refused["en"]
			if refused["error"] != want {
				t.Errorf("zh: error %q, want %q", refused["error"], want)
			}
		}
		if errs := get(t, ctx, "console errors", chromedp.Evaluate[[]string](`window.cronsheetErrors`)); len(errs) != 0 {
			t.Errorf("%s: script errors: %v", lang, errs)
		}
	}
}
