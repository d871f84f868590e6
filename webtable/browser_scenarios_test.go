package webtable_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"cronsheet/config"
	"cronsheet/mapping"
)

// dutyScenario declares 值班提醒 beside memos: a scenario named and keyed
// in Chinese, with English and Chinese labels.
func dutyScenario(cfg *config.Config) {
	cfg.Scenarios = []mapping.Config{{
		Name: "值班提醒", TZ: "Asia/Shanghai", IDField: "编号",
		Fields: map[string]string{mapping.FieldTaskID: "编号", mapping.FieldTitle: "标题", mapping.FieldTaskPara: "内容",
			mapping.FieldCronPara: "时间", mapping.FieldTaskType: "方式", mapping.FieldTo: "接收人"},
		Defaults: map[string]any{"方式": "outbox"},
		Labels: map[string]map[string]string{
			"标题": {"en": "Title", "zh": "标题"}, "内容": {"en": "Message", "zh": "内容"}, "时间": {"en": "When", "zh": "时间"},
			"方式": {"en": "Channel", "zh": "方式"}, "接收人": {"en": "Recipient", "zh": "接收人"},
		},
	}}
}

// TestBrowserScenarioSwitcher: on a node that serves memos and
// 值班提醒, the header's switcher lists both; choosing 值班提醒 loads its
// table with its columns (its labels in the page's language) and its
// rows, puts it in the URL (?scenario=) and keeps it for the next visit
// to the bare page; choosing memos goes back. In English and 简体中文,
// without a console error.
func TestBrowserScenarioSwitcher(t *testing.T) {
	chromium := needBrowser(t)
	base := startNodeWith(t, dutyScenario)
	duty := "/api/v1/scenarios/" + url.PathEscape("值班提醒") + "/rows"
	postJSON(t, base, duty, `{"编号":"duty-1","标题":"交接班","内容":"八点交接","时间":"daily 08:00"}`, http.StatusCreated)
	postJSON(t, base, "/api/v1/scenarios/memos/rows", `{"memo_id":"memo-1","title":"water the plants","content":"c","when":"every 1h"}`, http.StatusCreated)

	ctx := newBrowser(t, chromium)
	console := listenTab(t, ctx, true)
	headers := `[...document.querySelectorAll("#rows thead th")].map(th => th.textContent).slice(0, 6).join("|")`
	for _, lang := range []struct {
		code, memos, dutyHeaders, memosFirst string
	}{
		{"en", "Memos", "编号|Title|Message|When|Channel|Recipient", "Memo id"},
		{"zh", "备忘", "编号|标题|内容|时间|方式|接收人", "编号"},
	} {
		t.Run(lang.code, func(t *testing.T) {
			run(t, ctx, "load the memos table", 30*time.Second,
				chromedp.Navigate(base+"/?poll=300"),
				chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`localStorage.clear(); localStorage.setItem("cronsheet.lang", %q)`, lang.code)),
				chromedp.Navigate(base+"/?poll=300"),
				chromedp.WaitVisible(css(`body[data-ready="1"]`)),
				waitJS(`!!document.querySelector('#rows tbody tr[id="memo-1"]')`),
				chromedp.WaitVisible(css(`#scenario`)),
			)
			opts := get(t, ctx, "read the choices", chromedp.Evaluate[string](
				`[...document.querySelectorAll("#scenario option")].map(o => o.value + "=" + o.textContent).join("|") + " " + document.getElementById("scenario").value`))
			if want := "memos=" + lang.memos + "|值班提醒=值班提醒 memos"; opts != want {
				t.Errorf("switcher: %q, want %q", opts, want)
			}
			name := get(t, ctx, "read the switcher's name", chromedp.Evaluate[string](`document.getElementById("scenario").getAttribute("aria-label")`))
			if (lang.code == "zh") != hasCJK(name) || name == "" {
				t.Errorf("the switcher is named %q in %s", name, lang.code)
			}

			run(t, ctx, "switch to 值班提醒", 30*time.Second, setSelect(`#scenario`, "值班提醒"))
			waitAcross(t, ctx, "see 值班提醒's table", fmt.Sprintf(
				`new URLSearchParams(location.search).get("scenario") === "值班提醒" && document.body.dataset.ready === "1" && `+
					`!!document.querySelector('#rows tbody tr[id="duty-1"]') && %s === %q`, headers, lang.dutyHeaders))
			if got := get(t, ctx, "read the switcher", chromedp.Evaluate[string](`document.getElementById("scenario").value`)); got != "值班提醒" {
				t.Errorf("switcher after the switch: %q", got)
			}
			if got := get(t, ctx, "read the add form", chromedp.Evaluate[string](
				`[...document.querySelectorAll("#add-fields [name]")].map(el => el.name).join(",")`)); !strings.HasPrefix(got, "标题,内容,时间,方式,接收人") {
				t.Errorf("the add form's fields: %q, want 值班提醒's", got)
			}

			// The bare page shows the scenario chosen last, and says so in
			// its URL.
			run(t, ctx, "come back to the bare page", 30*time.Second,
				chromedp.Navigate(base+"/"),
				chromedp.WaitVisible(css(`body[data-ready="1"]`)),
				waitJS(`!!document.querySelector('#rows tbody tr[id="duty-1"]')`),
				waitJS(`new URLSearchParams(location.search).get("scenario") === "值班提醒"`),
			)
			run(t, ctx, "switch back to memos", 30*time.Second, setSelect(`#scenario`, "memos"))
			waitAcross(t, ctx, "see the memos table", fmt.Sprintf(
				`new URLSearchParams(location.search).get("scenario") === "memos" && document.body.dataset.ready === "1" && `+
					`!!document.querySelector('#rows tbody tr[id="memo-1"]') && document.querySelector("#rows thead th").textContent === %q`, lang.memosFirst))
			if errs := console.take(); len(errs) > 0 {
				t.Errorf("console errors: %q", errs)
			}
		})
	}

	// A scenario kept from an earlier visit that the node no longer
	// serves falls back to memos.
	run(t, ctx, "a stale choice", 30*time.Second,
		chromedp.Evaluate[chromedp.Void](`localStorage.setItem("cronsheet.scenario", "gone")`),
		chromedp.Navigate(base+"/"),
	)
	waitAcross(t, ctx, "see memos instead", `document.body.dataset.ready === "1" && !!document.querySelector('#rows tbody tr[id="memo-1"]') && `+
		`localStorage.getItem("cronsheet.scenario") === "memos"`)
	// The stale choice's 404 is the only error expected.
	for _, e := range console.take() {
		if !strings.Contains(e, "/scenarios/gone/columns") {
			t.Errorf("console error: %q", e)
		}
	}
}
