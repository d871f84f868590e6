package webtable_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// Browser tests of the table as a spreadsheet: it behaves like one
// (KeyTable's focused cell, paste, undo, selection across pages).

// seedSheet adds n rows sh-01 … sh-n (title "row k", content "c k") and
// waits until they are synced, so no edit of a test meets the sync
// patrol's write of the same row (docs/FERRETDB.md).
func seedSheet(t *testing.T, base string, n int) {
	t.Helper()
	var ids []string
	for i := 1; i <= n; i++ {
		postJSON(t, base, "/api/v1/scenarios/memos/rows", fmt.Sprintf(
			`{"memo_id":"sh-%02d","title":"row %d","content":"c %d","when":"every 1h","channel":"outbox"}`, i, i, i),
			http.StatusCreated)
		ids = append(ids, fmt.Sprintf("sh-%02d", i))
	}
	waitSynced(t, base, ids...)
}

// rowFields reads a row's fields through the API.
func rowFields(t *testing.T, base, id string) map[string]any {
	t.Helper()
	var row struct {
		Fields map[string]any `json:"fields"`
	}
	getDoc(t, base+"/api/v1/scenarios/memos/rows/"+id, &row)
	return row.Fields
}

// cellSel is the selector of row id's cell in column n (1-based).
func cellSel(id string, n int) string {
	return fmt.Sprintf(`#rows tbody tr[id=%q] td:nth-child(%d)`, id, n)
}

// focusedIs is true once the cell KeyTable focuses is row id's column n.
func focusedIs(id string, n int) chromedp.Action[chromedp.Void] {
	return waitJS(fmt.Sprintf(`(el => !!el && el.classList.contains("focus"))(document.querySelector(%q))`, cellSel(id, n)))
}

// openSheet loads the table in lang and waits for the seeded rows.
func openSheet(t *testing.T, ctx context.Context, base, lang, query string) {
	t.Helper()
	run(t, ctx, "load the table ("+lang+")", 30*time.Second,
		chromedp.Navigate(base+"/login"),
		chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`localStorage.setItem("cronsheet.lang", %q)`, lang)),
		chromedp.Navigate(base+"/"+query),
		chromedp.WaitVisible(css(`body[data-ready="1"]`)),
		waitJS(`!!document.querySelector('#rows tbody tr[id="sh-01"]')`),
	)
}

// TestBrowserSheetKeyboard edits three cells with the keyboard only: Tab
// into the table (its first editable cell gets the keyboard), Enter opens
// the editor, Enter saves and moves down, an arrow moves right, F2 opens
// the editor too, Esc cancels; an Enter an input method is composing with
// does not save; a refused edit shows the reason beside the cell. In
// English and 简体中文, without a console error.
func TestBrowserSheetKeyboard(t *testing.T) {
	chromium := needBrowser(t)
	base := startNode(t)
	seedSheet(t, base, 3)
	ctx := newBrowser(t, chromium)
	console := listenConsole(t, ctx)
	for _, lang := range []string{"en", "zh"} {
		t.Run(lang, func(t *testing.T) {
			openSheet(t, ctx, base, lang, "")
			edited := "edit " + lang
			run(t, ctx, "edit three cells with the keyboard", 30*time.Second,
				// The search box is the control before the table: Tab from
				// it reaches the table.
				chromedp.Focus(css(`.dt-search input`)),
				chromedp.KeyEvent(kb.Tab),
				focusedIs("sh-01", 2),
				chromedp.KeyEvent(kb.Enter),
				chromedp.WaitVisible(css(cellSel("sh-01", 2)+` input.cell-input`)),
				chromedp.KeyEvent(edited+" 1"+kb.Enter),
				chromedp.WaitNotPresent(css(`#rows td.editing`)),
				focusedIs("sh-02", 2),
				chromedp.KeyEvent(kb.Enter),
				chromedp.WaitVisible(css(cellSel("sh-02", 2)+` input.cell-input`)),
				chromedp.KeyEvent(edited+" 2"+kb.Enter),
				chromedp.WaitNotPresent(css(`#rows td.editing`)),
				focusedIs("sh-03", 2),
				chromedp.KeyEvent(kb.ArrowRight),
				focusedIs("sh-03", 3),
				chromedp.KeyEvent(kb.F2),
				chromedp.WaitVisible(css(cellSel("sh-03", 3)+` input.cell-input`)),
				chromedp.KeyEvent(edited+" 3"+kb.Enter),
				chromedp.WaitNotPresent(css(`#rows td.editing`)),
				waitJS(fmt.Sprintf(`document.querySelector(%q).textContent === %q`, cellSel("sh-03", 3), edited+" 3")),
			)
			for id, want := range map[string][2]string{
				"sh-01": {"title", edited + " 1"}, "sh-02": {"title", edited + " 2"}, "sh-03": {"content", edited + " 3"},
			} {
				if got := rowFields(t, base, id)[want[0]]; got != want[1] {
					t.Errorf("%s %s = %v, want %q", id, want[0], got, want[1])
				}
			}

			// Esc cancels an edit and leaves the cell focused; an Enter
			// while an input method composes is the IME's.
			run(t, ctx, "cancel with Esc", 20*time.Second,
				chromedp.KeyEvent(kb.ArrowUp),
				focusedIs("sh-02", 3),
				chromedp.KeyEvent(kb.Enter),
				chromedp.WaitVisible(css(cellSel("sh-02", 3)+` input.cell-input`)),
				chromedp.KeyEvent("不要"),
				chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.querySelector(%q).dispatchEvent(
					new KeyboardEvent("keydown", {key: "Enter", keyCode: 229, isComposing: true, bubbles: true, cancelable: true}))`,
					cellSel("sh-02", 3)+` input.cell-input`)),
				chromedp.Sleep(300*time.Millisecond),
				chromedp.WaitVisible(css(cellSel("sh-02", 3)+` input.cell-input`)),
				chromedp.KeyEvent(kb.Escape),
				chromedp.WaitNotPresent(css(`#rows td.editing`)),
				focusedIs("sh-02", 3),
				waitJS(fmt.Sprintf(`document.querySelector(%q).textContent === "c 2"`, cellSel("sh-02", 3))),
			)
			if got := rowFields(t, base, "sh-02")["content"]; got != "c 2" {
				t.Errorf("sh-02 content = %v after Esc, want it unchanged", got)
			}

			// A refused edit keeps the editor and what was typed, with the
			// reason beside it.
			run(t, ctx, "see a refused edit's reason", 20*time.Second,
				chromedp.KeyEvent(kb.ArrowRight),
				focusedIs("sh-02", 4),
				chromedp.KeyEvent(kb.Enter),
				chromedp.WaitVisible(css(cellSel("sh-02", 4)+` input.cell-input`)),
				chromedp.KeyEvent("dayly 8:00"+kb.Enter),
				waitJS(fmt.Sprintf(`((document.querySelector(%q) || {}).textContent || "").includes("dayly")`, cellSel("sh-02", 4)+` .cell-error`)),
				chromedp.WaitVisible(css(cellSel("sh-02", 4)+` input.cell-input`)),
				chromedp.KeyEvent(kb.Escape),
				chromedp.WaitNotPresent(css(`#rows td.editing`)),
				focusedIs("sh-02", 4),
			)
			if got := rowFields(t, base, "sh-02")["when"]; got != "every 1h" {
				t.Errorf("sh-02 when = %v after a refused edit, want it unchanged", got)
			}
			for _, e := range console.takeButPreviews() {
				t.Errorf("console error: %q", e)
			}
		})
	}
}

// pasteText dispatches a paste of text (as a spreadsheet puts it on the
// clipboard) on the element that has the browser's focus.
func pasteText(text string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => {
		const dt = new DataTransfer();
		dt.setData("text/plain", %q);
		(document.activeElement || document.body).dispatchEvent(new ClipboardEvent("paste", {clipboardData: dt, bubbles: true, cancelable: true}));
	})()`, text))
}

// auditActions lists the actions of a row's audit trail, newest first.
func auditActions(t *testing.T, base, id string) []string {
	t.Helper()
	var page struct {
		Records []struct {
			Action string `json:"action"`
		} `json:"records"`
	}
	getDoc(t, base+"/api/v1/scenarios/memos/rows/"+id+"/audit", &page)
	var out []string
	for _, r := range page.Records {
		out = append(out, r.Action)
	}
	return out
}

// TestBrowserSheetPaste pastes a 3×2 range of tab-separated text at the
// focused cell (saved as one batch), then a range with an invalid schedule
// (nothing saved, the reason shown in the refused cell), then undoes with
// Ctrl+Z: the range's old values come back through the rows API and the
// audit trail records the undo; a single edit is undone the same way.
func TestBrowserSheetPaste(t *testing.T) {
	chromium := needBrowser(t)
	base := startNode(t)
	seedSheet(t, base, 3)
	ctx := newBrowser(t, chromium)
	console := listenConsole(t, ctx)
	openSheet(t, ctx, base, "en", "")
	notice := func(part string) chromedp.Action[chromedp.Void] {
		return waitJS(fmt.Sprintf(`document.getElementById("notice").textContent.includes(%q)`, part))
	}
	fieldsOf := func(field string) []any {
		var out []any
		for _, id := range []string{"sh-01", "sh-02", "sh-03"} {
			out = append(out, rowFields(t, base, id)[field])
		}
		return out
	}

	run(t, ctx, "paste a 3×2 range", 30*time.Second,
		chromedp.Focus(css(`.dt-search input`)),
		chromedp.KeyEvent(kb.Tab),
		focusedIs("sh-01", 2),
		pasteText("a1\tb1\r\na2\tb2\r\na3\tb3\r\n"),
		notice("Pasted 6 cells."),
		waitJS(fmt.Sprintf(`document.querySelector(%q).textContent === "b3"`, cellSel("sh-03", 3))),
	)
	if got := fmt.Sprint(fieldsOf("title"), fieldsOf("content")); got != "[a1 a2 a3] [b1 b2 b3]" {
		t.Errorf("after the paste, titles and contents = %s", got)
	}

	run(t, ctx, "paste a range with an invalid schedule", 30*time.Second,
		chromedp.KeyEvent(kb.ArrowRight),
		focusedIs("sh-01", 3),
		pasteText("x1\tdayly 8:00\nx2\tevery 2h"),
		waitJS(fmt.Sprintf(`((document.querySelector(%q) || {}).textContent || "").includes("dayly")`, cellSel("sh-01", 4)+` .cell-error`)),
		notice("nothing was saved"),
	)
	if got := fmt.Sprint(fieldsOf("content"), fieldsOf("when")); got != "[b1 b2 b3] [every 1h every 1h every 1h]" {
		t.Errorf("after the refused paste, contents and schedules = %s", got)
	}
	// The browser logs the refusal's 400 itself; nothing else is logged.
	for _, e := range console.take() {
		if !strings.Contains(e, "status of 400") || !strings.Contains(e, "/rows/batch") {
			t.Errorf("console error: %q", e)
		}
	}

	run(t, ctx, "undo the paste", 30*time.Second,
		chromedp.KeyEvent("z", chromedp.KeyModifiers(chromedp.ModifierCtrl)),
		notice("Undone: 6 cells restored."),
		waitJS(fmt.Sprintf(`document.querySelector(%q).textContent === "c 3"`, cellSel("sh-03", 3))),
		chromedp.WaitNotPresent(css(cellSel("sh-01", 4)+` .cell-error`)),
	)
	if got := fmt.Sprint(fieldsOf("title"), fieldsOf("content")); got != "[row 1 row 2 row 3] [c 1 c 2 c 3]" {
		t.Errorf("after the undo, titles and contents = %s", got)
	}
	if got := fmt.Sprint(auditActions(t, base, "sh-02")); got != "[update update create]" {
		t.Errorf("audit of sh-02 = %s, want the paste and its undo", got)
	}

	run(t, ctx, "undo a single edit", 30*time.Second,
		chromedp.KeyEvent(kb.ArrowDown),
		focusedIs("sh-02", 3),
		chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(css(cellSel("sh-02", 3)+` input.cell-input`)),
		chromedp.KeyEvent("single"+kb.Enter),
		notice("Saved."),
		chromedp.KeyEvent("z", chromedp.KeyModifiers(chromedp.ModifierCtrl)),
		notice("Undone: 1 cells restored."),
		waitJS(fmt.Sprintf(`document.querySelector(%q).textContent === "c 2"`, cellSel("sh-02", 3))),
	)
	if got := rowFields(t, base, "sh-02")["content"]; got != "c 2" {
		t.Errorf("after undoing the edit, sh-02 content = %v", got)
	}

	// Two edits of one row, then two undos: the second undo is based on
	// the version the first undo saved (no conflict with the page's own
	// undo); a third Ctrl+Z finds nothing left to undo.
	run(t, ctx, "undo two edits of one row", 30*time.Second,
		focusedIs("sh-03", 3), // Enter moved the keyboard down
		chromedp.KeyEvent(kb.ArrowUp),
		focusedIs("sh-02", 3),
		chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(css(cellSel("sh-02", 3)+` input.cell-input`)),
		chromedp.KeyEvent("first"+kb.Enter),
		focusedIs("sh-03", 3),
		chromedp.KeyEvent(kb.ArrowUp),
		focusedIs("sh-02", 3),
		chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(css(cellSel("sh-02", 3)+` input.cell-input`)),
		chromedp.KeyEvent("second"+kb.Enter),
		focusedIs("sh-03", 3),
		waitJS(fmt.Sprintf(`document.querySelector(%q).textContent === "second"`, cellSel("sh-02", 3))),
		chromedp.KeyEvent("z", chromedp.KeyModifiers(chromedp.ModifierCtrl)),
		waitJS(fmt.Sprintf(`document.querySelector(%q).textContent === "first"`, cellSel("sh-02", 3))),
		chromedp.KeyEvent("z", chromedp.KeyModifiers(chromedp.ModifierCtrl)),
		waitJS(fmt.Sprintf(`document.querySelector(%q).textContent === "c 2"`, cellSel("sh-02", 3))),
		chromedp.KeyEvent("z", chromedp.KeyModifiers(chromedp.ModifierCtrl)),
		notice("Nothing to undo."),
	)
	if got := rowFields(t, base, "sh-02")["content"]; got != "c 2" {
		t.Errorf("after undoing both edits, sh-02 content = %v", got)
	}
	if errs := console.take(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}

// clickBox clicks the selection box of row id, with Shift when shift.
func clickBox(id string, shift bool) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](fmt.Sprintf(`(() => {
		const el = document.querySelector('#rows tbody tr[id=%q] input.sel-row');
		if (!el) return false;
		el.dispatchEvent(new MouseEvent("click", {bubbles: true, cancelable: true, shiftKey: %t}));
		return true;
	})()`, id, shift), chromedp.WithPollingInterval(50*time.Millisecond))
}

// TestBrowserSheetBulk selects a range with Shift+click, then every row
// the table matches across its pages ("select all N matches"), unticks
// one, and deactivates the rest in one bulk action: every match but the
// unticked row is switched off, on every page. In English and 简体中文
// (the second pass switches the rows back on).
func TestBrowserSheetBulk(t *testing.T) {
	chromium := needBrowser(t)
	base := startNode(t)
	const n = 23
	seedSheet(t, base, n)
	var ids []string
	for i := 1; i <= n; i++ {
		ids = append(ids, fmt.Sprintf("sh-%02d", i))
	}
	ctx := newBrowser(t, chromium)
	console := listenConsole(t, ctx)
	for _, lang := range []struct {
		code, action, count, all, done string
		flag                           string
	}{
		{"en", "#bulk-deactivate", "4 selected:", "Select all 23 matches", "Deactivate: 22 done, 0 failed.", "0"},
		{"zh", "#bulk-activate", "已选 4 行：", "选择全部 23 个匹配行", "启用：成功 22，失败 0。", "1"},
	} {
		t.Run(lang.code, func(t *testing.T) {
			openSheet(t, ctx, base, lang.code, "")
			text := func(sel string) string {
				return fmt.Sprintf(`document.querySelector(%q).textContent`, sel)
			}
			run(t, ctx, "select a range with Shift+click", 20*time.Second,
				chromedp.Evaluate[chromedp.Void](`void cronsheet.table.page.len(10).draw()`),
				waitJS(`cronsheet.table.page.len() === 10 && document.querySelectorAll("#rows tbody tr[id]").length === 10`),
				clickBox("sh-01", false),
				clickBox("sh-04", true),
				waitJS(`cronsheet.selectedCount() === 4`),
				waitJS(text(`#bulk-count`)+fmt.Sprintf(` === %q`, lang.count)),
				waitJS(`[1, 2, 3, 4].every(i => document.querySelector('#rows tbody tr[id="sh-0' + i + '"] input.sel-row').checked)`),
				waitJS(`!document.querySelector('#rows tbody tr[id="sh-05"] input.sel-row').checked`),
			)
			run(t, ctx, "select all matches", 20*time.Second,
				jsClick(`#select-all`),
				waitJS(`cronsheet.selectedCount() === 10`),
				waitJS(`!document.getElementById("select-matches").hidden`),
				waitJS(text(`#select-matches`)+fmt.Sprintf(` === %q`, lang.all)),
				jsClick(`#select-matches`),
				waitJS(`cronsheet.selectedCount() === 23`),
				clickBox("sh-02", false),
				waitJS(`cronsheet.selectedCount() === 22`),
				// Another page's rows are selected too.
				chromedp.Evaluate[chromedp.Void](`void cronsheet.table.page(2).draw(false)`),
				waitJS(`!!document.querySelector('#rows tbody tr[id="sh-23"]')`),
				waitJS(`document.querySelector('#rows tbody tr[id="sh-23"] input.sel-row').checked`),
				jsClick(lang.action),
				waitJS(text(`#notice`)+fmt.Sprintf(` === %q`, lang.done)),
				waitJS(`cronsheet.selectedCount() === 0 && document.getElementById("bulk").hidden`),
			)
			// A new search is another set of matches: the selection of all
			// matches is cleared.
			run(t, ctx, "search after selecting all matches", 20*time.Second,
				chromedp.Evaluate[chromedp.Void](`void cronsheet.table.page(0).draw(false)`),
				waitJS(`!!document.querySelector('#rows tbody tr[id="sh-01"]')`),
				jsClick(`#select-all`),
				waitJS(`!document.getElementById("select-matches").hidden`),
				jsClick(`#select-matches`),
				waitJS(`cronsheet.selectedCount() === 23`),
				chromedp.Evaluate[chromedp.Void](`void cronsheet.table.search("row 1").draw()`),
				waitJS(`cronsheet.table.page.info().recordsDisplay < 23`),
				waitJS(`cronsheet.selectedCount() === 0 && document.getElementById("bulk").hidden`),
				chromedp.Evaluate[chromedp.Void](`void cronsheet.table.search("").draw()`),
			)
			for _, id := range ids {
				want := lang.flag
				if id == "sh-02" {
					want = "1" // unticked: left on
				}
				if got := fmt.Sprint(rowFields(t, base, id)["active"]); got != want && !(want == "1" && got == "<nil>") {
					t.Errorf("%s active = %s, want %s", id, got, want)
				}
			}
			if errs := console.take(); len(errs) > 0 {
				t.Errorf("console errors: %q", errs)
			}
		})
	}
}

// point is a spot of the viewport, in CSS pixels.
type point struct {
	X float64 `json:"x"`
	Y float64 `json:"y"`
}

// centre is the middle of the first element matching sel.
func centre(t *testing.T, ctx context.Context, sel string) point {
	t.Helper()
	return get(t, ctx, "find "+sel, chromedp.Evaluate[point](fmt.Sprintf(
		`(r => ({x: r.left + r.width / 2, y: r.top + r.height / 2}))(document.querySelector(%q).getBoundingClientRect())`, sel)))
}

// TestBrowserSheetFill drags the focused cell's fill handle (AutoFill)
// down over two cells: they take the first cell's value, saved as one
// batch, and Ctrl+Z undoes the fill.
func TestBrowserSheetFill(t *testing.T) {
	chromium := needBrowser(t)
	base := startNode(t)
	seedSheet(t, base, 3)
	ctx := newBrowser(t, chromium)
	console := listenConsole(t, ctx)
	openSheet(t, ctx, base, "en", "")
	run(t, ctx, "focus a cell", 20*time.Second,
		chromedp.Focus(css(`.dt-search input`)),
		chromedp.KeyEvent(kb.Tab),
		focusedIs("sh-01", 2),
		chromedp.KeyEvent(kb.ArrowRight),
		focusedIs("sh-01", 3),
		chromedp.WaitVisible(css(`.dt-autofill-handle`)),
	)
	from := centre(t, ctx, `.dt-autofill-handle`)
	to := centre(t, ctx, cellSel("sh-03", 3))
	run(t, ctx, "drag the fill handle down", 20*time.Second,
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, from.X, from.Y),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, from.X, from.Y, chromedp.ButtonLeft, chromedp.ClickCount(1)),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, (from.X+to.X)/2, (from.Y+to.Y)/2, chromedp.ButtonLeft),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, to.X, to.Y, chromedp.ButtonLeft),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, to.X, to.Y, chromedp.ButtonLeft, chromedp.ClickCount(1)),
		waitJS(`document.getElementById("notice").textContent === "Filled 2 cells."`),
		waitJS(fmt.Sprintf(`document.querySelector(%q).textContent === "c 1"`, cellSel("sh-03", 3))),
	)
	for _, id := range []string{"sh-01", "sh-02", "sh-03"} {
		if got := rowFields(t, base, id)["content"]; got != "c 1" {
			t.Errorf("%s content = %v after filling down, want c 1", id, got)
		}
	}
	run(t, ctx, "undo the fill", 20*time.Second,
		chromedp.Focus(css(`#rows`)),
		chromedp.KeyEvent("z", chromedp.KeyModifiers(chromedp.ModifierCtrl)),
		waitJS(`document.getElementById("notice").textContent === "Undone: 2 cells restored."`),
	)
	if got := fmt.Sprintf("%v, %v", rowFields(t, base, "sh-02")["content"], rowFields(t, base, "sh-03")["content"]); got != "c 2, c 3" {
		t.Errorf("after undoing the fill: %s", got)
	}
	if errs := console.take(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}

// TestBrowserSheetColumns drags a column's header to another place
// (ColReorder) and hides another from the Columns list; both hold after a
// reload (localStorage), the keyboard and a paste still reach the right
// fields, and Reset columns brings the server's layout back.
func TestBrowserSheetColumns(t *testing.T) {
	chromium := needBrowser(t)
	base := startNode(t)
	seedSheet(t, base, 2)
	ctx := newBrowser(t, chromium)
	console := listenConsole(t, ctx)
	openSheet(t, ctx, base, "en", "")
	headers := `[...document.querySelectorAll("#rows thead th")].slice(0, 6).map(th => th.textContent).join("|")`
	// Drag the Content header onto the left part of the Title header.
	from := centre(t, ctx, `#rows thead th:nth-child(3)`)
	to := centre(t, ctx, `#rows thead th:nth-child(2)`)
	left := to.X - 20
	run(t, ctx, "move content before title and hide the channel", 20*time.Second,
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, from.X, from.Y),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMousePressed, from.X, from.Y, chromedp.ButtonLeft, chromedp.ClickCount(1)),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, from.X-10, from.Y, chromedp.ButtonLeft),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, (from.X+left)/2, from.Y, chromedp.ButtonLeft),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseMoved, left, to.Y, chromedp.ButtonLeft),
		chromedp.MouseEvent(input.DispatchMouseEventTypeMouseReleased, left, to.Y, chromedp.ButtonLeft, chromedp.ClickCount(1)),
		waitJS(headers+` === "Memo id|Content|Title|When|Channel|To"`),
		chromedp.Evaluate[chromedp.Void](`document.getElementById("colvis").open = true`),
		jsClick(`#colvis-list input[data-col="4"]`),
		waitJS(headers+` === "Memo id|Content|Title|When|To|Active"`),
	)
	run(t, ctx, "reload", 30*time.Second,
		chromedp.Reload(),
		chromedp.WaitVisible(css(`body[data-ready="1"]`)),
		waitJS(`!!document.querySelector('#rows tbody tr[id="sh-01"]')`),
		waitJS(headers+` === "Memo id|Content|Title|When|To|Active"`),
		waitJS(`!document.querySelector('#colvis-list input[data-col="4"]').checked`),
	)
	run(t, ctx, "edit and paste in the moved columns", 30*time.Second,
		chromedp.Focus(css(`.dt-search input`)),
		chromedp.KeyEvent(kb.Tab),
		focusedIs("sh-01", 2), // content, now second
		chromedp.KeyEvent(kb.Enter),
		chromedp.WaitVisible(css(cellSel("sh-01", 2)+` input.cell-input`)),
		chromedp.KeyEvent("moved"+kb.Enter),
		chromedp.WaitNotPresent(css(`#rows td.editing`)),
		focusedIs("sh-02", 2),
		// content, title, when: the hidden channel is skipped.
		pasteText("p-content\tp-title\tevery 3h"),
		waitJS(`document.getElementById("notice").textContent === "Pasted 3 cells."`),
	)
	one, two := rowFields(t, base, "sh-01"), rowFields(t, base, "sh-02")
	if one["content"] != "moved" || one["title"] != "row 1" ||
		two["content"] != "p-content" || two["title"] != "p-title" || two["when"] != "every 3h" || two["channel"] != "outbox" {
		t.Errorf("after editing the moved columns: sh-01 %v, sh-02 %v", one, two)
	}
	run(t, ctx, "reset the columns", 30*time.Second,
		chromedp.Evaluate[chromedp.Void](`document.getElementById("colvis").open = true`),
		jsClick(`#colvis-reset`),
		waitJS(headers+` === "Memo id|Title|Content|When|Channel|To"`),
		chromedp.Reload(),
		chromedp.WaitVisible(css(`body[data-ready="1"]`)),
		waitJS(`!!document.querySelector('#rows tbody tr[id="sh-01"]')`),
		waitJS(headers+` === "Memo id|Title|Content|When|Channel|To"`),
	)
	if errs := console.take(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}

// TestBrowserSheetHeader scrolls a long page: the table's header stays at
// the top of the window (FixedHeader), and a sort from the floating
// header still sorts the table.
func TestBrowserSheetHeader(t *testing.T) {
	chromium := needBrowser(t)
	base := startNode(t)
	seedSheet(t, base, 25)
	ctx := newBrowser(t, chromium)
	console := listenConsole(t, ctx)
	openSheet(t, ctx, base, "en", "")
	run(t, ctx, "scroll down", 20*time.Second,
		waitJS(`document.querySelectorAll("#rows tbody tr[id]").length === 25`),
		chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, document.querySelector('#rows tbody tr[id="sh-20"]').getBoundingClientRect().top + window.scrollY - 100)`),
		waitJS(`(el => !!el && Math.abs(el.getBoundingClientRect().top) < 2 && el.getBoundingClientRect().height > 10)(document.querySelector(".dtfh-floatingparent thead"))`),
		// The second header cell (Title) sorts the table from up there.
		chromedp.Evaluate[chromedp.Void](`document.querySelectorAll(".dtfh-floatingparent thead th")[1].click()`),
		waitJS(`cronsheet.table.order()[0][0] === 1`),
	)
	if errs := console.take(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}

// TestBrowserSheetAxe runs axe-core over the table in its spreadsheet
// states (a focused cell with its fill handle, an open editor, selected
// rows, the Columns list open, the floating header) in English and
// 简体中文, failing on any serious or critical violation as TestBrowserAxe
// does for the pages as loaded.
func TestBrowserSheetAxe(t *testing.T) {
	chromium := needBrowser(t)
	axe := axeScript(t)
	base := startNode(t)
	seedSheet(t, base, 25)
	ctx := newBrowser(t, chromium)
	check := func(t *testing.T, state string) {
		t.Helper()
		actx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		if _, err := chromedp.Run(actx, chromedp.Evaluate[chromedp.Void](axe)); err != nil {
			t.Fatalf("inject axe-core: %v", err)
		}
		found, err := chromedp.Run(actx, chromedp.Evaluate[[]axeViolation](axeRun, chromedp.EvalAwaitPromise))
		if err != nil {
			t.Fatalf("axe.run: %v", err)
		}
		for _, v := range found {
			if v.Impact == "serious" || v.Impact == "critical" {
				t.Errorf("%s: %s (%s): %s; %d elements, first %v\n\t%s", state, v.ID, v.Impact, v.Help, v.Count, v.Targets, v.Summary)
			}
		}
	}
	for _, lang := range []string{"en", "zh"} {
		t.Run(lang, func(t *testing.T) {
			openSheet(t, ctx, base, lang, "")
			run(t, ctx, "focus a cell and select rows", 20*time.Second,
				chromedp.Focus(css(`.dt-search input`)),
				chromedp.KeyEvent(kb.Tab),
				focusedIs("sh-01", 2),
				chromedp.WaitVisible(css(`.dt-autofill-handle`)),
				clickBox("sh-02", false),
				clickBox("sh-04", true),
				waitJS(`cronsheet.selectedCount() === 3`),
				chromedp.Evaluate[chromedp.Void](`document.getElementById("colvis").open = true`),
			)
			check(t, "focused cell, selected rows, Columns open")
			run(t, ctx, "open an editor", 20*time.Second,
				chromedp.Focus(css(`#rows`)),
				chromedp.KeyEvent(kb.Enter),
				chromedp.WaitVisible(css(cellSel("sh-01", 2)+` input.cell-input`)),
			)
			check(t, "open editor")
			run(t, ctx, "close it and scroll down", 20*time.Second,
				chromedp.KeyEvent(kb.Escape),
				chromedp.WaitNotPresent(css(`#rows td.editing`)),
				chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, document.body.scrollHeight)`),
				waitJS(`!!document.querySelector(".dtfh-floatingparent thead")`),
			)
			check(t, "floating header")
		})
	}
}
