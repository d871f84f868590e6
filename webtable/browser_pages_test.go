package webtable_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/chromedp/chromedp"
	"github.com/gin-gonic/gin"

	"cronsheet/static"
	"cronsheet/webtable"
)

// pagePaths lists the pages package webtable registers (every GET route
// but the assets), so a page added later is covered without editing this
// test.
func pagePaths(t *testing.T) []string {
	t.Helper()
	gin.SetMode(gin.TestMode)
	engine := gin.New()
	webtable.NewPages(static.FS).Register(engine)
	var paths []string
	for _, r := range engine.Routes() {
		if r.Method == http.MethodGet && !strings.HasPrefix(r.Path, "/assets/") {
			paths = append(paths, r.Path)
		}
	}
	slices.Sort(paths)
	if len(paths) < 9 {
		t.Fatalf("pages registered: %v, want at least the nine of issue 15", paths)
	}
	return paths
}

// postJSON posts body to base+path and fails unless the answer is want.
func postJSON(t *testing.T, base, path, body string, want int) {
	t.Helper()
	resp, err := http.Post(base+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != want {
		var e struct{ Error string }
		_ = json.NewDecoder(resp.Body).Decode(&e)
		t.Fatalf("POST %s: %d %s, want %d", path, resp.StatusCode, e.Error, want)
	}
}

// seedPages gives every page something to show: three rows (synced), a
// target, a flow, a pending job, and a run of one row with its outbox
// message.
func seedPages(t *testing.T, base string) {
	t.Helper()
	rows := []string{
		`{"memo_id":"pg-1","title":"standup","content":"daily standup","when":"every 1h","to":"ops@example.com"}`,
		`{"memo_id":"pg-2","title":"周报","content":"写周报","when":"每天早上8点","to":"team@example.com"}`,
		`{"memo_id":"pg-3","title":"backup","content":"check the backup","when":"daily 03:00","active":0}`,
	}
	for _, r := range rows {
		postJSON(t, base, "/api/v1/scenarios/memos/rows", r, http.StatusCreated)
	}
	postJSON(t, base, "/api/v1/targets",
		`{"id":"pg-hook","name":"page hook","kind":"http","state":"paused","http":{"method":"POST","url":"https://example.com/hook"}}`,
		http.StatusCreated)
	postJSON(t, base, "/api/v1/flows",
		`{"id":"pg-flow","description":"two steps","start":"a","steps":[{"id":"a","targets":["pg-hook"],"on":{"success":["b"]}},{"id":"b","targets":["pg-hook"]}]}`,
		http.StatusCreated)
	postJSON(t, base, "/api/v1/jobs", `{"method":"POST","name":"https://example.com/later","delay":3600}`, http.StatusCreated)
	waitSynced(t, base, "pg-1", "pg-2")
	postJSON(t, base, "/api/v1/tasks/pg-1/trigger", `{}`, http.StatusAccepted)
	deadline := time.Now().Add(20 * time.Second)
	for {
		var runs struct{ Runs []struct{ State string } }
		var outbox struct{ Messages []json.RawMessage }
		getDoc(t, base+"/api/v1/runs?task_id=pg-1", &runs)
		getDoc(t, base+"/api/v1/outbox", &outbox)
		if len(runs.Runs) > 0 && runs.Runs[0].State == "done" && len(outbox.Messages) > 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the triggered row did not finish with an outbox message within 20s: runs %+v, outbox %d", runs, len(outbox.Messages))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func getDoc(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d", url, resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

// pageLabels is a JavaScript expression for what a page says in its own
// words: the document title, and the visible text (own text nodes only,
// so not the values of inputs nor nested data) of headings, table
// headers, labels, buttons, navigation links, options and translated
// elements, with the placeholders and aria-labels of controls. Table cells
// (data) are left out, and so is the API reference's Swagger UI
// (#swagger-ui: a third-party viewer of the English OpenAPI document,
// whose own words are English only).
const pageLabels = `(() => {
  const out = [{kind: "title", text: document.title}];
  const here = document.querySelector("nav a.here") || document.querySelector("main h2");
  out.push({kind: "heading", text: here ? here.textContent.trim() : ""});
  const shown = el => el.tagName === "OPTION" || el.getClientRects().length > 0;
  const sel = "h1, h2, h3, h4, th, label, button, legend, dt, summary, caption, nav a, option, [data-i18n], [placeholder], [aria-label]";
  for (const el of document.querySelectorAll(sel)) {
    if (!shown(el) || el.closest("#swagger-ui") || el.closest('[translate="no"]')) continue;
    const own = [...el.childNodes].filter(n => n.nodeType === Node.TEXT_NODE).map(n => n.textContent).join(" ");
    const s = own.replace(/\s+/g, " ").trim();
    if (s) out.push({kind: el.tagName.toLowerCase(), text: s});
    for (const a of ["placeholder", "aria-label"]) {
      const v = (el.getAttribute(a) || "").trim();
      if (v) out.push({kind: a, text: v});
    }
  }
  return out;
})()`

type pageLabel struct {
	Kind string `json:"kind"`
	Text string `json:"text"`
}

// sameInBothLanguages are words a Chinese page keeps: the product's name,
// the language switch's own option, and technical names (protocols, HTTP
// methods, target kinds named after what they run).
var sameInBothLanguages = map[string]bool{
	"cronsheet": true, "English": true, "ID": true, "URL": true, "API": true, "JSON": true,
	"CSV": true, "HTTP": true, "http": true, "exec": true, "kafka": true, "builtin": true,
	"GET": true, "POST": true, "PUT": true, "PATCH": true, "DELETE": true, "HEAD": true,
}

// technical is a text shown as an example of what to type (a URL, a
// path, a template, a header line), the same in every language.
func technical(s string) bool {
	return sameInBothLanguages[s] || strings.Contains(s, "{{") || strings.Contains(s, "://") || strings.HasPrefix(s, "/")
}

var latin = regexp.MustCompile(`[A-Za-z]{2,}`)

func hasCJK(s string) bool {
	for _, r := range s {
		if unicode.Is(unicode.Han, r) {
			return true
		}
	}
	return false
}

// seeded is, per page, an expression true once the page shows the seeded
// data (a page not listed shows none of it).
var seeded = map[string]string{
	"/":         `document.querySelectorAll("#rows tbody tr[id]").length >= 3`,
	"/targets":  `!!document.querySelector('#targets tbody tr[id="pg-hook"]')`,
	"/flows":    `!!document.querySelector('#flow-list a[data-id="pg-flow"]')`,
	"/runs":     `document.querySelectorAll("#runs-table tbody tr[id]").length >= 1`,
	"/outbox":   `document.querySelectorAll("#outbox tbody tr[data-id]").length >= 1`,
	"/audit":    `document.querySelectorAll("#audit tbody tr").length >= 5`,
	"/jobs":     `document.getElementById("tab-pending").dataset.count === "1"`,
	"/settings": `document.getElementById("version").textContent !== ""`,
}

// TestBrowserPages loads every page the server registers, in English and
// in 简体中文, on a node with a little data, and asserts that each starts
// up (body[data-ready="1"]) without a console error, an uncaught exception
// or a failed load of an asset or an API call, and that in Chinese the
// title and heading are Chinese and no English label of the page is left
// (data marked translate="no", such as a target's name in a picker, is
// not a label).
func TestBrowserPages(t *testing.T) {
	chromium := needBrowser(t)
	paths := pagePaths(t)
	base := startNode(t)
	seedPages(t, base)
	ctx := newBrowser(t, chromium)
	problems := listenTab(t, ctx, true) // console errors and failed or 4xx/5xx loads

	english := map[string][]pageLabel{} // path → its English labels
	for _, lang := range []string{"en", "zh"} {
		for _, path := range paths {
			t.Run(lang+strings.ReplaceAll(path, "/", "_"), func(t *testing.T) {
				// The language is the stored choice, as the switch keeps it;
				// it is stored from a page (a bare file would make
				// Chromium ask for /favicon.ico).
				run(t, ctx, "set the language", 20*time.Second,
					chromedp.Navigate(base+"/login"),
					chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`localStorage.setItem("cronsheet.lang", %q)`, lang)),
				)
				problems.take()
				run(t, ctx, "load "+path, 30*time.Second,
					chromedp.Navigate(base+path),
					waitJS(`document.body && document.body.dataset.ready === "1"`),
				)
				if expr, ok := seeded[path]; ok {
					run(t, ctx, "see the seeded data", 10*time.Second, waitJS(expr))
				}
				if path == "/outbox" && lang == "zh" {
					if got := get(t, ctx, "read the channel", chromedp.Evaluate[string](
						`document.querySelector("#outbox tbody tr[data-id] td:nth-child(5)").textContent`)); got != "发件箱" {
						t.Errorf("outbox channel = %q, want 发件箱", got)
					}
				}
				// Polls and late answers of the start-up get a moment to fail.
				time.Sleep(700 * time.Millisecond)
				if loc := get(t, ctx, "read the location", chromedp.Evaluate[string](`location.pathname`)); loc != path {
					t.Errorf("the page went to %s", loc)
				}
				if errs := get(t, ctx, "read script errors", chromedp.Evaluate[string](`JSON.stringify(window.cronsheetErrors || [])`)); errs != "[]" {
					t.Errorf("script errors: %s", errs)
				}
				for _, p := range problems.take() {
					t.Errorf("%s", p)
				}
				wantLang := map[string]string{"en": "en", "zh": "zh-CN"}[lang]
				if got := get(t, ctx, "read the language", chromedp.Evaluate[string](`document.documentElement.lang`)); got != wantLang {
					t.Errorf("<html lang> = %q, want %q", got, wantLang)
				}
				labels := get(t, ctx, "read the labels", chromedp.Evaluate[[]pageLabel](pageLabels))
				if lang == "en" {
					english[path] = labels
					for _, l := range labels {
						if hasCJK(l.Text) && l.Text != "简体中文" {
							t.Errorf("English page: %s %q is Chinese", l.Kind, l.Text)
						}
					}
					return
				}
				en, ok := english[path]
				if !ok {
					t.Skip("the English pass of this page failed")
				}
				words := map[string]bool{}
				for _, l := range en {
					if latin.MatchString(l.Text) && !technical(l.Text) {
						words[l.Text] = true
					}
				}
				for _, l := range labels {
					switch {
					case l.Kind == "title" || l.Kind == "heading":
						if !hasCJK(l.Text) {
							t.Errorf("%s %q is not Chinese", l.Kind, l.Text)
						}
					case words[l.Text]:
						t.Errorf("%s %q is left in English", l.Kind, l.Text)
					}
				}
			})
		}
	}
}
