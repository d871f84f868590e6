package webtable_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// wideElements is a JavaScript expression listing what sticks out to the
// right of the viewport (outside any box that scrolls on its own), for
// failure reports.
const wideElements = `(() => {
  const out = [];
  const scrolls = el => { for (let p = el.parentElement; p; p = p.parentElement) {
    const o = getComputedStyle(p).overflowX; if (o === "auto" || o === "scroll" || o === "hidden") return true; } return false; };
  for (const el of document.body.querySelectorAll("*")) {
    const r = el.getBoundingClientRect();
    if (r.right > 390.5 && !scrolls(el)) out.push(el.tagName.toLowerCase() + (el.getAttribute("id") ? "#" + el.getAttribute("id") : "") +
      (el.className && typeof el.className === "string" ? "." + el.className.trim().split(/\s+/).join(".") : "") + " right=" + Math.round(r.right));
    if (out.length >= 8) break;
  }
  return out;
})()`

// TestBrowserNarrow loads the table, runs, jobs and status pages at
// 390×844 (a phone) in English and 简体中文 and asserts the page itself
// does not scroll sideways: the document is no wider than the viewport
// (a wide table scrolls inside its own box; the header and the navigation
// wrap).
func TestBrowserNarrow(t *testing.T) {
	chromium := needBrowser(t)
	base := startNode(t)
	seedPages(t, base)
	ctx := newBrowser(t, chromium)
	run(t, ctx, "narrow the viewport", 10*time.Second, chromedp.EmulateViewport(390, 844, chromedp.EmulateMobile))
	for _, lang := range []string{"en", "zh"} {
		run(t, ctx, "set the language", 20*time.Second,
			chromedp.Navigate(base+"/login"),
			chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`localStorage.setItem("cronsheet.lang", %q)`, lang)),
		)
		for _, path := range pagePaths(t) {
			t.Run(lang+strings.ReplaceAll(path, "/", "_"), func(t *testing.T) {
				run(t, ctx, "load "+path, 30*time.Second,
					chromedp.Navigate(base+path),
					waitJS(`document.body && document.body.dataset.ready === "1"`),
				)
				if expr, ok := seeded[path]; ok {
					run(t, ctx, "see the seeded data", 10*time.Second, waitJS(expr))
				}
				time.Sleep(500 * time.Millisecond) // late paints (the language file, the charts)
				type size struct {
					Scroll int `json:"scroll"`
					Inner  int `json:"inner"`
				}
				got := get(t, ctx, "read the widths", chromedp.Evaluate[size](
					`({scroll: document.documentElement.scrollWidth, inner: window.innerWidth})`))
				// A phone (mobile emulation, the pages' viewport meta) zooms
				// out to fit a page wider than the screen, which shows as a
				// wider window.innerWidth.
				if got.Inner != 390 || got.Scroll > got.Inner {
					wide := get(t, ctx, "read what is wide", chromedp.Evaluate[[]string](wideElements))
					t.Errorf("the page is wider than the 390 px screen: scrollWidth %d, innerWidth %d; sticking out: %v", got.Scroll, got.Inner, wide)
				}
			})
		}
	}
}
