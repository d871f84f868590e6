package webtable_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserNames: the Runs page, a run's detail, the Outbox page, the
// Status page's timeline, the add form's notice (whose new row is
// scrolled to and flashed), the
// runs drawer and the Run now notice name a task by its title, the id on hover, in
// English and 简体中文 without a console error; the Runs page's title
// filter finds the task by a word of its title.
func TestBrowserNames(t *testing.T) {
	chromium := needBrowser(t)
	base := startNode(t)
	postJSON(t, base, "/api/v1/scenarios/memos/rows",
		`{"memo_id":"nm-1","title":"周报 weekly","content":"写周报","when":"every 1h","to":"team@example.com"}`, http.StatusCreated)
	postJSON(t, base, "/api/v1/scenarios/memos/rows",
		`{"memo_id":"nm-2","title":"backup","content":"check","when":"every 1h","to":"ops@example.com"}`, http.StatusCreated)
	waitSynced(t, base, "nm-1", "nm-2")
	postJSON(t, base, "/api/v1/tasks/nm-1/trigger", `{}`, http.StatusAccepted)
	postJSON(t, base, "/api/v1/tasks/nm-2/trigger", `{}`, http.StatusAccepted)
	ctx := newBrowser(t, chromium)
	problems := listenTab(t, ctx, true)

	for _, lang := range []string{"en", "zh"} {
		run(t, ctx, "set the language", 20*time.Second,
			chromedp.Navigate(base+"/login"),
			chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`localStorage.setItem("cronsheet.lang", %q)`, lang)),
		)
		problems.take()
		// Each task once: the English pass's Run now adds a run.
		cell := `[...new Set([...document.querySelectorAll("#runs-table tbody tr[id] .task-name")].map((s) => s.textContent + "|" + s.title))].sort().join(",")`
		run(t, ctx, "load the Runs page ("+lang+")", 30*time.Second,
			chromedp.Navigate(base+"/runs"),
			waitJS(`document.body.dataset.ready === "1"`),
			waitJS(cell+` === "backup|nm-2,周报 weekly|nm-1"`),
		)
		run(t, ctx, "filter by a title word ("+lang+")", 30*time.Second,
			chromedp.Evaluate[chromedp.Void](`document.querySelector('#run-filters [name="title"]').value = "周报"`),
			jsClick("#filter-apply"),
			waitJS(cell+` === "周报 weekly|nm-1"`),
			waitJS(`location.search === "?title=" + encodeURIComponent("周报")`),
			jsClick(`#runs-table tbody tr[id]`),
			waitJS(`document.getElementById("detail-title").textContent === "周报 weekly" && document.getElementById("detail-id").textContent !== ""`),
			waitJS(`document.querySelector("#detail-fields .task-name").title === "nm-1"`),
		)
		run(t, ctx, "load the Outbox page ("+lang+")", 30*time.Second,
			chromedp.Navigate(base+"/outbox"),
			waitJS(`document.body.dataset.ready === "1"`),
			waitJS(`[...document.querySelectorAll("#outbox tbody td.task-name")].some((td) => td.textContent === "周报 weekly" && td.title === "nm-1")`),
			waitJS(`![...document.querySelectorAll("#outbox tbody td.task-name")].some((td) => td.textContent === "nm-1")`),
		)
		run(t, ctx, "load the Audit page ("+lang+")", 30*time.Second,
			chromedp.Navigate(base+"/audit"),
			waitJS(`document.body.dataset.ready === "1"`),
			waitJS(`[...document.querySelectorAll("#audit tbody td.task-name")].some((td) => td.textContent === "周报 weekly" && td.title === "nm-1")`),
			waitJS(`![...document.querySelectorAll("#audit tbody td.task-name")].some((td) => td.textContent === "nm-1")`),
		)
		run(t, ctx, "load the Status page ("+lang+")", 30*time.Second,
			chromedp.Navigate(base+"/status"),
			waitJS(`document.body.dataset.ready === "1"`),
			waitJS(`[...document.querySelectorAll("#timeline a.tl-item")].some((a) => a.dataset.task === "nm-1" && a.textContent === "周报 weekly" && a.title.endsWith("nm-1"))`),
		)
		run(t, ctx, "open the drawer and run now ("+lang+")", 30*time.Second,
			chromedp.Navigate(base+"/"),
			waitJS(`document.body.dataset.ready === "1"`),
			jsClick(`#rows tbody tr[id="nm-2"] button.runs`),
			waitJS(`document.getElementById("drawer-task").textContent === "backup" && document.getElementById("drawer-task").title === "nm-2"`),
		)
		run(t, ctx, "run now names the row ("+lang+")", 30*time.Second,
			jsClick(`#rows tbody tr[id="nm-1"] button.run-now`),
			waitJS(`document.getElementById("notice").textContent.includes("周报 weekly")`),
			waitJS(`!document.getElementById("notice").textContent.includes("nm-1")`),
			// Run now then opens the drawer on the row's runs, after its
			// own fetch: closed before that, the drawer would open again
			// over the add form and take the click meant for Add.
			waitJS(`!document.getElementById("drawer").hidden && document.getElementById("drawer-task").title === "nm-1"`),
		)
		title := "新行 " + lang
		run(t, ctx, "add a row ("+lang+")", 30*time.Second,
			jsClick("#drawer-close"),
			waitJS(`document.getElementById("drawer").hidden`),
			chromedp.SendKeys(css(`#add-fields input[name="title"]`), title),
			chromedp.SendKeys(css(`#add-fields input[name="content"]`), "from the form"),
			chromedp.SendKeys(css(`#add-fields input[name="when"]`), "every 1h"),
			chromedp.SendKeys(css(`#add-fields input[name="to"]`), "ops@example.com"),
			chromedp.Click(css(`#add-button`)),
			waitJS(fmt.Sprintf(`document.getElementById("notice").textContent.includes(%q)`, title)),
			waitJS(fmt.Sprintf(`[...document.querySelectorAll("#rows tbody tr.row-new")].some((tr) => tr.textContent.includes(%q))`, title)),
		)
		if errs := get(t, ctx, "read script errors", chromedp.Evaluate[string](`JSON.stringify(window.cronsheetErrors || [])`)); errs != "[]" {
			t.Errorf("%s: script errors: %s", lang, errs)
		}
		for _, p := range problems.takeButPreviews() {
			t.Errorf("%s: %s", lang, p)
		}
	}
	var one struct {
		Runs []struct {
			TaskTitle string `json:"task_title"`
		}
	}
	getDoc(t, base+"/api/v1/runs?title=backup", &one)
	if b, _ := json.Marshal(one); len(one.Runs) < 1 || one.Runs[0].TaskTitle != "backup" {
		t.Errorf("runs?title=backup = %s", b)
	}
}
