package webtable_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// emulateScheme makes Chromium report prefers-color-scheme as scheme.
func emulateScheme(t *testing.T, ctx context.Context, scheme string) {
	t.Helper()
	_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}}})
	if err != nil {
		t.Fatalf("emulate prefers-color-scheme: %s: %v", scheme, err)
	}
}

// TestBrowserDarkMode loads pages with the system preferring dark and then
// light colours (Chromium's media emulation) and reads the computed
// background and text colours: dark follows prefers-color-scheme, and the
// table's html carries DataTables' dark class.
func TestBrowserDarkMode(t *testing.T) {
	chromium := needBrowser(t)
	base := startNode(t)
	ctx := newBrowser(t, chromium)
	console := listenConsole(t, ctx)
	type look struct {
		Bg   string `json:"bg"`
		Fg   string `json:"fg"`
		Dark bool   `json:"dark"`
	}
	for _, tc := range []struct {
		scheme string
		want   look
	}{
		{"dark", look{Bg: "rgb(22, 24, 28)", Fg: "rgb(228, 230, 234)", Dark: true}},
		{"light", look{Bg: "rgb(255, 255, 255)", Fg: "rgb(34, 34, 34)", Dark: false}},
	} {
		emulateScheme(t, ctx, tc.scheme)
		for _, path := range []string{"/", "/runs", "/jobs"} {
			run(t, ctx, "load "+path, 30*time.Second,
				chromedp.Navigate(base+path),
				waitJS(`document.body && document.body.dataset.ready === "1"`),
			)
			got := get(t, ctx, "read the colours", chromedp.Evaluate[look](`(() => {
				const cs = getComputedStyle(document.body);
				return {bg: cs.backgroundColor, fg: cs.color, dark: document.documentElement.classList.contains("dark")};
			})()`))
			if got != tc.want {
				t.Errorf("%s in %s: %+v, want %+v", path, tc.scheme, got, tc.want)
			}
		}
	}
	for _, p := range console.take() {
		t.Errorf("%s", p)
	}
}

// inView is a JavaScript expression: the element sel is shown, its box
// inside the viewport, and the focus inside it.
func inView(sel string) string {
	return fmt.Sprintf(`(() => {
		const el = document.querySelector(%q);
		if (!el || el.hidden) return "hidden";
		const r = el.getBoundingClientRect();
		if (r.width === 0 || r.height === 0) return "no box";
		if (r.left < 0 || r.top < 0 || r.right > innerWidth || r.bottom > innerHeight)
			return "out of view: " + JSON.stringify([r.left, r.top, r.right, r.bottom, innerWidth, innerHeight]);
		if (!el.contains(document.activeElement)) return "focus on " + document.activeElement.outerHTML.slice(0, 80);
		return "ok";
	})()`, sel)
}

// TestBrowserSlideOver opens the panels (a row's runs drawer, Run now's
// params, a run's detail) below a full page of rows: each slides over from
// the right inside the viewport, takes the focus, and Escape closes it and
// gives the focus back.
func TestBrowserSlideOver(t *testing.T) {
	chromium := needBrowser(t)
	base := startNode(t)
	for i := range 30 {
		postJSON(t, base, "/api/v1/scenarios/memos/rows",
			fmt.Sprintf(`{"memo_id":"so-%02d","title":"row %d","content":"c","when":"every 1h","channel":"outbox"}`, i, i), http.StatusCreated)
	}
	waitSynced(t, base, "so-00", "so-24")
	postJSON(t, base, "/api/v1/tasks/so-24/trigger", `{}`, http.StatusAccepted)
	ctx := newBrowser(t, chromium)
	console := listenConsole(t, ctx)
	run(t, ctx, "load the table", 30*time.Second,
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(css(`body[data-ready="1"]`)),
		waitJS(`document.querySelectorAll("#rows tbody tr[id]").length === 25`),
	)
	check := func(step, sel string) {
		t.Helper()
		var got string
		deadline := time.Now().Add(10 * time.Second)
		for {
			got = get(t, ctx, step, chromedp.Evaluate[string](inView(sel)))
			if got == "ok" || time.Now().After(deadline) {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if got != "ok" {
			t.Errorf("%s: %s", step, got)
		}
	}
	// The last row of the page: below the fold before the panels slid over.
	last := `#rows tbody tr[id="so-24"]`
	// A row's actions are in its menu: the toggle opens it, then the item.
	openMenu := func(item string) []chromedp.Action[chromedp.Void] {
		return []chromedp.Action[chromedp.Void]{
			chromedp.ScrollIntoView(css(last + ` .row-menu-toggle`)),
			chromedp.Click(css(last + ` .row-menu-toggle`)),
			chromedp.WaitVisible(css(last + ` .dropdown-menu.show ` + item)),
			chromedp.Click(css(last + ` ` + item)),
		}
	}
	run(t, ctx, "open the runs drawer", 10*time.Second, openMenu(`button.runs`)...)
	check("the runs drawer", "#drawer")
	// The focus goes back to the menu's toggle (its items are hidden once
	// the menu closed).
	run(t, ctx, "close it with Escape", 10*time.Second,
		chromedp.KeyEvent(kb.Escape),
		waitJS(`document.getElementById("drawer").hidden && document.activeElement.matches(".row-menu-toggle") && !!document.activeElement.closest('tr[id="so-24"]')`),
	)
	run(t, ctx, "open the params", 10*time.Second, openMenu(`button.run-params`)...)
	check("the params panel", "#params")
	run(t, ctx, "cancel the params", 10*time.Second,
		chromedp.Click(css(`#params-cancel`)),
		waitJS(`document.getElementById("params").hidden`),
	)

	// A run's detail on the runs page.
	run(t, ctx, "load the runs", 30*time.Second,
		chromedp.Navigate(base+"/runs?task_id=so-24"),
		chromedp.WaitVisible(css(`body[data-ready="1"]`)),
		waitJS(`document.querySelectorAll("#runs-table tbody tr[id]").length >= 1`),
		jsClick(`#runs-table tbody tr[id] td`),
	)
	check("the run detail", "#run-detail")
	run(t, ctx, "close the run detail with Escape", 10*time.Second,
		chromedp.KeyEvent(kb.Escape),
		waitJS(`document.getElementById("run-detail").hidden && !location.search.includes("trigger_id")`),
	)
	for _, p := range console.take() {
		t.Errorf("%s", p)
	}
}
