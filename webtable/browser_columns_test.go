package webtable_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"cronsheet/config"
)

// cellUnder is a JavaScript expression for row sh-01's cell under the
// header titled title (null while no such header is shown).
func cellUnder(title string) string {
	return fmt.Sprintf(`(() => { const i = [...document.querySelectorAll("#rows > thead th")].findIndex(th => th.textContent === %q);
		const tr = document.querySelector('#rows tbody tr[id="sh-01"]'); return i < 0 || !tr ? null : tr.children[i]; })()`, title)
}

// TestBrowserColumnsEditors: the memos table has a column for every
// mapped field. Retries starts hidden and is shown from the Columns list,
// then set with its number editor; a target is picked by its name from
// the targets list; params are written as key=value lines. All read
// back through the API. In English and
// 简体中文, without a console error.
func TestBrowserColumnsEditors(t *testing.T) {
	chromium := needBrowser(t)
	base := startNodeWith(t, func(c *config.Config) { c.HTTP.Allow = []string{"127.0.0.0/8"} })
	postJSON(t, base, "/api/v1/targets", `{"id":"night-hook","name":"Night hook","kind":"http","state":"running","http":{"method":"POST","url":"http://127.0.0.1:9/n"}}`, http.StatusCreated)
	postJSON(t, base, "/api/v1/targets", `{"id":"day-hook","name":"白班钩子","kind":"http","state":"running","http":{"method":"POST","url":"http://127.0.0.1:9/d"}}`, http.StatusCreated)
	seedSheet(t, base, 1)
	ctx := newBrowser(t, chromium)
	console := listenConsole(t, ctx)
	for _, lang := range []struct {
		code, retries, targets, zone, params, saved, pick string
		n                                                 int
	}{
		{"en", "Retries", "Targets", "Time zone", "Params", "Saved.", "night-hook", 5},
		{"zh", "重试次数", "目标", "时区", "参数", "已保存。", "day-hook", 7},
	} {
		t.Run(lang.code, func(t *testing.T) {
			run(t, ctx, "forget the columns kept", 20*time.Second,
				chromedp.Navigate(base+"/login"),
				chromedp.Evaluate[chromedp.Void](`localStorage.clear()`),
			)
			openSheet(t, ctx, base, lang.code, "?poll=300")
			run(t, ctx, "show the hidden retries column", 20*time.Second,
				waitJS(cellUnder(lang.targets)+` !== null`),
				waitJS(cellUnder(lang.retries)+` === null && `+cellUnder(lang.zone)+` === null`),
				chromedp.Evaluate[chromedp.Void](`document.getElementById("colvis").open = true`),
				chromedp.Poll[chromedp.Void](fmt.Sprintf(`(() => { const l = [...document.querySelectorAll("#colvis-list label")].find(l => l.textContent.trim() === %q);
					if (!l || l.querySelector("input").checked) return false; l.querySelector("input").click(); return true; })()`, lang.retries),
					chromedp.WithPollingInterval(50*time.Millisecond)),
				waitJS(cellUnder(lang.retries)+` !== null`),
			)
			run(t, ctx, "set retries with the number editor", 20*time.Second,
				chromedp.Evaluate[chromedp.Void](cellUnder(lang.retries)+`.click()`),
				chromedp.WaitVisible(css(`#rows td.editing input[type="number"].cell-input`)),
				chromedp.KeyEvent(fmt.Sprint(lang.n)+kb.Enter),
				waitJS(fmt.Sprintf(`document.getElementById("notice").textContent === %q`, lang.saved)),
				waitJS(`!document.querySelector("#rows td.editing")`),
			)
			if got := rowFields(t, base, "sh-01")["retries"]; got != float64(lang.n) {
				t.Errorf("retries = %v (%T), want %d", got, got, lang.n)
			}
			run(t, ctx, "pick a target by its name", 20*time.Second,
				chromedp.Evaluate[chromedp.Void](`document.getElementById("notice").textContent = ""`),
				chromedp.Evaluate[chromedp.Void](cellUnder(lang.targets)+`.click()`),
				waitJS(`(s => !!s && s.dataset.loaded === "1" && [...s.options].map(o => o.textContent).join("|") === "白班钩子 (day-hook)|Night hook (night-hook)")(document.querySelector("#rows td.editing select[multiple]"))`),
				chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(s => { for (const o of s.options) o.selected = o.value === %q; s.focus(); })(document.querySelector("#rows td.editing select[multiple]"))`, lang.pick)),
				chromedp.KeyEvent(kb.Enter),
				waitJS(fmt.Sprintf(`document.getElementById("notice").textContent === %q`, lang.saved)),
			)
			if got := rowFields(t, base, "sh-01")["targets"]; got != lang.pick {
				t.Errorf("targets = %v, want %s", got, lang.pick)
			}
			run(t, ctx, "write params as lines", 20*time.Second,
				chromedp.Evaluate[chromedp.Void](`document.getElementById("notice").textContent = ""`),
				chromedp.Evaluate[chromedp.Void](`document.getElementById("colvis").open = true`),
				chromedp.Poll[chromedp.Void](fmt.Sprintf(`(() => { const l = [...document.querySelectorAll("#colvis-list label")].find(l => l.textContent.trim() === %q);
					if (!l || l.querySelector("input").checked) return false; l.querySelector("input").click(); return true; })()`, lang.params),
					chromedp.WithPollingInterval(50*time.Millisecond)),
				waitJS(cellUnder(lang.params)+` !== null`),
				chromedp.Evaluate[chromedp.Void](cellUnder(lang.params)+`.click()`),
				chromedp.WaitVisible(css(`#rows td.editing textarea.cell-input`)),
				chromedp.KeyEvent("day=mon"),
				chromedp.KeyEvent(kb.Enter, chromedp.KeyModifiers(chromedp.ModifierShift)),
				chromedp.KeyEvent("slot="+lang.code+kb.Enter),
				waitJS(fmt.Sprintf(`document.getElementById("notice").textContent === %q`, lang.saved)),
			)
			if got := rowFields(t, base, "sh-01")["params"]; got != "day=mon; slot="+lang.code {
				t.Errorf("params = %v, want day=mon; slot=%s", got, lang.code)
			}
			if errs := console.take(); len(errs) > 0 {
				t.Errorf("console errors: %q", errs)
			}
		})
	}
}
