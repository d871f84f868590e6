package webtable_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// axeScript is axe-core's browser build from npm (package.json's
// devDependencies; `npm ci` installs it). The test injects it into each
// page itself: the product never serves it.
func axeScript(t *testing.T) string {
	t.Helper()
	path := filepath.Join("..", "node_modules", "axe-core", "axe.min.js")
	b, err := os.ReadFile(path)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("axe-core: %v (run `npm ci`)", err)
		}
		t.Skipf("axe-core not installed (%v): run `npm ci`", err)
	}
	return string(b)
}

// axeViolation is one rule axe-core found broken on a page, with the
// first few elements breaking it.
type axeViolation struct {
	ID      string     `json:"id"`
	Impact  string     `json:"impact"`
	Help    string     `json:"help"`
	Count   int        `json:"count"`
	Targets [][]string `json:"targets"`
	Summary string     `json:"summary"`
}

// axeRun runs axe-core over the whole document, but the subtree Swagger
// UI draws on /api/docs (#swagger-ui: a third-party viewer's own markup,
// whose contrast, nested controls and server select cronsheet does not
// draw; the page's header, navigation and words around it are checked),
// and returns the violations of every impact.
const axeRun = `axe.run({exclude: [["#swagger-ui"]]}, {resultTypes: ["violations"]}).then(r => r.violations.map(v => ({
  id: v.id, impact: v.impact || "", help: v.help, count: v.nodes.length,
  targets: v.nodes.slice(0, 3).map(n => n.target.map(String)),
  summary: (v.nodes[0] && v.nodes[0].failureSummary || "").replace(/\s+/g, " ").slice(0, 300),
})))`

// axePage runs axe-core over the page as it is and fails on a serious or
// critical violation; where names the state of the page in the message.
func axePage(t *testing.T, ctx context.Context, where string) {
	t.Helper()
	actx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if _, err := chromedp.Run(actx, chromedp.Evaluate[chromedp.Void](axeScript(t))); err != nil {
		t.Fatalf("inject axe-core: %v", err)
	}
	found, err := chromedp.Run(actx, chromedp.Evaluate[[]axeViolation](axeRun, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatalf("axe.run: %v", err)
	}
	for _, v := range found {
		if v.Impact == "serious" || v.Impact == "critical" {
			t.Errorf("%s: %s (%s): %s; %d elements, first %v\n\t%s", where, v.ID, v.Impact, v.Help, v.Count, v.Targets, v.Summary)
		}
	}
}

// rowControls is a JavaScript expression listing the controls in table
// rows with an id (a row of data) whose aria-label does not carry the
// row's id.
const rowControls = `[...document.querySelectorAll("tbody tr[id]")].flatMap(tr =>
  [...tr.querySelectorAll("input, select, button, textarea")]
    .filter(el => !(el.getAttribute("aria-label") || "").includes(tr.id))
    .map(el => tr.id + ": " + el.outerHTML.slice(0, 120)))`

// axeAllowed lists the serious or critical findings accepted for now, by
// rule id, each with the reason it cannot be fixed yet. Empty: every
// page is clean.
var axeAllowed = map[string]string{}

// TestBrowserAxe loads every page the server registers, in English and
// 简体中文 and with the system preferring light and dark colours, on a
// node with a little data, runs axe-core over it and fails on any
// violation of impact serious or critical (contrast, labels, names,
// language …), printing each with the elements breaking it.
func TestBrowserAxe(t *testing.T) {
	chromium := needBrowser(t)
	axe := axeScript(t)
	paths := pagePaths(t)
	base := startNode(t)
	seedPages(t, base)
	ctx := newBrowser(t, chromium)

	for _, scheme := range []string{"light", "dark"} {
		emulateScheme(t, ctx, scheme)
		for _, lang := range []string{"en", "zh"} {
			run(t, ctx, "set the language", 20*time.Second,
				chromedp.Navigate(base+"/login"),
				chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`localStorage.setItem("cronsheet.lang", %q)`, lang)),
			)
			for _, path := range paths {
				t.Run(scheme+"_"+lang+strings.ReplaceAll(path, "/", "_"), func(t *testing.T) {
					run(t, ctx, "load "+path, 30*time.Second,
						chromedp.Navigate(base+path),
						waitJS(`document.body && document.body.dataset.ready === "1"`),
					)
					if expr, ok := seeded[path]; ok {
						run(t, ctx, "see the seeded data", 10*time.Second, waitJS(expr))
					}
					time.Sleep(500 * time.Millisecond) // late paints (the language file, the charts)
					actx, cancel := context.WithTimeout(ctx, 60*time.Second)
					defer cancel()
					if _, err := chromedp.Run(actx, chromedp.Evaluate[chromedp.Void](axe)); err != nil {
						t.Fatalf("inject axe-core: %v", err)
					}
					found, err := chromedp.Run(actx, chromedp.Evaluate[[]axeViolation](axeRun, chromedp.EvalAwaitPromise))
					if err != nil {
						t.Fatalf("axe.run: %v", err)
					}
					serious := 0
					for _, v := range found {
						if v.Impact != "serious" && v.Impact != "critical" {
							t.Logf("%s (%s, not failing): %s, %d elements, first %v", v.ID, v.Impact, v.Help, v.Count, v.Targets)
							continue
						}
						if why, ok := axeAllowed[v.ID]; ok {
							t.Logf("%s (%s) allowed: %s; %d elements, first %v", v.ID, v.Impact, why, v.Count, v.Targets)
							continue
						}
						serious++
						t.Errorf("%s (%s): %s; %d elements, first %v\n\t%s", v.ID, v.Impact, v.Help, v.Count, v.Targets, v.Summary)
					}
					// Every control of a table row is named after its row
					// (axe only asks for a name, which "Delete" on every row
					// satisfies).
					unnamed := get(t, ctx, "read the row controls", chromedp.Evaluate[[]string](rowControls))
					for _, u := range unnamed {
						t.Errorf("a row's control is not named after its row: %s", u)
					}
					if serious == 0 {
						t.Logf("%d violations, none serious or critical", len(found))
					}
				})
			}
		}
	}
}
