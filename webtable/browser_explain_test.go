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
// their verdicts; a run's Why?, in the runs drawer and on the Runs page,
// says it fired; in English and 简体中文, with no script error.
func TestBrowserExplain(t *testing.T) {
	chromium := needBrowser(t)
	base := startNode(t)
	postJSON(t, base, "/api/v1/scenarios/memos/rows",
		`{"memo_id":"why-off","title":"off","content":"x","when":"daily 03:00","channel":"outbox","active":0}`, http.StatusCreated)
	postJSON(t, base, "/api/v1/scenarios/memos/rows",
		`{"memo_id":"why-run","title":"ran","content":"x","when":"daily 03:00","channel":"outbox"}`, http.StatusCreated)
	waitSynced(t, base, "why-off", "why-run")
	postJSON(t, base, "/api/v1/tasks/why-run/trigger", `{}`, http.StatusAccepted)
	deadline := time.Now().Add(20 * time.Second)
	for {
		var runs struct{ Runs []struct{ State string } }
		getDoc(t, base+"/api/v1/runs?task_id=why-run", &runs)
		if len(runs.Runs) == 1 && runs.Runs[0].State == "done" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("runs of why-run = %+v, want the manual run done", runs.Runs)
		}
		time.Sleep(100 * time.Millisecond)
	}

	ctx := newBrowser(t, chromium)
	want := map[string][]string{
		"en": {"Why?", ": the row is switched off.", "fail", "It fired at "},
		"zh": {"为什么？", "：该行已关闭。", "未通过", "它已于 "},
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
		if got["button"] != w[0] || !strings.HasSuffix(got["sentence"], w[1]) || got["first"] != w[2] || got["checks"] != "11" {
			t.Errorf("%s: dialog = %v; want button %q, a sentence ending %q, a check marked %q, the 11 checks listed", lang, got, w[0], w[1], w[2])
		}
		// A run's Why?, in the table's runs drawer and on the Runs page:
		// the manual run fired.
		sentence := `document.getElementById("explain").open && document.getElementById("explain-sentence").textContent.startsWith(%q)`
		run(t, ctx, "open a run's Why? in the drawer ("+lang+")", 30*time.Second,
			jsClick("#explain-close"),
			jsClick(`#rows tbody tr[id="why-run"] button.runs`),
			jsClick(`#runs tbody button.why`),
			waitJS(fmt.Sprintf(sentence, w[3])),
			jsClick("#explain-close"),
		)
		run(t, ctx, "open a run's Why? on the Runs page ("+lang+")", 30*time.Second,
			chromedp.Navigate(base+"/runs?task_id=why-run"),
			waitJS(`document.body.dataset.ready === "1"`),
			jsClick(`#runs-table tbody button.why`),
			waitJS(fmt.Sprintf(sentence, w[3])),
		)
		if errs := get(t, ctx, "read script errors", chromedp.Evaluate[string](`JSON.stringify(window.cronsheetErrors)`)); errs != "[]" {
			t.Errorf("%s: script errors: %s", lang, errs)
		}
	}
	screenshot(t, ctx, "explain")
}
