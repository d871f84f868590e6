package webtable_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"cronsheet/internal/apitest"
	"cronsheet/internal/apitest/fullapi"
	"cronsheet/static"
	"cronsheet/store"
	"cronsheet/task"
	"cronsheet/webtable"
)

// startPages serves b's API with the table endpoint and the pages (no
// patrols, no scheduler: the test syncs rows itself) and returns the base
// URL.
func startPages(t *testing.T, b *fullapi.Bundle) string {
	t.Helper()
	table := webtable.NewTable(webtable.TableDeps{Store: b.Store, Scenarios: b.Scenarios})
	if err := table.Prepare(context.Background()); err != nil {
		t.Fatalf("prepare the table: %v", err)
	}
	table.Register(b.Engine)
	webtable.NewPages(static.FS).Register(b.Engine)
	srv := httptest.NewServer(b.Engine)
	t.Cleanup(srv.Close)
	return srv.URL
}

// screenshot saves a full-page screenshot as name.png in a temporary
// directory, and in CRONSHEET_ARTIFACTS when set, and logs where.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png := get(t, ctx, "screenshot "+name, chromedp.FullScreenshot(100))
	dirs := []string{t.TempDir()}
	if dir := os.Getenv("CRONSHEET_ARTIFACTS"); dir != "" && os.MkdirAll(dir, 0o755) == nil {
		dirs = append(dirs, dir)
	}
	for _, dir := range dirs {
		path := filepath.Join(dir, "webtable-"+name+".png")
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot of the %s page: %s", name, path)
	}
}

// setSelect picks value in the select matching sel as a person would: the
// value changes and a change event follows.
func setSelect(sel, value string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](fmt.Sprintf(`(() => {
		const el = document.querySelector(%q);
		if (!el || el.disabled) return false;
		el.value = %q;
		el.dispatchEvent(new Event("change", {bubbles: true}));
		return true;
	})()`, sel, value), chromedp.WithPollingInterval(50*time.Millisecond))
}

func TestBrowserTargetsAndRuns(t *testing.T) {
	chromium := needBrowser(t)
	b := fullapi.SetupControl(t)
	b.AddTask(t, "t1", 1)
	base := startPages(t, b)
	ctx := newBrowser(t, chromium)

	// Targets: a refused save keeps the form and marks the field; a good
	// one lists the target.
	run(t, ctx, "load the targets page", 30*time.Second,
		chromedp.Navigate(base+"/targets"),
		chromedp.WaitVisible(css(`body[data-ready="1"]`)),
		chromedp.WaitVisible(css(`#targets tbody`)),
	)
	run(t, ctx, "see a refused target", 20*time.Second,
		chromedp.SendKeys(css(`#target-form input[name="id"]`), "hook-1"),
		chromedp.SendKeys(css(`#target-form input[name="name"]`), "browser hook"),
		setSelect(`#target-form select[name="state"]`, "running"),
		chromedp.SendKeys(css(`#target-form input[name="http.url"]`), "ftp://nowhere"),
		chromedp.Click(css(`#target-save`)),
		waitJS(`document.getElementById("target-error").textContent.includes("http.url")`),
		chromedp.WaitVisible(css(`#target-form input[name="http.url"].bad`)),
	)
	if v := get(t, ctx, "read the url kept", chromedp.Value(css(`#target-form input[name="http.url"]`))); v != "ftp://nowhere" {
		t.Errorf("url input = %q after the refusal, want what was typed", v)
	}
	run(t, ctx, "create a target", 20*time.Second,
		// Select what was typed, then type over it.
		chromedp.Evaluate[chromedp.Void](`document.querySelector('#target-form input[name="http.url"]').select()`),
		chromedp.SendKeys(css(`#target-form input[name="http.url"]`), "https://example.com/hook/{{task_id}}"),
		chromedp.Click(css(`#target-save`)),
		waitJS(`document.getElementById("notice").textContent.includes("hook-1")`),
		chromedp.WaitVisible(chromedp.Search(`//table[@id="targets"]//td[text()="browser hook"]`)),
	)
	run(t, ctx, "pause the target", 20*time.Second,
		setSelect(`#targets tbody tr[id="hook-1"] select.tg-state`, "paused"),
		waitJS(`(r => r.any() && r.data().state === "paused" && r.data().version === 2)(cronsheet.table.row("#hook-1"))`),
	)
	if tg, err := b.Store.GetTarget(t.Context(), "hook-1"); err != nil || tg.State != task.TargetPaused ||
		tg.HTTP == nil || tg.HTTP.URL != "https://example.com/hook/{{task_id}}" || tg.Name != "browser hook" {
		t.Errorf("stored target = %+v, %v", tg, err)
	}
	run(t, ctx, "edit the target in the form", 20*time.Second,
		jsClick(`#targets tbody tr[id="hook-1"] button.edit`),
		waitJS(`document.getElementById("form-id").textContent === "hook-1 v2"`),
		chromedp.Evaluate[chromedp.Void](`document.querySelector('#target-form input[name="name"]').select()`),
		chromedp.SendKeys(css(`#target-form input[name="name"]`), "edited hook"),
		chromedp.Click(css(`#target-save`)),
		chromedp.WaitVisible(chromedp.Search(`//table[@id="targets"]//td[text()="edited hook"]`)),
		waitJS(`cronsheet.table.row("#hook-1").data().version === 3 && cronsheet.table.row("#hook-1").data().state === "paused"`),
	)
	screenshot(t, ctx, "targets")
	apitest.Want[task.Target](t, b.Do(t, http.MethodPost, "/api/v1/targets", `{"id":"gone","kind":"email"}`), http.StatusCreated)
	run(t, ctx, "delete a target with confirmation", 20*time.Second,
		chromedp.Evaluate[chromedp.Void](`void cronsheet.table.ajax.reload(null, false)`),
		jsClick(`#targets tbody tr[id="gone"] button.del`),
		jsClick(`#targets tbody tr[id="gone"] button.del-yes`),
		chromedp.WaitNotPresent(css(`#targets tbody tr[id="gone"]`)),
		waitJS(`document.getElementById("notice").textContent.includes("gone")`),
	)
	if _, err := b.Store.GetTarget(t.Context(), "gone"); !errors.Is(err, task.ErrNotFound) {
		t.Errorf("GetTarget(gone) after the delete: %v, want not found", err)
	}

	// The table: the row's task state, then run now with params.
	tr := `#rows tbody tr[id="t1"]`
	run(t, ctx, "stop the task from the table", 30*time.Second,
		chromedp.Navigate(base+"/?poll=300"),
		chromedp.WaitVisible(css(`body[data-ready="1"]`)),
		waitJS(fmt.Sprintf(`(document.querySelector(%q) || {}).value === "running"`, tr+` select.task-state`)),
		setSelect(tr+` select.task-state`, "stopped"),
		waitJS(`document.getElementById("notice").textContent.includes("stopped")`),
	)
	if tk, err := b.Store.GetTask(t.Context(), "t1"); err != nil || tk.State != task.StateStopped {
		t.Errorf("task = %+v, %v; want stopped", tk, err)
	}
	run(t, ctx, "run now with params", 30*time.Second,
		jsClick(tr+` button.run-params`),
		chromedp.WaitVisible(css(`#params`)),
		chromedp.SendKeys(css(`#params-list li:first-child input.param-key`), "who"),
		chromedp.SendKeys(css(`#params-list li:first-child input.param-value`), "browser"),
		chromedp.Click(css(`#params-run`)),
		waitJS(`document.getElementById("notice").textContent.includes("triggered")`),
		waitJS(`document.getElementById("params").hidden`),
		waitJS(`[...document.querySelectorAll("#drawer #runs tbody tr")].some(tr => tr.children[1] && tr.children[1].textContent === "manual")`),
	)
	runs, err := b.Store.QueryRuns(t.Context(), store.RunQuery{TaskID: "t1", Limit: 10})
	if err != nil || len(runs) != 1 || runs[0].Params["who"] != "browser" {
		t.Fatalf("runs of t1 = %+v, %v; want the manual run with who=browser", runs, err)
	}
	manual := runs[0].TriggerID

	// A run that a target accepted, with two feedback reports.
	accepted := &task.Run{TriggerID: "tr-browser", TaskID: "t1", Target: "hook-1", Slot: apitest.FixedNow.Add(time.Hour),
		FiredAt: time.Now(), TriggerType: task.TriggerManual, State: task.RunRunning, Attempt: 1}
	if _, err := b.Store.InsertRun(t.Context(), accepted); err != nil {
		t.Fatalf("InsertRun: %v", err)
	}
	apitest.Want[task.Run](t, b.Do(t, http.MethodPost, "/api/v1/runs/tr-browser/feedback",
		`{"status":0,"message":"half way","progress":true}`), http.StatusOK)
	apitest.Want[task.Run](t, b.Do(t, http.MethodPost, "/api/v1/runs/tr-browser/feedback",
		`{"status":0,"message":"all done","output":"7 files"}`), http.StatusOK)

	// Runs: filter by task, open a run, see every feedback report.
	run(t, ctx, "open the runs page", 30*time.Second,
		chromedp.Navigate(base+"/runs?task_id=t1"),
		chromedp.WaitVisible(css(`body[data-ready="1"]`)),
		chromedp.WaitVisible(css(`#runs-table tbody tr[id="tr-browser"]`)),
		chromedp.WaitVisible(css(fmt.Sprintf(`#runs-table tbody tr[id=%q]`, manual))),
	)
	run(t, ctx, "see a run's detail", 20*time.Second,
		jsClick(`#runs-table tbody tr[id="tr-browser"] td:nth-child(2)`),
		chromedp.WaitVisible(css(`#run-detail`)),
		waitJS(`document.getElementById("detail-id").textContent === "tr-browser"`),
		waitJS(`document.querySelectorAll("#feedback tbody tr.fb-progress").length === 1 && document.querySelectorAll("#feedback tbody tr.fb-final").length === 1`),
	)
	text := get(t, ctx, "read the detail", chromedp.Text(css(`#run-detail`)))
	for _, part := range []string{"hook-1", "done", "half way", "all done", "7 files"} {
		if !strings.Contains(text, part) {
			t.Errorf("detail lacks %q:\n%s", part, text)
		}
	}
	screenshot(t, ctx, "runs")
	run(t, ctx, "see the manual run's params", 20*time.Second,
		jsClick(fmt.Sprintf(`#runs-table tbody tr[id=%q] td:nth-child(2)`, manual)),
		waitJS(fmt.Sprintf(`document.getElementById("detail-id").textContent === %q`, manual)),
		waitJS(`document.getElementById("detail-fields").textContent.includes("who=browser")`),
		waitJS(`location.search.includes("trigger_id=")`),
	)
	// Filtering by state leaves the finished runs of the state asked for.
	run(t, ctx, "filter by state", 20*time.Second,
		setSelect(`#run-filters select[name="state"]`, "done"),
		jsClick(`#filter-apply`),
		waitJS(`(ids => ids.length >= 1 && ids.every(id => cronsheet.table.row("#" + CSS.escape(id)).data().state === "done"))(cronsheet.table.rows().ids().toArray())`),
	)

	// Simplified Chinese on the new pages.
	run(t, ctx, "switch to Chinese", 20*time.Second,
		chromedp.Evaluate[chromedp.Void](`localStorage.setItem("cronsheet.lang", "zh")`),
		chromedp.Navigate(base+"/targets"),
		waitJS(`document.documentElement.lang === "zh-CN"`),
		waitJS(`document.getElementById("target-save").textContent === "保存"`),
		chromedp.WaitVisible(css(`#targets tbody tr[id="hook-1"]`)),
	)
}
