package webtable_test

import (
	"fmt"
	"net/http"
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

// TestBrowserSheetUndoRefused: an undo the server must refuse — putting
// back a one-shot time that is now in the past — says plainly why in the
// notice, and the cell keeps its new value with no error under it (the
// value is valid; only the old one is not). In English and 简体中文.
func TestBrowserSheetUndoRefused(t *testing.T) {
	chromium := needBrowser(t)
	base := startNode(t)
	ctx := newBrowser(t, chromium)
	console := listenConsole(t, ctx)
	for _, lang := range []struct{ code, pasted, refused string }{{"en", "Pasted 1 cells.", "Cannot undo"}, {"zh", "已粘贴 1 个单元格。", "无法撤销"}} {
		id := "once-" + lang.code
		at := time.Now().UTC().Add(8 * time.Second).Truncate(time.Second)
		postJSON(t, base, "/api/v1/scenarios/memos/rows", fmt.Sprintf(
			`{"memo_id":%q,"title":"once","content":"c","when":"at %s","tz":"UTC","channel":"outbox"}`, id, at.Format("2006-01-02 15:04:05")),
			http.StatusCreated)
		waitSynced(t, base, id)
		when := cellSel(id, 4)
		run(t, ctx, "paste over a one-shot ("+lang.code+")", 30*time.Second,
			chromedp.Navigate(base+"/login"),
			chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`localStorage.setItem("cronsheet.lang", %q)`, lang.code)),
			chromedp.Navigate(base+"/"),
			chromedp.WaitVisible(css(`body[data-ready="1"]`)),
			jsClick(when),
			chromedp.WaitVisible(css(when+` input.cell-input`)),
			chromedp.KeyEvent(kb.Escape),
			chromedp.WaitNotPresent(css(`#rows td.editing`)),
			focusedIs(id, 4),
			pasteText("every 2h"),
			waitJS(fmt.Sprintf(`document.getElementById("notice").textContent === %q`, lang.pasted)),
		)
		waitSynced(t, base, id)
		time.Sleep(time.Until(at.Add(time.Second))) // the old time is now in the past
		run(t, ctx, "undo the paste ("+lang.code+")", 30*time.Second,
			chromedp.Evaluate[chromedp.Void](`document.getElementById("undo").click()`),
			waitJS(fmt.Sprintf(`document.getElementById("notice").textContent.startsWith(%q)`, lang.refused)),
			waitJS(`document.getElementById("notice").textContent.includes("in the past")`),
			waitJS(fmt.Sprintf(`document.querySelector(%q).textContent.includes("every 2h")`, when)),
			waitJS(fmt.Sprintf(`!document.querySelector(%q) || document.querySelector(%q).textContent === ""`, when+" .cell-error", when+" .cell-error")),
		)
		if got := rowFields(t, base, id)["when"]; got != "every 2h" {
			t.Errorf("%s when = %v after the refused undo, want every 2h", id, got)
		}
		// The browser logs the refusal's 400 itself; nothing else is logged.
		for _, e := range console.takeButPreviews() {
			if !strings.Contains(e, "status of 400") || !strings.Contains(e, "/rows/batch") {
				t.Errorf("console error (%s): %q", lang.code, e)
			}
		}
	}
}
