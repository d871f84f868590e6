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

// TestBrowserFailingRow: a row whose last three runs died reads Failing in
// red with its last error written under it (not only in a title), a
// one-shot whose only run died reads Failing, not Done, and the Failing
// chip counts both and keeps only them, in English and 简体中文, with no
// script error.
func TestBrowserFailingRow(t *testing.T) {
	chromium := needBrowser(t)
	var cfg config.Config
	base := startNodeWith(t, func(c *config.Config) { cfg = *c })
	st := openNodeStore(t, cfg)
	for _, r := range []string{
		`{"memo_id":"f-bad","title":"dies","content":"c","when":"daily 03:00","channel":"outbox"}`,
		`{"memo_id":"f-once","title":"once","content":"c","when":"at 2031-05-01 09:00","channel":"outbox"}`,
		`{"memo_id":"f-ok","title":"fine","content":"c","when":"daily 03:00","channel":"outbox"}`,
	} {
		postJSON(t, base, "/api/v1/scenarios/memos/rows", r, http.StatusCreated)
	}
	waitSynced(t, base, "f-bad", "f-once", "f-ok")
	// The dead runs, recorded in the ledger as the scheduler leaves them,
	// with the task's last status each writes (fire.taskStatus).
	dead := func(taskID string, n int, done bool) {
		t.Helper()
		at := time.Now().Add(time.Duration(n-5) * time.Minute).UTC().Truncate(time.Millisecond)
		run := &task.Run{TriggerID: fmt.Sprintf("%s-dead-%d", taskID, n), TaskID: taskID, Slot: at, Target: "outbox",
			TriggerType: task.TriggerSchedule, State: task.RunDead, Attempt: 1, Node: "elsewhere",
			FiredAt: at, FinishedAt: at, Error: fmt.Sprintf("target reported status 500 (#%d)", n)}
		if _, err := st.InsertRun(t.Context(), run); err != nil {
			t.Fatal(err)
		}
		p := store.TaskStatusParams{TaskID: taskID, LastFire: at, LastStatus: string(task.RunDead), Done: done, SetNextFire: done}
		if err := st.SetTaskStatus(t.Context(), p); err != nil {
			t.Fatal(err)
		}
	}
	for n := range 3 {
		dead("f-bad", n, false)
	}
	dead("f-once", 0, true)

	ctx := newBrowser(t, chromium)
	console := listenTab(t, ctx, true)
	words := map[string][3]string{ // the state, the error's lead, the chip
		"en": {"Failing", "Last run failed: ", "Failing"},
		"zh": {"失败中", "最近一次运行失败：", "失败中"},
	}
	for _, lang := range []string{"en", "zh"} {
		w := words[lang]
		run(t, ctx, "set the language", 20*time.Second,
			chromedp.Navigate(base+"/login"),
			chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`localStorage.setItem("cronsheet.lang", %q)`, lang)),
		)
		run(t, ctx, "load the table ("+lang+")", 30*time.Second,
			chromedp.Navigate(base+"/"),
			waitJS(`document.body.dataset.ready === "1" && document.querySelectorAll('#rows tbody tr[id]').length === 3`),
			waitJS(`document.querySelector('#chips .chip[data-value="failing"]').textContent.includes("2")`),
		)
		type cell struct{ State, Class, Why, WhyColour, Colour string }
		read := func(id string) cell {
			return get(t, ctx, "read "+id, chromedp.Evaluate[cell](fmt.Sprintf(`(() => {
				const s = document.querySelector('#rows tbody tr[id=%q] .st'), why = s.parentElement.querySelector('.st-why');
				return {State: s.textContent, Class: s.className, Why: why ? why.textContent : "",
				  WhyColour: why ? getComputedStyle(why).color : "", Colour: getComputedStyle(s).color};
			})()`, id)))
		}
		bad, once, ok := read("f-bad"), read("f-once"), read("f-ok")
		if bad.State != w[0] || bad.Class != "st st-failing" || bad.Why != w[1]+"target reported status 500 (#2)" {
			t.Errorf("%s: f-bad shows %+v, want %q with the newest error inline", lang, bad, w[0])
		}
		if bad.WhyColour != bad.Colour {
			t.Errorf("%s: f-bad's error is %s, its state %s; want both red", lang, bad.WhyColour, bad.Colour)
		}
		if once.State != w[0] || once.Why != w[1]+"target reported status 500 (#0)" {
			t.Errorf("%s: the dead one-shot shows %+v, want %q, not done", lang, once, w[0])
		}
		if ok.Class != "st st-enabled" || ok.Colour == bad.Colour {
			t.Errorf("%s: f-ok shows %+v beside f-bad %+v, want enabled in another colour", lang, ok, bad)
		}
		chip := get(t, ctx, "read the chip", chromedp.Evaluate[string](`document.querySelector('#chips .chip[data-value="failing"]').textContent`))
		if chip != fmt.Sprintf(map[string]string{"en": "%s (2)", "zh": "%s（2）"}[lang], w[2]) {
			t.Errorf("%s: failing chip reads %q", lang, chip)
		}
		run(t, ctx, "press Failing ("+lang+")", 10*time.Second,
			jsClick(`#chips .chip[data-value="failing"]`),
			waitJS(`JSON.stringify([...document.querySelectorAll("#rows tbody tr[id]")].map(tr => tr.id).sort()) === '["f-bad","f-once"]'`),
			jsClick(`#chips .chip[data-value="failing"]`),
			waitJS(`document.querySelectorAll("#rows tbody tr[id]").length === 3`),
		)
	}
	for _, p := range console.take() {
		t.Errorf("%s", p)
	}
	screenshot(t, ctx, "failing-row")
}
