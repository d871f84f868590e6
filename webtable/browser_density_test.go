package webtable_test

import (
	"fmt"
	"math"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// rowsInView is a JavaScript expression: the heights of the table's rows
// of data whose box is wholly inside the viewport (top and bottom), and
// the right edge of the first row's actions menu toggle.
const rowsInView = `(() => {
	const rows = [...document.querySelectorAll("#rows tbody tr[id]")];
	const inside = rows.map(r => r.getBoundingClientRect()).filter(b => b.top >= 0 && b.bottom <= innerHeight && b.height > 0);
	const toggle = document.querySelector("#rows tbody tr[id] .row-menu-toggle").getBoundingClientRect();
	return {heights: inside.map(b => b.height), toggleRight: toggle.right, width: innerWidth, height: innerHeight};
})()`

// density is what rowsInView reads.
type density struct {
	Heights     []float64 `json:"heights"`
	ToggleRight float64   `json:"toggleRight"`
	Width       float64   `json:"width"`
	Height      float64   `json:"height"`
}

// TestBrowserDensity loads the table page at 1280×800 with 30 rows, in
// English and 简体中文: at least 15 rows are wholly in view and a zh row
// is no taller than an en one; a row's actions are one menu listing them
// all; the header's dark-mode toggle switches Bootstrap's data-bs-theme and
// the choice is kept across a reload; axe-core finds nothing serious or
// critical in either theme (the menu open); the console stays clean.
func TestBrowserDensity(t *testing.T) {
	chromium := needBrowser(t)
	base := startNode(t)
	for i := range 30 {
		postJSON(t, base, "/api/v1/scenarios/memos/rows",
			fmt.Sprintf(`{"memo_id":"dn-%02d","title":"一行稍长的标题 row %d","content":"每天早上提醒大家看一下今天的安排 %d","when":"every 1h","channel":"outbox"}`, i, i, i), http.StatusCreated)
	}
	waitSynced(t, base, "dn-00", "dn-29")
	ctx := newBrowser(t, chromium)
	console := listenConsole(t, ctx)
	emulateScheme(t, ctx, "light")
	run(t, ctx, "size the viewport", 10*time.Second, chromedp.EmulateViewport(1280, 800))

	tallest := map[string]float64{}
	for _, lang := range []string{"en", "zh"} {
		run(t, ctx, lang+": load the table", 30*time.Second,
			chromedp.Navigate(base+"/login"),
			chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`localStorage.setItem("cronsheet.lang", %q); localStorage.removeItem("cronsheet.theme")`, lang)),
			chromedp.Navigate(base+"/"),
			chromedp.WaitVisible(css(`body[data-ready="1"]`)),
			waitJS(`document.querySelectorAll("#rows tbody tr[id]").length === 25`),
		)
		d := get(t, ctx, lang+": measure the rows", chromedp.Evaluate[density](rowsInView))
		if d.Width != 1280 || d.Height != 800 {
			t.Fatalf("%s: viewport %vx%v, want 1280x800", lang, d.Width, d.Height)
		}
		if len(d.Heights) < 15 {
			t.Errorf("%s: %d rows wholly in view at 1280x800, want at least 15 (heights %v)", lang, len(d.Heights), d.Heights)
		}
		for _, h := range d.Heights {
			tallest[lang] = max(tallest[lang], h)
		}
		if d.ToggleRight > d.Width {
			t.Errorf("%s: the actions menu of the first row ends at x=%v, outside the %v px viewport", lang, d.ToggleRight, d.Width)
		}
		t.Logf("%s: %d rows in view, tallest %v px", lang, len(d.Heights), tallest[lang])

		// The row's actions: one menu, every action in it, in view.
		row := `#rows tbody tr[id="dn-03"]`
		run(t, ctx, lang+": open a row's actions", 10*time.Second,
			chromedp.Click(css(row+` .row-menu-toggle`)),
			waitJS(fmt.Sprintf(`!!document.querySelector(%q)`, row+` .dropdown-menu.show`)),
		)
		items := get(t, ctx, lang+": read the menu", chromedp.Evaluate[[]string](fmt.Sprintf(`[...document.querySelectorAll(%q)]
			.filter(b => b.checkVisibility() && (r => r.top >= 0 && r.bottom <= innerHeight && r.right <= innerWidth)(b.getBoundingClientRect()))
			.map(b => b.classList[1] + "=" + b.textContent)`, row+` .dropdown-menu button`)))
		wantItems := map[string][]string{
			"en": {"run-now=Run now", "run-params=Params…", "runs=Runs", "why=Why?", "del=Delete"},
			"zh": {"run-now=立即运行", "run-params=参数…", "runs=运行记录", "why=为什么？", "del=删除"},
		}[lang]
		if fmt.Sprint(items) != fmt.Sprint(wantItems) {
			t.Errorf("%s: the menu's visible items = %q, want %q", lang, items, wantItems)
		}
		if n := get(t, ctx, lang+": count the toggles", chromedp.Evaluate[int](
			fmt.Sprintf(`document.querySelectorAll(%q).length`, row+` td button:not(.dropdown-item)`))); n != 1 {
			t.Errorf("%s: %d buttons outside the menu in a row, want 1 (the menu's toggle)", lang, n)
		}
		axePage(t, ctx, lang+" light, menu open")
		run(t, ctx, lang+": close the menu", 10*time.Second,
			chromedp.KeyEvent(kb.Escape),
			waitJS(fmt.Sprintf(`!document.querySelector(%q)`, row+` .dropdown-menu.show`)),
		)
	}
	// Frozen columns: on a screen narrower than the table, its box
	// scrolls sideways; the id and title cells stay where they were while
	// the third moves by the scroll.
	run(t, ctx, "narrow to 760 px", 10*time.Second, chromedp.EmulateViewport(760, 800))
	type scrolled struct {
		By    float64   `json:"by"`
		Moved []float64 `json:"moved"`
	}
	frozen := get(t, ctx, "scroll the table sideways", chromedp.Evaluate[scrolled](`new Promise(done => {
		let box = document.querySelector("#rows").parentElement;
		while (box && getComputedStyle(box).overflowX !== "auto") box = box.parentElement;
		const cells = () => [...document.querySelectorAll('#rows tbody tr[id="dn-05"] > td')].slice(0, 3).map(td => td.getBoundingClientRect().left);
		const before = cells();
		box.scrollLeft = 200;
		requestAnimationFrame(() => { const after = cells(); done({by: box.scrollLeft, moved: before.map((b, i) => Math.round(b - after[i]))}); });
	})`, chromedp.EvalAwaitPromise))
	if frozen.By < 100 || len(frozen.Moved) != 3 || frozen.Moved[0] != 0 || frozen.Moved[1] != 0 || frozen.Moved[2] != math.Round(frozen.By) {
		t.Errorf("scrolling the table sideways: %+v, want a scroll of at least 100 px, the first two cells unmoved and the third moved by the scroll", frozen)
	}
	run(t, ctx, "back to 1280 px", 10*time.Second, chromedp.EmulateViewport(1280, 800))
	if tallest["zh"] > tallest["en"]+1 {
		t.Errorf("the tallest zh row is %v px, the tallest en row %v px: zh rows should be as short", tallest["zh"], tallest["en"])
	}

	// Dark mode: the toggle, then a reload keeps it; the toggle back.
	theme := `document.documentElement.getAttribute("data-bs-theme") + " " + getComputedStyle(document.body).backgroundColor`
	// The page is in zh now: the toggle is named in Chinese after what it
	// switches to.
	toggleName := ` + " " + document.getElementById("theme-toggle").getAttribute("aria-label")`
	if got := get(t, ctx, "read the theme", chromedp.Evaluate[string](theme+toggleName)); got != "light rgb(255, 255, 255) 深色模式" {
		t.Errorf("theme before the toggle = %q, want light on white, the toggle offering dark mode", got)
	}
	run(t, ctx, "toggle dark mode", 10*time.Second, chromedp.Click(css(`#theme-toggle`)))
	if got := get(t, ctx, "read the theme", chromedp.Evaluate[string](theme+toggleName)); got != "dark rgb(22, 24, 28) 浅色模式" {
		t.Errorf("theme after the toggle = %q, want dark, the toggle offering light mode", got)
	}
	run(t, ctx, "reload", 30*time.Second,
		chromedp.Reload(),
		chromedp.WaitVisible(css(`body[data-ready="1"]`)),
		waitJS(`document.querySelectorAll("#rows tbody tr[id]").length === 25`),
	)
	if got := get(t, ctx, "read the theme after the reload", chromedp.Evaluate[string](theme+` + " " + document.getElementById("theme-toggle").getAttribute("aria-pressed")`)); got != "dark rgb(22, 24, 28) true" {
		t.Errorf("theme after a reload = %q, want dark kept (toggle pressed)", got)
	}
	run(t, ctx, "open a row's actions in dark mode", 10*time.Second,
		chromedp.Click(css(`#rows tbody tr[id="dn-01"] .row-menu-toggle`)),
		waitJS(`!!document.querySelector('#rows tbody tr[id="dn-01"] .dropdown-menu.show')`),
	)
	axePage(t, ctx, "zh dark, menu open")
	run(t, ctx, "toggle back", 10*time.Second,
		chromedp.KeyEvent(kb.Escape),
		chromedp.Click(css(`#theme-toggle`)),
	)
	if got := get(t, ctx, "read the theme", chromedp.Evaluate[string](theme+` + " " + localStorage.getItem("cronsheet.theme")`)); got != "light rgb(255, 255, 255) light" {
		t.Errorf("theme toggled back = %q, want light kept", got)
	}
	for _, p := range console.take() {
		t.Errorf("%s", p)
	}
}
