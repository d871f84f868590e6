package webtable_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// startHook is a local HTTP hook: /ok answers 200, /fail 500.
func startHook(t *testing.T) string {
	t.Helper()
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/fail") {
			http.Error(w, "hook says no", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(hook.Close)
	return hook.URL
}

// fireStatsDoc is GET /api/v1/stats/fires's answer.
type fireStatsDoc struct {
	Buckets []struct {
		Start    time.Time `json:"start"`
		Fires    int       `json:"fires"`
		Failures int       `json:"failures"`
		LagP99MS int64     `json:"lag_p99_ms"`
	} `json:"buckets"`
	Runs      int  `json:"runs"`
	Truncated bool `json:"truncated"`
}

func (d fireStatsDoc) totals() (fires, failures int) {
	for _, b := range d.Buckets {
		fires += b.Fires
		failures += b.Failures
	}
	return fires, failures
}

// getStatus is GET url's status and the field its error names.
func getStatus(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	var e struct{ Field string }
	_ = json.NewDecoder(resp.Body).Decode(&e)
	return resp.StatusCode, e.Field
}

// TestBrowserStatusCharts fires jobs at a local hook (three answered, two
// refused for good) on a real node, then checks GET /api/v1/stats/fires
// against them (and the runs ledger), its bounds (400 naming the field),
// and the status page's charts in English and 简体中文: uPlot's canvases
// drawn and the totals the page read equal to the seeded fires.
func TestBrowserStatusCharts(t *testing.T) {
	chromium := needBrowser(t)
	base := startNodeWith(t, allowLoopback)
	hook := startHook(t)
	var ok, bad []string
	for i := range 3 {
		ok = append(ok, submitJob(t, base, fmt.Sprintf(`{"method":"GET","name":"%s/ok/%d","delay":0,"max_retries":0}`, hook, i)))
	}
	for i := range 2 {
		bad = append(bad, submitJob(t, base, fmt.Sprintf(`{"method":"GET","name":"%s/fail/%d","delay":0,"max_retries":0}`, hook, i)))
	}
	waitJobs(t, base, "done", ok...)
	waitJobs(t, base, "dead", bad...)

	var runs struct {
		Runs []struct{ State string } `json:"runs"`
	}
	getDoc(t, base+"/api/v1/runs?limit=100", &runs)
	ledgerFires, ledgerFailed := 0, 0
	for _, r := range runs.Runs {
		if r.State != "skipped" && r.State != "rejected" {
			ledgerFires++
		}
		if r.State == "dead" || r.State == "failed" || r.State == "timeout" {
			ledgerFailed++
		}
	}
	if ledgerFires != 5 || ledgerFailed != 2 {
		t.Fatalf("the ledger holds %d fires, %d failed (%+v), want the 5 seeded, 2 failed", ledgerFires, ledgerFailed, runs.Runs)
	}
	for _, q := range []string{"window=1h&bucket=1m", "window=24h&bucket=5m", "window=7d&bucket=1h", ""} {
		var st fireStatsDoc
		getDoc(t, base+"/api/v1/stats/fires?"+q, &st)
		fires, failures := st.totals()
		if fires != 5 || failures != 2 || st.Truncated {
			t.Errorf("stats ?%s: %d fires, %d failures (truncated %v), want 5 and 2", q, fires, failures, st.Truncated)
		}
	}
	var st fireStatsDoc
	getDoc(t, base+"/api/v1/stats/fires?window=24h&bucket=5m", &st)
	if len(st.Buckets) != 288 {
		t.Errorf("24h in 5m buckets: %d buckets, want 288", len(st.Buckets))
	}
	if newest := st.Buckets[len(st.Buckets)-1]; newest.Fires != 5 && st.Buckets[len(st.Buckets)-2].Fires+newest.Fires != 5 {
		t.Errorf("the seeded fires are not in the newest buckets: %+v", st.Buckets[len(st.Buckets)-3:])
	}
	for _, c := range []struct{ q, field string }{
		{"window=8d", "window"}, {"window=banana", "window"}, {"window=24h&bucket=1m", "bucket"},
		{"window=1h&bucket=500ms", "bucket"}, {"window=1h&bucket=2h", "bucket"},
	} {
		if code, field := getStatus(t, base+"/api/v1/stats/fires?"+c.q); code != http.StatusBadRequest || field != c.field {
			t.Errorf("stats ?%s: %d naming %q, want 400 naming %q", c.q, code, field, c.field)
		}
	}

	ctx := newBrowser(t, chromium)
	problems := listenTab(t, ctx, true)
	for _, lang := range []string{"en", "zh"} {
		run(t, ctx, "set the language", 20*time.Second,
			chromedp.Navigate(base+"/login"),
			chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`localStorage.setItem("cronsheet.lang", %q)`, lang)),
		)
		problems.take()
		run(t, ctx, "load the status page ("+lang+")", 30*time.Second,
			chromedp.Navigate(base+"/status"),
			waitJS(`document.body.dataset.ready === "1" && Number(document.body.dataset.stats || 0) >= 1`),
		)
		for _, c := range []struct{ name, expr, want string }{
			{"fires chart", `String(document.querySelectorAll("#fires-chart canvas").length)`, "1"},
			{"lag chart", `String(document.querySelectorAll("#lag-chart canvas").length)`, "1"},
			{"fires drawn", `String(window.cronsheet.stats().buckets.reduce((n, b) => n + b.fires, 0))`, "5"},
			{"fires shown", `document.getElementById("stats-totals").dataset.fires`, "5"},
			{"failures shown", `document.getElementById("stats-totals").dataset.failures`, "2"},
		} {
			if got := get(t, ctx, "read "+c.name, chromedp.Evaluate[string](c.expr)); got != c.want {
				t.Errorf("%s: %s = %q, want %q", lang, c.name, got, c.want)
			}
		}
		wantText := map[string]string{"en": "5 fires, 2 failed, in the last 24 h.", "zh": "最近 24 小时 内触发 5 次，失败 2 次。"}[lang]
		if got := get(t, ctx, "read the totals", chromedp.Evaluate[string](textOf("stats-totals"))); got != wantText {
			t.Errorf("%s: totals %q, want %q", lang, got, wantText)
		}
		// Another window asks again and draws again.
		run(t, ctx, "pick the 7-day window", 20*time.Second,
			setSelect("#stats-window", "7d"),
			waitJS(`Number(document.body.dataset.stats) >= 2`),
		)
		if got := get(t, ctx, "read the 7-day buckets", chromedp.Evaluate[int](`window.cronsheet.stats().buckets.length`)); got != 168 {
			t.Errorf("%s: 7-day window has %d buckets, want 168", lang, got)
		}
		if errs := get(t, ctx, "read script errors", chromedp.Evaluate[string](`JSON.stringify(window.cronsheetErrors)`)); errs != "[]" {
			t.Errorf("%s: script errors: %s", lang, errs)
		}
		for _, p := range problems.take() {
			t.Errorf("%s: %s", lang, p)
		}
		screenshot(t, ctx, "status-charts-"+lang)
	}
}

// TestBrowserTimeline: three rows due in 1 h, 5 h and 30 h; the status
// page's 24-hour timeline (GET /api/v1/stats/upcoming) lists the first two
// in their hours and not the third.
func TestBrowserTimeline(t *testing.T) {
	chromium := needBrowser(t)
	base := startNode(t)
	for _, h := range []int{1, 5, 30} {
		postJSON(t, base, "/api/v1/scenarios/memos/rows",
			fmt.Sprintf(`{"memo_id":"tl-%d","title":"in %dh","content":"timeline","when":"in %dh","to":"ops@example.com"}`, h, h, h),
			http.StatusCreated)
	}
	waitSynced(t, base, "tl-1", "tl-5", "tl-30")
	var up struct {
		Fires []struct {
			TaskID   string    `json:"task_id"`
			NextFire time.Time `json:"next_fire"`
		} `json:"fires"`
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		getDoc(t, base+"/api/v1/stats/upcoming?within=24h", &up)
		if len(up.Fires) >= 2 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	var ids []string
	for _, f := range up.Fires {
		ids = append(ids, f.TaskID)
	}
	if strings.Join(ids, ",") != "tl-1,tl-5" {
		t.Fatalf("upcoming within 24h = %v, want tl-1,tl-5", ids)
	}
	if d := time.Until(up.Fires[1].NextFire); d < 4*time.Hour || d > 5*time.Hour+time.Minute {
		t.Errorf("tl-5 fires in %s, want about 5h", d)
	}
	if code, field := getStatus(t, base+"/api/v1/stats/upcoming?within=30d"); code != http.StatusBadRequest || field != "within" {
		t.Errorf("within=30d: %d naming %q, want 400 naming within", code, field)
	}
	if code, field := getStatus(t, base+"/api/v1/stats/upcoming?limit=501"); code != http.StatusBadRequest || field != "limit" {
		t.Errorf("limit=501: %d naming %q, want 400 naming limit", code, field)
	}
	// tl-30 is armed by the same patrol passes as the others, possibly a
	// pass later than the two seen above (on FerretDB it can be): wait for
	// it.
	var all struct{ Fires []json.RawMessage }
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		getDoc(t, base+"/api/v1/stats/upcoming?within=48h", &all)
		if len(all.Fires) >= 3 || time.Now().After(deadline) {
			break
		}
	}
	if len(all.Fires) != 3 {
		t.Errorf("within 48h: %d fires, want 3", len(all.Fires))
	}

	ctx := newBrowser(t, chromium)
	for _, lang := range []string{"en", "zh"} {
		run(t, ctx, "set the language", 20*time.Second,
			chromedp.Navigate(base+"/login"),
			chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`localStorage.setItem("cronsheet.lang", %q)`, lang)),
		)
		run(t, ctx, "load the status page ("+lang+")", 30*time.Second,
			chromedp.Navigate(base+"/status"),
			waitJS(`document.body.dataset.ready === "1" && Number(document.body.dataset.timeline || 0) >= 1`),
		)
		got := get(t, ctx, "read the timeline", chromedp.Evaluate[string](
			`[...document.querySelectorAll("#timeline li[data-hour]")].map(li => [...li.querySelectorAll("a.tl-item")].map(a => a.dataset.task).join("+")).join(",")`))
		if got != "tl-1,tl-5" {
			t.Errorf("%s: timeline hours hold %q, want tl-1,tl-5 (one hour each)", lang, got)
		}
		if got := get(t, ctx, "read the count", chromedp.Evaluate[string](textOf("timeline-count"))); got != "(2)" {
			t.Errorf("%s: timeline count %q, want (2)", lang, got)
		}
		if errs := get(t, ctx, "read script errors", chromedp.Evaluate[string](`JSON.stringify(window.cronsheetErrors)`)); errs != "[]" {
			t.Errorf("%s: script errors: %s", lang, errs)
		}
	}
}
