package webtable_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// Browser tests of issue 15 item 4: the table behaves like a spreadsheet
// (KeyTable's focused cell, paste, undo, selection across pages).

// seedSheet adds n rows sh-01 … sh-n (title "row k", content "c k").
func seedSheet(t *testing.T, base string, n int) {
	t.Helper()
	for i := 1; i <= n; i++ {
		postJSON(t, base, "/api/v1/scenarios/memos/rows", fmt.Sprintf(
			`{"memo_id":"sh-%02d","title":"row %d","content":"c %d","when":"every 1h","channel":"outbox"}`, i, i, i),
			http.StatusCreated)
	}
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
// does not save. In English and 简体中文, without a console error.
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
			if errs := console.take(); len(errs) > 0 {
				t.Errorf("console errors: %q", errs)
			}
		})
	}
}
