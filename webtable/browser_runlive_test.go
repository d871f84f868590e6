package webtable_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"cronsheet/config"
	"cronsheet/store"
	"cronsheet/task"
)

// TestBrowserRunLive: a run's detail follows the run while it is
// unfinished, without a click: the page says it refreshes, shows the
// output written since it opened, then the final state, and stops
// saying so; in English and 简体中文.
func TestBrowserRunLive(t *testing.T) {
	chromium := needBrowser(t)
	var cfg config.Config
	base := startNodeWith(t, func(c *config.Config) { cfg = *c })
	st := openNodeStore(t, cfg)
	postJSON(t, base, "/api/v1/scenarios/memos/rows",
		`{"memo_id":"lv-1","title":"live","content":"follows","when":"daily 03:00","channel":"outbox"}`, http.StatusCreated)
	waitSynced(t, base, "lv-1")
	ctx := newBrowser(t, chromium)
	for i, lang := range []string{"en", "zh"} {
		// A run this node delivers (its node id, fired after its start: no
		// rescuer takes it), written to by the test as a delivery would.
		now := time.Now().UTC().Truncate(time.Millisecond)
		r := &task.Run{TriggerID: fmt.Sprintf("lv-run-%d", i), TaskID: "lv-1", Slot: now.Add(-time.Duration(i+1) * time.Minute),
			Target: "outbox", TriggerType: task.TriggerManual, State: task.RunRunning, Attempt: 1,
			Node: cfg.NodeID, Fence: 1, FiredAt: now, Deadline: now.Add(time.Hour)}
		if _, err := st.InsertRun(t.Context(), r); err != nil {
			t.Fatal(err)
		}
		liveWord := map[string]string{"en": "read again every 2 s", "zh": "每 2 秒自动刷新"}[lang]
		run(t, ctx, "set the language", 20*time.Second,
			chromedp.Navigate(base+"/login"),
			chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`localStorage.setItem("cronsheet.lang", %q)`, lang)),
		)
		run(t, ctx, "open the running run ("+lang+")", 30*time.Second,
			chromedp.Navigate(base+"/runs?trigger_id="+r.TriggerID),
			waitJS(fmt.Sprintf(`!document.getElementById("run-detail").hidden &&
			  document.querySelector('#detail-fields [data-state="running"]') !== null &&
			  !document.getElementById("detail-live").hidden &&
			  document.getElementById("detail-live").textContent.includes(%q)`, liveWord)),
		)
		// Output arrives while it runs: the open detail shows it.
		r.Output = "half way " + lang
		if err := st.UpdateRun(t.Context(), r); err != nil {
			t.Fatal(err)
		}
		run(t, ctx, "the output written since ("+lang+")", 20*time.Second,
			waitJS(fmt.Sprintf(`document.getElementById("detail-fields").textContent.includes(%q)`, r.Output)))
		// It ends: the detail shows the final state and stops refreshing.
		r.State, r.FinishedAt, r.Deadline, r.Output = task.RunDone, time.Now().UTC(), time.Time{}, "all done "+lang
		if err := st.FinishRun(t.Context(), r, store.TaskStatusParams{TaskID: "lv-1", LastStatus: string(task.RunDone)}); err != nil {
			t.Fatal(err)
		}
		run(t, ctx, "the run ends ("+lang+")", 20*time.Second,
			waitJS(fmt.Sprintf(`document.querySelector('#detail-fields [data-state="done"]') !== null &&
			  document.getElementById("detail-fields").textContent.includes(%q) &&
			  document.getElementById("detail-live").hidden`, r.Output)))
		if errs := get(t, ctx, "console errors", chromedp.Evaluate[[]string](`window.cronsheetErrors`)); len(errs) != 0 {
			t.Errorf("%s: script errors: %v", lang, errs)
		}
	}
}
