package webtable_test

import (
	"cronsheet/config"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// startFlowNode runs a node for the flows page, allowed to call back to
// the test's loopback hook.
func startFlowNode(t *testing.T) string {
	t.Helper()
	return startNodeWith(t, func(c *config.Config) {
		c.NodeID = "browser-flows"
		c.HTTP.Allow = []string{"127.0.0.0/8"}
	})
}

// TestBrowserFlows builds a two-step flow in the editor, triggers it and
// watches the execution reach success on the graph, in English and in
// 简体中文, with no console error.
func TestBrowserFlows(t *testing.T) {
	chromium := needBrowser(t)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(hook.Close)
	base := startFlowNode(t)
	body := `{"id":"hook","name":"Web hook","kind":"http","state":"running","http":{"method":"POST","url":"` + hook.URL + `/step"}}`
	resp, err := http.Post(base+"/api/v1/targets", "application/json", strings.NewReader(body))
	if err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("create target: %v %v", resp, err)
	}
	resp.Body.Close()

	ctx := newBrowser(t, chromium)
	errs := listenConsole(t, ctx)

	for _, lang := range []struct{ code, id, success string }{{"en", "two-en", "success"}, {"zh", "two-zh", "成功"}} {
		run(t, ctx, "load the flows page ("+lang.code+")", 30*time.Second,
			chromedp.Navigate(base+"/flows"),
			chromedp.Evaluate[chromedp.Void](`localStorage.setItem("cronsheet.lang", "`+lang.code+`")`),
			chromedp.Navigate(base+"/flows"),
			chromedp.WaitVisible(css(`body[data-ready="1"]`)),
		)
		run(t, ctx, "build a two-step flow ("+lang.code+")", 30*time.Second,
			chromedp.SendKeys(css(`#flow-form input[name="id"]`), lang.id),
			chromedp.SendKeys(css(`#steps tr:nth-child(1) input.s-id`), "a"),
			// The target is picked by its name; the next step and the
			// start from the steps the table holds.
			waitJS(`[...document.querySelectorAll('#steps tr:nth-child(1) select.s-targets option')].some((o) => o.value === "hook" && o.textContent === "Web hook (hook)")`),
			pick(`#steps tr:nth-child(1) select.s-targets`, "hook"),
			jsClick(`#step-add`),
			chromedp.WaitVisible(css(`#steps tr:nth-child(2) input.s-id`)),
			chromedp.SendKeys(css(`#steps tr:nth-child(2) input.s-id`), "b"),
			waitJS(`[...document.querySelectorAll('#steps tr:nth-child(1) select.s-on-success option')].map((o) => o.value).join() === "a,b"`),
			pick(`#steps tr:nth-child(1) select.s-on-success`, "b"),
			pick(`#flow-form select[name="start"]`, "a"),
			pick(`#steps tr:nth-child(2) select.s-targets`, "hook"),
			waitJS(`document.querySelectorAll('#flow-graph path.edge-success[data-from="a"][data-to="b"]').length === 1`),
			chromedp.SendKeys(css(`#flow-form input[name="schedule"]`), "every 1h"),
			chromedp.Click(css(`#flow-save`)),
			waitJS(`document.getElementById("flow-version").textContent === "`+lang.id+` v1"`),
			waitJS(`document.querySelector('#flow-list a[data-id="`+lang.id+`"]') !== null`),
			waitJS(`document.querySelector('#flow-list a[data-id="`+lang.id+`"] + .f-state.f-idle') !== null`),
		)
		// The schedule went with the flow, and a second save through the
		// form keeps it (a PUT replaces the flow).
		run(t, ctx, "save again ("+lang.code+")", 30*time.Second,
			waitJS(`document.querySelector('#flow-form input[name="schedule"]').value === "every 1h"`),
			chromedp.Click(css(`#flow-save`)),
			waitJS(`document.getElementById("flow-version").textContent === "`+lang.id+` v2"`),
		)
		var saved struct {
			Schedule string `json:"schedule"`
			State    string `json:"state"`
		}
		getDoc(t, base+"/api/v1/flows/"+lang.id, &saved)
		if saved.Schedule != "every 1h" || saved.State != "idle" {
			t.Errorf("flow %s after two saves: schedule %q state %q, want every 1h and idle", lang.id, saved.Schedule, saved.State)
		}
		run(t, ctx, "trigger and watch the execution ("+lang.code+")", 60*time.Second,
			jsClick(`#flow-trigger`),
			chromedp.WaitVisible(css(`#exec-detail`)),
			waitJS(`document.getElementById("exec-state").className === "x-success"`),
			waitJS(`document.querySelectorAll("#flow-graph g.step.run-success").length === 2`),
			waitJS(`document.getElementById("exec-state").textContent === "`+lang.success+`"`),
		)
		// A loaded flow shows its choices in the pickers.
		run(t, ctx, "the pickers show the saved flow ("+lang.code+")", 30*time.Second,
			waitJS(`document.querySelector('#flow-form select[name="start"]').value === "a"`),
			waitJS(`[...document.querySelector('#steps tr:nth-child(1) select.s-on-success').selectedOptions].map((o) => o.value).join() === "b"`),
			waitJS(`[...document.querySelector('#steps tr:nth-child(2) select.s-targets').selectedOptions].map((o) => o.value).join() === "hook"`),
		)
		screenshot(t, ctx, "flows-"+lang.code)
	}
	if got := get(t, ctx, "read the nav", chromedp.Evaluate[string](`document.querySelector('nav a[href="/flows"]').textContent`)); got != "任务流" {
		t.Errorf("nav in Chinese = %q, want 任务流", got)
	}
	if got := get(t, ctx, "read script errors", chromedp.Evaluate[string](`JSON.stringify(window.cronsheetErrors)`)); got != "[]" {
		t.Errorf("script errors: %s", got)
	}
	if msgs := errs.take(); len(msgs) > 0 {
		t.Errorf("console errors: %q", msgs)
	}
}

// pick chooses the options of values in the select matching sel (and
// only those), as soon as they are offered, and tells the page.
func pick(sel string, values ...string) chromedp.Action[chromedp.Void] {
	want, _ := json.Marshal(values)
	return chromedp.Poll[chromedp.Void](fmt.Sprintf(`(() => {
		const s = document.querySelector(%q), want = %s;
		if (!s || !want.every((v) => [...s.options].some((o) => o.value === v))) return false;
		for (const o of s.options) o.selected = want.includes(o.value);
		if (!s.multiple) s.value = want[0];
		s.dispatchEvent(new Event("change", { bubbles: true }));
		return true;
	})()`, sel, want), chromedp.WithPollingInterval(50*time.Millisecond))
}

// TestBrowserFlowsWarn: beside a step whose target cannot work the editor
// says why — an email target with no recipient in the step's params, a
// paused target — and the warning goes once the step is fixed; a save of
// the recipient-less step is refused by the server naming
// steps[0].params.to. In English and 简体中文, with no console error but
// that refusal.
func TestBrowserFlowsWarn(t *testing.T) {
	chromium := needBrowser(t)
	base := startFlowNode(t)
	for _, body := range []string{`{"id":"mail","name":"Ops mail","kind":"email","state":"running"}`,
		`{"id":"held","kind":"http","state":"paused","http":{"method":"POST","url":"http://127.0.0.1:9/x"}}`} {
		postJSON(t, base, "/api/v1/targets", body, http.StatusCreated)
	}
	ctx := newBrowser(t, chromium)
	errs := listenConsole(t, ctx)
	for _, lang := range []struct{ code, noTo, paused string }{{"en", "no recipient", "is paused"}, {"zh", "没有收件人", "已暂停"}} {
		warn := `document.querySelector('#steps tr:nth-child(1) .s-warn')`
		run(t, ctx, "load the flows page ("+lang.code+")", 30*time.Second,
			chromedp.Navigate(base+"/flows"),
			chromedp.Evaluate[chromedp.Void](`localStorage.setItem("cronsheet.lang", "`+lang.code+`")`),
			chromedp.Navigate(base+"/flows"),
			chromedp.WaitVisible(css(`body[data-ready="1"]`)),
			chromedp.SendKeys(css(`#flow-form input[name="id"]`), "w-"+lang.code),
			chromedp.SendKeys(css(`#steps tr:nth-child(1) input.s-id`), "a"),
			pick(`#flow-form select[name="start"]`, "a"),
			waitJS(warn+`.hidden`),
			pick(`#steps tr:nth-child(1) select.s-targets`, "mail"),
			waitJS(`!`+warn+`.hidden && `+warn+`.textContent.includes("Ops mail (mail)") && `+warn+`.textContent.includes("`+lang.noTo+`")`),
		)
		run(t, ctx, "save the step with no recipient ("+lang.code+")", 30*time.Second,
			chromedp.Click(css(`#flow-save`)),
			waitJS(`document.getElementById("flow-error").textContent.includes("steps[0].params.to")`),
		)
		for _, e := range errs.take() {
			if !strings.Contains(e, "/api/v1/flows") || !strings.Contains(e, "400") {
				t.Errorf("console error (%s): %s", lang.code, e)
			}
		}
		run(t, ctx, "give a recipient, then pick a paused target ("+lang.code+")", 30*time.Second,
			chromedp.SendKeys(css(`#steps tr:nth-child(1) input.s-params`), "to=ops@example.com"),
			waitJS(warn+`.hidden`),
			pick(`#steps tr:nth-child(1) select.s-targets`, "mail", "held"),
			waitJS(`!`+warn+`.hidden && `+warn+`.textContent.includes("held") && `+warn+`.textContent.includes("`+lang.paused+`") && !`+
				warn+`.textContent.includes("`+lang.noTo+`")`),
			chromedp.Click(css(`#flow-save`)),
			waitJS(`document.getElementById("flow-version").textContent === "w-`+lang.code+` v1"`),
			// The warning stays on the saved flow: the target is still paused.
			waitJS(`!`+warn+`.hidden && `+warn+`.textContent.includes("`+lang.paused+`")`),
		)
		screenshot(t, ctx, "flows-warn-"+lang.code)
	}
	if got := get(t, ctx, "read script errors", chromedp.Evaluate[string](`JSON.stringify(window.cronsheetErrors)`)); got != "[]" {
		t.Errorf("script errors: %s", got)
	}
	if msgs := errs.take(); len(msgs) > 0 {
		t.Errorf("console errors: %q", msgs)
	}
}
