package webtable_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserJobDetail works a job's detail and the search on the jobs
// page, in English and in Chinese: the search narrows the list to the jobs
// whose name or key holds it (in any case); a dead job's id opens its
// detail with its state history and its runs, a run's link opens that run
// on the Runs page; Cancel in a pending job's detail asks first, No leaves
// the job pending (seen through the API) and Yes cancels it. No console
// errors.
func TestBrowserJobDetail(t *testing.T) {
	chromium := needBrowser(t)
	base := startNodeWith(t, allowLoopback)
	ctx := newBrowser(t, chromium)
	console := listenTab(t, ctx, true)
	words := map[string][2]string{ // lang: the cancel question, the detail's runs heading
		"en": {"Cancel this job? It will not run.", "Runs"},
		"zh": {"取消此作业？它将不会运行。", "运行记录"},
	}
	for _, lang := range []string{"en", "zh"} {
		dead := submitJob(t, base, fmt.Sprintf(`{"method":"GET","name":"http://127.0.0.1:9/gone-%s","delay":0,"max_retries":0}`, lang))
		report := submitJob(t, base, fmt.Sprintf(`{"method":"POST","name":"http://127.0.0.1:9/report-%s","delay":3600,"params":"a=1","headers":{"X-Token":"secret"}}`, lang))
		other := submitJob(t, base, fmt.Sprintf(`{"method":"POST","name":"http://127.0.0.1:9/other-%s","delay":3600,"key":"nightly-%s"}`, lang, lang))
		waitJobs(t, base, "dead", dead)
		rowsAre := func(step string, ids ...string) {
			t.Helper()
			run(t, ctx, lang+": "+step, 10*time.Second, waitJS(fmt.Sprintf(
				`[...document.querySelectorAll("#jobs tbody tr[id]")].map(tr => tr.id).sort().join(",") === %q`,
				strings.Join(slices.Sorted(slices.Values(ids)), ","))))
		}
		run(t, ctx, lang+": load the jobs page", 30*time.Second,
			chromedp.Navigate(base+"/login"),
			chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`localStorage.setItem("cronsheet.lang", %q)`, lang)),
			chromedp.Navigate(base+"/jobs?state=pending"),
			chromedp.WaitVisible(css(`body[data-ready="1"]`)),
		)
		// Search: by the callback's words in another case, then by key.
		run(t, ctx, lang+": search REPORT-"+lang, 10*time.Second,
			chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.getElementById("job-q").value = %q`, "REPORT-"+strings.ToUpper(lang))),
			jsClick("#job-q-go"))
		rowsAre("the search finds the report job", report)
		run(t, ctx, lang+": search the key", 10*time.Second,
			chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.getElementById("job-q").value = %q`, "nightly-"+lang)),
			jsClick("#job-q-go"))
		rowsAre("the search finds the keyed job", other)
		run(t, ctx, lang+": clear the search", 10*time.Second, jsClick("#job-q-clear"),
			waitJS(fmt.Sprintf(`["%s", "%s"].every(id => document.getElementById(id))`, report, other)))

		// A dead job's detail: its transitions and its run.
		run(t, ctx, lang+": open the dead job", 20*time.Second,
			jsClick("#tab-dead"),
			waitJS(fmt.Sprintf(`!!document.getElementById(%q)`, dead)),
			jsClick(fmt.Sprintf(`#jobs tr[id=%q] a.job-open`, dead)),
			waitJS(fmt.Sprintf(`!document.getElementById("job-detail").hidden && document.getElementById("jd-id").textContent === %q`, dead)),
			waitJS(`document.querySelectorAll("#jd-events tbody tr").length >= 2 && document.querySelectorAll("#jd-runs tbody tr[data-trigger]").length >= 1`),
		)
		heading := get(t, ctx, lang+": read the runs heading", chromedp.Evaluate[string](`document.querySelector("#job-detail h3:nth-of-type(5)").textContent`))
		if heading != words[lang][1] {
			t.Errorf("%s: the detail's runs heading is %q, want %q", lang, heading, words[lang][1])
		}
		cancelShown := get(t, ctx, lang+": read the actions", chromedp.Evaluate[bool](`!document.getElementById("jd-cancel").hidden`))
		if cancelShown {
			t.Errorf("%s: a dead job's detail offers Cancel", lang)
		}
		axeDetail(t, ctx, lang)
		trigger := get(t, ctx, lang+": read the run", chromedp.Evaluate[string](`document.querySelector("#jd-runs tbody tr[data-trigger]").dataset.trigger`))

		// A pending job's detail: payload with header names only; cancel
		// asks first.
		run(t, ctx, lang+": open the pending job", 20*time.Second,
			jsClick("#jd-close"),
			jsClick("#tab-pending"),
			waitJS(fmt.Sprintf(`!!document.getElementById(%q)`, report)),
			jsClick(fmt.Sprintf(`#jobs tr[id=%q] a.job-open`, report)),
			waitJS(fmt.Sprintf(`!document.getElementById("job-detail").hidden && document.getElementById("jd-id").textContent === %q`, report)),
		)
		payload := get(t, ctx, lang+": read the payload", chromedp.Evaluate[string](`document.getElementById("jd-payload").textContent`))
		if !strings.Contains(payload, "X-Token: ***") || strings.Contains(payload, "secret") || !strings.Contains(payload, "a=1") {
			t.Errorf("%s: the payload reads %q, want the params and the header name only", lang, payload)
		}
		run(t, ctx, lang+": cancel, then No", 10*time.Second,
			jsClick("#jd-cancel"),
			waitJS(`!document.getElementById("jd-confirm").hidden`))
		sure := get(t, ctx, lang+": read the question", chromedp.Evaluate[string](`document.getElementById("jd-sure").textContent`))
		if sure != words[lang][0] {
			t.Errorf("%s: the cancel question is %q, want %q", lang, sure, words[lang][0])
		}
		run(t, ctx, lang+": answer No", 10*time.Second, jsClick("#jd-no"), waitJS(`document.getElementById("jd-confirm").hidden`))
		if st, _ := jobState(t, base, report); st != "pending" {
			t.Fatalf("%s: after No the job is %s, want pending", lang, st)
		}
		run(t, ctx, lang+": cancel, then Yes", 10*time.Second,
			jsClick("#jd-cancel"),
			waitJS(`!document.getElementById("jd-confirm").hidden`),
			jsClick("#jd-yes"),
			waitJS(`document.querySelector("#jd-schedule [data-state]").dataset.state === "cancelled"`))
		if st, _ := jobState(t, base, report); st != "cancelled" {
			t.Errorf("%s: after Yes the job is %s, want cancelled", lang, st)
		}

		// The dead job's run opens on the Runs page.
		run(t, ctx, lang+": reopen the dead job from its URL", 30*time.Second,
			chromedp.Navigate(base+"/jobs?state=dead&job="+dead),
			chromedp.WaitVisible(css(`body[data-ready="1"]`)),
			waitJS(fmt.Sprintf(`!document.getElementById("job-detail").hidden && document.getElementById("jd-id").textContent === %q`, dead)))
		href := get(t, ctx, lang+": read the run's link", chromedp.Evaluate[string](fmt.Sprintf(
			`document.querySelector('#jd-runs tr[data-trigger=%q] a').getAttribute("href")`, trigger)))
		if href != "/runs?trigger_id="+trigger {
			t.Fatalf("%s: the run's link is %q", lang, href)
		}
		run(t, ctx, lang+": open the run", 30*time.Second,
			chromedp.Navigate(base+href),
			chromedp.WaitVisible(css(`body[data-ready="1"]`)),
			waitJS(fmt.Sprintf(`!document.getElementById("run-detail").hidden && document.getElementById("detail-id").textContent === %q`, trigger)),
		)
	}
	for _, p := range console.take() {
		t.Errorf("%s", p)
	}
}

// axeDetail runs axe-core over the jobs page with a job's detail open and
// fails on a serious or critical violation (an unnamed control, contrast).
func axeDetail(t *testing.T, ctx context.Context, lang string) {
	t.Helper()
	if os.Getenv("CI") == "" {
		if _, err := os.Stat("../node_modules/axe-core/axe.min.js"); err != nil {
			t.Logf("%s: axe-core is not installed; the detail's accessibility is not checked", lang)
			return
		}
	}
	axePage(t, ctx, lang+": job detail")
}
