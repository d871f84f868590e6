package webtable_test

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserScreenshots saves the screenshot set of docs/screenshots/
// when CRONSHEET_SCREENSHOTS names the directory to write (skipped
// otherwise): the table, runs, jobs, flows and status pages in English and
// 简体中文, at 1280×800 and 390×844, on a node seeded with 30 rows, a
// target, a flow, jobs and runs. Each page must start without a script
// error before it is taken.
//
//	CRONSHEET_SCREENSHOTS=$PWD/docs/screenshots go test -run TestBrowserScreenshots ./webtable/
func TestBrowserScreenshots(t *testing.T) {
	dir := os.Getenv("CRONSHEET_SCREENSHOTS")
	if dir == "" {
		t.Skip("set CRONSHEET_SCREENSHOTS to the directory to write the screenshot set to")
	}
	chromium := needBrowser(t)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	base := startNodeWith(t, allowLoopback)
	seedPages(t, base)
	titles := []string{"standup", "周报", "backup", "invoice run", "对账", "值班提醒", "deploy window", "read metrics",
		"renew certs", "team lunch", "月报", "check disk"}
	schedules := []string{"every 1h", "daily 09:00", "weekdays 08:30", "weekly mon 10:00", "monthly 1 09:00", "每天早上8点", "in 3h"}
	for i := 4; i <= 30; i++ {
		postJSON(t, base, "/api/v1/scenarios/memos/rows", fmt.Sprintf(
			`{"memo_id":"m-%02d","title":%q,"content":"note %d","when":%q,"to":"ops@example.com"}`,
			i, titles[i%len(titles)], i, schedules[i%len(schedules)]), http.StatusCreated)
	}
	hook := startHook(t)
	for i := range 4 {
		submitJob(t, base, fmt.Sprintf(`{"method":"GET","name":"%s/ok/%d","delay":0,"max_retries":0}`, hook, i))
	}
	submitJob(t, base, fmt.Sprintf(`{"method":"GET","name":"%s/fail/1","delay":0,"max_retries":0}`, hook))
	waitSynced(t, base, "m-30")
	for _, id := range []string{"m-04", "m-05", "m-06"} {
		postJSON(t, base, "/api/v1/tasks/"+id+"/trigger", `{}`, http.StatusAccepted)
	}
	time.Sleep(2 * time.Second) // the triggered runs and jobs finish

	ctx := newBrowser(t, chromium)
	pages := []struct{ name, path, ready string }{
		{"table", "/", `document.querySelectorAll("#rows tbody tr[id]").length >= 10`},
		{"runs", "/runs", `document.querySelectorAll("#runs-table tbody tr[id]").length >= 1`},
		{"jobs", "/jobs", `document.body.dataset.ready === "1"`},
		{"flows", "/flows", `!!document.querySelector('#flow-list a[data-id="pg-flow"]')`},
		{"status", "/status", `Number(document.body.dataset.stats || 0) >= 1 && Number(document.body.dataset.timeline || 0) >= 1`},
	}
	sizes := []struct {
		name string
		w, h int64
	}{{"desktop", 1280, 800}, {"mobile", 390, 844}}
	for _, lang := range []string{"en", "zh"} {
		run(t, ctx, "set the language", 20*time.Second,
			chromedp.Navigate(base+"/login"),
			chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`localStorage.setItem("cronsheet.lang", %q)`, lang)),
		)
		for _, sz := range sizes {
			for _, p := range pages {
				run(t, ctx, "load "+p.path, 30*time.Second,
					chromedp.EmulateViewport(sz.w, sz.h),
					chromedp.Navigate(base+p.path),
					waitJS(`document.body.dataset.ready === "1"`),
					waitJS(p.ready),
				)
				time.Sleep(300 * time.Millisecond) // late paints (the language file, the charts)
				if errs := get(t, ctx, "read script errors", chromedp.Evaluate[string](`JSON.stringify(window.cronsheetErrors || [])`)); errs != "[]" {
					t.Errorf("%s %s %s: script errors: %s", lang, sz.name, p.path, errs)
				}
				png := get(t, ctx, "screenshot", chromedp.CaptureScreenshot())
				name := filepath.Join(dir, fmt.Sprintf("%s-%s-%s.png", p.name, lang, sz.name))
				if err := os.WriteFile(name, png, 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("%s: %d bytes", name, len(png))
			}
		}
	}
}
