package webtable_test

import (
	"cronsheet/config"
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
	body := `{"id":"hook","kind":"http","state":"running","http":{"method":"POST","url":"` + hook.URL + `/step"}}`
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
			chromedp.SendKeys(css(`#flow-form input[name="start"]`), "a"),
			chromedp.SendKeys(css(`#steps tr:nth-child(1) input.s-id`), "a"),
			chromedp.SendKeys(css(`#steps tr:nth-child(1) input.s-targets`), "hook"),
			chromedp.SendKeys(css(`#steps tr:nth-child(1) input.s-on-success`), "b"),
			jsClick(`#step-add`),
			chromedp.WaitVisible(css(`#steps tr:nth-child(2) input.s-id`)),
			chromedp.SendKeys(css(`#steps tr:nth-child(2) input.s-id`), "b"),
			chromedp.SendKeys(css(`#steps tr:nth-child(2) input.s-targets`), "hook"),
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
