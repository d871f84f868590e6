package webtable_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"cronsheet/config"
	"cronsheet/task"
)

// TestBrowserOutcomeStrip: a row run by hand (done, through the outbox)
// and with a dead run in its ledger shows, in the table, a strip of two
// marks coloured by outcome (oldest left) with titles that say it, read
// from the table answer itself (no request per row), in English and
// 简体中文; a row that never ran shows no strip.
func TestBrowserOutcomeStrip(t *testing.T) {
	chromium := needBrowser(t)
	var cfg config.Config
	base := startNodeWith(t, func(c *config.Config) { cfg = *c })
	st := openNodeStore(t, cfg)
	postJSON(t, base, "/api/v1/scenarios/memos/rows",
		`{"memo_id":"oc-1","title":"strip","content":"outcomes","when":"daily 03:00","channel":"outbox"}`, http.StatusCreated)
	postJSON(t, base, "/api/v1/scenarios/memos/rows",
		`{"memo_id":"oc-2","title":"never ran","content":"none","when":"daily 03:00","channel":"outbox"}`, http.StatusCreated)
	waitSynced(t, base, "oc-1", "oc-2")
	// The dead run: recorded in the ledger as a failed delivery leaves it,
	// an hour before the manual run below.
	dead := &task.Run{TriggerID: "oc-dead-1", TaskID: "oc-1", Slot: time.Now().Add(-time.Hour).UTC(), Target: "outbox",
		TriggerType: task.TriggerSchedule, State: task.RunDead, Attempt: 1, Node: "elsewhere",
		FiredAt: time.Now().Add(-time.Hour).UTC(), FinishedAt: time.Now().Add(-time.Hour).UTC(), Error: "connection refused"}
	if _, err := st.InsertRun(t.Context(), dead); err != nil {
		t.Fatal(err)
	}
	postJSON(t, base, "/api/v1/tasks/oc-1/trigger", `{}`, http.StatusAccepted)
	deadline := time.Now().Add(20 * time.Second)
	for {
		var runs struct{ Runs []struct{ State string } }
		getDoc(t, base+"/api/v1/runs?task_id=oc-1", &runs)
		if len(runs.Runs) == 2 && runs.Runs[0].State == "done" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("runs of oc-1 = %+v, want the manual run done beside the dead one", runs.Runs)
		}
		time.Sleep(100 * time.Millisecond)
	}

	ctx := newBrowser(t, chromium)
	requests := listenRequests(t, ctx)
	for _, lang := range []string{"en", "zh"} {
		run(t, ctx, "set the language", 20*time.Second,
			chromedp.Navigate(base+"/login"),
			chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`localStorage.setItem("cronsheet.lang", %q)`, lang)),
		)
		run(t, ctx, "load the table ("+lang+")", 30*time.Second,
			chromedp.Navigate(base+"/"),
			waitJS(`document.body.dataset.ready === "1" && document.querySelectorAll('#rows tbody tr[id="oc-1"] .oc-strip .oc').length === 2`),
		)
		marks := get(t, ctx, "read the strip", chromedp.Evaluate[[]map[string]string](
			`[...document.querySelectorAll('#rows tbody tr[id="oc-1"] .oc-strip .oc')].map(m => ({state: m.dataset.state, cls: m.className,
			  title: m.title, colour: getComputedStyle(m).backgroundColor}))`))
		if len(marks) != 2 {
			t.Fatalf("%s: %d marks, want 2", lang, len(marks))
		}
		deadWord, doneWord := map[string]string{"en": "dead", "zh": "失败"}[lang], map[string]string{"en": "done", "zh": "成功"}[lang]
		if marks[0]["state"] != "dead" || !strings.Contains(marks[0]["cls"], "oc-bad") ||
			!strings.HasPrefix(marks[0]["title"], deadWord+" · ") || !strings.HasSuffix(marks[0]["title"], " · connection refused") {
			t.Errorf("%s: first (oldest) mark = %v, want the dead run titled %q … connection refused", lang, marks[0], deadWord)
		}
		if marks[1]["state"] != "done" || !strings.Contains(marks[1]["cls"], "oc-ok") || !strings.HasPrefix(marks[1]["title"], doneWord+" · ") {
			t.Errorf("%s: second mark = %v, want the done run titled %q", lang, marks[1], doneWord)
		}
		// The last outcome's word is the page's language's too.
		if last := get(t, ctx, "read the last status", chromedp.Evaluate[string](
			`document.querySelector('#rows tbody tr[id="oc-1"] .last-ok[data-state="done"]').textContent`)); last != doneWord {
			t.Errorf("%s: last status reads %q, want %q", lang, last, doneWord)
		}
		if marks[0]["colour"] == marks[1]["colour"] || marks[0]["colour"] == "rgba(0, 0, 0, 0)" {
			t.Errorf("%s: marks coloured %q and %q, want two different colours", lang, marks[0]["colour"], marks[1]["colour"])
		}
		if n := get(t, ctx, "read the other row", chromedp.Evaluate[int](`document.querySelectorAll('#rows tbody tr[id="oc-2"] .oc').length`)); n != 0 {
			t.Errorf("%s: a row that never ran shows %d marks", lang, n)
		}
		if errs := get(t, ctx, "read script errors", chromedp.Evaluate[string](`JSON.stringify(window.cronsheetErrors)`)); errs != "[]" {
			t.Errorf("%s: script errors: %s", lang, errs)
		}
	}
	if per := requests.matching("/api/v1/runs"); len(per) != 0 {
		t.Errorf("the table asked for runs per row: %v", per)
	}
	screenshot(t, ctx, "outcome-strip")
}
