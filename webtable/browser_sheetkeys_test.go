package webtable_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// focusedJS is true once the focused cell of the table is in row id and
// is its column's (1-based, among the row's cells) n-th, or its first or
// last navigable cell for n 0 or -1.
func focusedJS(id string, n int) string {
	return fmt.Sprintf(`(() => {
		const tr = document.querySelector('#rows tbody tr[id=%q]');
		if (!tr) return false;
		const kt = [...tr.querySelectorAll("td.kt")];
		const td = %d === 0 ? kt[0] : %d === -1 ? kt[kt.length - 1] : tr.children[%d - 1];
		return !!td && td.classList.contains("focus");
	})()`, id, n, n, n)
}

// TestBrowserSheetKeys closes the keyboard gaps of the table: a printable
// key on the focused cell starts its editor with that key, Delete clears
// the cell (Ctrl+Z puts it back), End and Home go to the row's last and
// first cell, Page Down and Page Up turn the page with a cell of the same
// column still focused. In English and 简体中文, without a console error.
func TestBrowserSheetKeys(t *testing.T) {
	chromium := needBrowser(t)
	base := startNode(t)
	seedSheet(t, base, 12)
	ctx := newBrowser(t, chromium)
	console := listenConsole(t, ctx)
	for _, lang := range []struct{ code, cleared, undone string }{{"en", "Cleared.", "Undone: 1 cells"}, {"zh", "已清空", "已撤销"}} {
		t.Run(lang.code, func(t *testing.T) {
			openSheet(t, ctx, base, lang.code, "")
			notice := func(part string) chromedp.Action[chromedp.Void] {
				return waitJS(fmt.Sprintf(`document.getElementById("notice").textContent.includes(%q)`, part))
			}
			typed := "Typed " + lang.code + " 标题"
			run(t, ctx, "type on a focused cell", 30*time.Second,
				chromedp.Focus(css(`.dt-search input`)),
				chromedp.KeyEvent(kb.Tab),
				focusedIs("sh-01", 2),
				chromedp.KeyEvent("T"),
				chromedp.WaitVisible(css(cellSel("sh-01", 2)+` input.cell-input`)),
				waitJS(fmt.Sprintf(`document.querySelector(%q).value === "T"`, cellSel("sh-01", 2)+` input.cell-input`)),
				chromedp.KeyEvent(strings.TrimPrefix(typed, "T")+kb.Enter),
				chromedp.WaitNotPresent(css(`#rows td.editing`)),
				focusedIs("sh-02", 2),
			)
			if got := rowFields(t, base, "sh-01")["title"]; got != typed {
				t.Errorf("sh-01 title = %v after typing on the cell, want %q", got, typed)
			}
			run(t, ctx, "clear a cell with Delete, then undo", 30*time.Second,
				chromedp.KeyEvent(kb.Delete),
				notice(lang.cleared),
				waitJS(fmt.Sprintf(`document.querySelector(%q).textContent === ""`, cellSel("sh-02", 2))),
			)
			if got := rowFields(t, base, "sh-02")["title"]; got != nil && got != "" {
				t.Errorf("sh-02 title = %v after Delete, want it empty", got)
			}
			run(t, ctx, "undo the clear", 30*time.Second,
				focusedIs("sh-02", 2),
				chromedp.KeyEvent("z", chromedp.KeyModifiers(chromedp.ModifierCtrl)),
				notice(lang.undone),
				waitJS(fmt.Sprintf(`document.querySelector(%q).textContent === "row 2"`, cellSel("sh-02", 2))),
			)
			if got := rowFields(t, base, "sh-02")["title"]; got != "row 2" {
				t.Errorf("sh-02 title = %v after undoing the clear, want row 2", got)
			}
			run(t, ctx, "End and Home", 20*time.Second,
				focusedIs("sh-02", 2),
				chromedp.KeyEvent(kb.End),
				waitJS(focusedJS("sh-02", -1)),
				chromedp.KeyEvent(kb.Home),
				waitJS(focusedJS("sh-02", 0)),
			)
			// Ten rows a page: Page Down shows the second page with a
			// cell of the same column focused, Page Up comes back.
			run(t, ctx, "Page Down and Page Up", 30*time.Second,
				chromedp.Evaluate[chromedp.Void](`jQuery("#rows").DataTable().page.len(10).draw(false); true`),
				waitJS(`document.querySelectorAll("#rows tbody tr").length === 10`),
				chromedp.Evaluate[chromedp.Void](`document.querySelector('#rows tbody tr[id="sh-02"] td.kt').dispatchEvent(new MouseEvent("click", {bubbles: true}))`),
				waitJS(focusedJS("sh-02", 0)),
				chromedp.Evaluate[chromedp.Void](`document.getElementById("rows").focus()`),
				chromedp.KeyEvent(kb.PageDown),
				waitJS(`jQuery("#rows").DataTable().page.info().page === 1`),
				waitJS(`(() => { const td = document.querySelector("#rows tbody td.focus"); return !!td && td.cellIndex === document.querySelector("#rows tbody tr td.kt").cellIndex; })()`),
				chromedp.KeyEvent(kb.PageUp),
				waitJS(`jQuery("#rows").DataTable().page.info().page === 0`),
				waitJS(`!!document.querySelector("#rows tbody td.focus")`),
				chromedp.Evaluate[chromedp.Void](`jQuery("#rows").DataTable().page.len(25).draw(false); true`),
			)
			for _, e := range console.takeButPreviews() {
				t.Errorf("console error: %q", e)
			}
		})
	}
}
