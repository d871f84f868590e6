package webtable_test

import (
	"bufio"
	"cronsheet/config"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// submitJob posts a job and returns its id.
func submitJob(t *testing.T, base, body string) string {
	t.Helper()
	resp, err := http.Post(base+"/api/v1/jobs", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST /api/v1/jobs: %v", err)
	}
	defer resp.Body.Close()
	var v struct {
		ID    string `json:"id"`
		Error string `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("POST /api/v1/jobs %s: %d %s %v", body, resp.StatusCode, v.Error, err)
	}
	return v.ID
}

// jobState is a job's state through the API.
func jobState(t *testing.T, base, id string) (state string, runs int) {
	t.Helper()
	var v struct {
		State string            `json:"state"`
		Runs  []json.RawMessage `json:"runs"`
	}
	getDoc(t, base+"/api/v1/jobs/"+id, &v)
	return v.State, len(v.Runs)
}

// waitJobs waits, through the API, until each job is in state.
func waitJobs(t *testing.T, base, state string, ids ...string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for _, id := range ids {
		for {
			st, _ := jobState(t, base, id)
			if st == state {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("job %s is %s, not %s, after 20s", id, st, state)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}

// deadJob is a job that fails for good at once: nothing listens on port 9
// and it has no retry.
const deadJob = `{"method":"GET","name":"http://127.0.0.1:9/gone","delay":0,"max_retries":0}`

// allowLoopback lets jobs call 127.0.0.1.
func allowLoopback(cfg *config.Config) { cfg.HTTP.Allow = []string{"127.0.0.0/8"} }

// TestBrowserJobs works the jobs page: its tabs count each state's jobs,
// and the bulk actions change the ticked jobs through the jobs API (block,
// unblock, cancel, retry, backfill), each seen through the API; block,
// cancel and backfill ask first (No leaves the job as it was); the dead
// letters export is linked.
func TestBrowserJobs(t *testing.T) {
	chromium := needBrowser(t)
	base := startNodeWith(t, allowLoopback)
	d1, d2 := submitJob(t, base, deadJob), submitJob(t, base, deadJob)
	later := `{"method":"GET","name":"http://127.0.0.1:9/later","delay":3600}`
	p1, p2 := submitJob(t, base, later), submitJob(t, base, later)
	waitJobs(t, base, "dead", d1, d2)

	ctx := newBrowser(t, chromium)
	console := listenTab(t, ctx, true)
	run(t, ctx, "load the jobs page", 30*time.Second,
		chromedp.Navigate(base+"/jobs?state=pending"),
		chromedp.WaitVisible(css(`body[data-ready="1"]`)),
	)
	tabs := func(want string) {
		t.Helper()
		run(t, ctx, "see the tabs "+want, 10*time.Second, waitJS(fmt.Sprintf(
			`[...document.querySelectorAll("#job-tabs [role=tab]")].map(b => b.textContent).join(" ") === %q`, want)))
	}
	tabs("pending (2) blocked (0) running (0) backfilling (0) failed (0) done (0) dead (2) cancelled (0)")
	rows := func(ids ...string) {
		t.Helper()
		want, _ := json.Marshal(ids)
		run(t, ctx, "see the jobs "+string(want), 10*time.Second, waitJS(fmt.Sprintf(
			`JSON.stringify([...document.querySelectorAll("#jobs tbody tr[id]")].map(tr => tr.id).sort()) === JSON.stringify(%s.sort())`, want)))
	}
	rows(p1, p2)
	tick := func(id string) {
		t.Helper()
		run(t, ctx, "tick "+id, 10*time.Second, jsClick(fmt.Sprintf(`#jobs tr[id=%q] input.job-sel`, id)))
	}
	act := func(button, wantNotice string) {
		t.Helper()
		steps := []chromedp.Action[chromedp.Void]{jsClick("#" + button)}
		if button == "job-block" || button == "job-cancel" || button == "job-backfill" {
			// These ask first: the job changes only on Yes.
			steps = append(steps, waitJS(`!document.getElementById("job-confirm").hidden`), jsClick("#job-yes"))
		}
		steps = append(steps, waitJS(fmt.Sprintf(`document.getElementById("notice").textContent.startsWith(%q)`, wantNotice)))
		run(t, ctx, "click "+button, 10*time.Second, steps...)
	}

	tick(p1)
	act("job-block", "Block: 1 done, 0 failed.")
	if st, _ := jobState(t, base, p1); st != "blocked" {
		t.Fatalf("blocked job %s is %s", p1, st)
	}
	tabs("pending (1) blocked (1) running (0) backfilling (0) failed (0) done (0) dead (2) cancelled (0)")
	run(t, ctx, "open the blocked tab", 10*time.Second, jsClick("#tab-blocked"))
	rows(p1)
	run(t, ctx, "tick every job shown", 10*time.Second, jsClick("#job-all"))
	act("job-unblock", "Unblock: 1 done, 0 failed.")
	waitJobs(t, base, "pending", p1)

	run(t, ctx, "open the pending tab", 10*time.Second, jsClick("#tab-pending"))
	rows(p1, p2)
	tick(p2)
	run(t, ctx, "cancel, then No", 10*time.Second,
		jsClick("#job-cancel"),
		waitJS(`document.getElementById("job-sure").textContent === "Cancel the selected jobs (1)? They will not run."`),
		jsClick("#job-no"),
		waitJS(`document.getElementById("job-confirm").hidden`))
	if st, _ := jobState(t, base, p2); st != "pending" {
		t.Fatalf("after No the job %s is %s, want pending", p2, st)
	}
	act("job-cancel", "Cancel: 1 done, 0 failed.")
	waitJobs(t, base, "cancelled", p2)
	tabs("pending (1) blocked (0) running (0) backfilling (0) failed (0) done (0) dead (2) cancelled (1)")

	run(t, ctx, "open the dead tab", 10*time.Second, jsClick("#tab-dead"))
	rows(d1, d2)
	href := get(t, ctx, "read the export link", chromedp.Evaluate[string](
		`(() => { const a = document.getElementById("job-export"); return a.hidden ? "hidden" : a.getAttribute("href"); })()`))
	if href != "/api/v1/jobs/dead.jsonl" {
		t.Fatalf("the dead letters link is %q", href)
	}
	resp, err := http.Get(base + href)
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	for sc := bufio.NewScanner(resp.Body); sc.Scan(); {
		lines++
	}
	resp.Body.Close()
	if lines != 2 {
		t.Errorf("the dead letters export has %d lines, want 2", lines)
	}

	_, before := jobState(t, base, d1)
	tick(d1)
	act("job-retry", "Retry: 1 done, 0 failed.")
	deadline := time.Now().Add(20 * time.Second)
	for {
		st, n := jobState(t, base, d1)
		if n > before && st == "dead" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("retried job %s: %s with %d runs (had %d)", d1, st, n, before)
		}
		time.Sleep(100 * time.Millisecond)
	}

	_, before = jobState(t, base, p2)
	run(t, ctx, "open the cancelled tab", 10*time.Second, jsClick("#tab-cancelled"))
	rows(p2)
	act("job-backfill", "Backfill all: 1 done, 0 failed.")
	// The backfill's run is seen as a new run of the job. (Its state stays
	// cancelled: the jobs service takes the run of the latest slot as the
	// newest, and the cancelled run's slot is an hour ahead.)
	deadline = time.Now().Add(20 * time.Second)
	for {
		if _, n := jobState(t, base, p2); n > before {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the backfilled job %s has no new run", p2)
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, p := range console.take() {
		t.Errorf("%s", p)
	}
}

// TestBrowserJobsLateAnswer: an answer that comes back after a later
// request's (a slow store) does not replace what that request showed. The
// blocked list is made slow in the page; leaving its tab for the pending
// one before it answers must leave the pending jobs shown: each list shows
// only its latest answer, so the late empty blocked list cannot replace
// them with "No jobs in this state".
func TestBrowserJobsLateAnswer(t *testing.T) {
	chromium := needBrowser(t)
	base := startNodeWith(t, allowLoopback)
	later := `{"method":"GET","name":"http://127.0.0.1:9/later","delay":3600}`
	p1, p2 := submitJob(t, base, later), submitJob(t, base, later)
	ctx := newBrowser(t, chromium)
	console := listenTab(t, ctx, true)
	for _, lang := range []string{"en", "zh"} {
		run(t, ctx, "load the jobs page ("+lang+")", 30*time.Second,
			chromedp.Navigate(base+"/login"),
			chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`localStorage.setItem("cronsheet.lang", %q)`, lang)),
			chromedp.Navigate(base+"/jobs?state=pending"),
			chromedp.WaitVisible(css(`body[data-ready="1"]`)),
			waitJS(`document.querySelectorAll("#jobs tbody tr[id]").length === 2`),
			// The blocked list (not its tab's count) answers 1.5 s late.
			chromedp.Evaluate[chromedp.Void](`(() => { const f = window.fetch;
			  window.fetch = (u, o) => f(u, o).then(r => String(u).includes("state=blocked&limit=50")
			    ? new Promise(ok => setTimeout(() => ok(r), 1500)) : r); })()`),
			jsClick("#tab-blocked"),
			jsClick("#tab-pending"),
			waitJS(`document.querySelectorAll("#jobs tbody tr[id]").length === 2`),
			chromedp.Sleep(2500*time.Millisecond), // the blocked answer has come by now
		)
		ids := get(t, ctx, "read the rows", chromedp.Evaluate[[]string](
			`[...document.querySelectorAll("#jobs tbody tr[id]")].map(tr => tr.id).sort()`))
		want := []string{p1, p2}
		slices.Sort(want)
		if !slices.Equal(ids, want) {
			t.Errorf("%s: after the late blocked answer the pending tab shows %v, want %v", lang, ids, want)
		}
		if sel := get(t, ctx, "read the tab", chromedp.Evaluate[string](`document.querySelector("#job-tabs [aria-selected=true]").dataset.state`)); sel != "pending" {
			t.Errorf("%s: selected tab %q, want pending", lang, sel)
		}
	}
	for _, p := range console.take() {
		t.Errorf("%s", p)
	}
}
