package webtable_test

import (
	"context"
	"cronsheet/config"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// consoleLog collects the tab's console errors: console.error calls,
// uncaught exceptions, and the browser's own error entries (failed loads,
// Content-Security-Policy refusals); with network, also answers of 400 or
// more and requests that failed.
type consoleLog struct {
	mu   sync.Mutex
	errs []string
	urls map[network.RequestID]string // what each request asked, for failed loads
}

// listenConsole collects the tab's console errors (consoleProblem).
func listenConsole(t *testing.T, ctx context.Context) *consoleLog {
	t.Helper()
	return listenTab(t, ctx, false)
}

func listenTab(t *testing.T, ctx context.Context, withNetwork bool) *consoleLog {
	t.Helper()
	l := &consoleLog{urls: map[network.RequestID]string{}}
	err := chromedp.Listen(ctx, func(ev any) {
		msg := consoleProblem(ev)
		if msg == "" && withNetwork {
			msg = l.networkProblem(ev)
		}
		if msg == "" {
			return
		}
		l.mu.Lock()
		l.errs = append(l.errs, msg)
		l.mu.Unlock()
	})
	if err != nil {
		t.Fatalf("listen to the tab: %v", err)
	}
	return l
}

// consoleProblem describes ev when it is a console.error call, an
// uncaught exception or an error entry of the browser's log, else "".
func consoleProblem(ev any) string {
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if ev.Type != runtime.ConsoleAPICalledTypeError {
			return ""
		}
		parts := make([]string, len(ev.Args))
		for i, a := range ev.Args {
			parts[i] = string(a.Value) + a.Description
		}
		return "console.error: " + strings.Join(parts, " ")
	case *runtime.EventExceptionThrown:
		msg := "uncaught exception: " + ev.ExceptionDetails.Text
		if ev.ExceptionDetails.Exception != nil {
			msg += " " + ev.ExceptionDetails.Exception.Description
		}
		return msg
	case *log.EventEntryAdded:
		if ev.Entry.Level != log.EntryLevelError {
			return ""
		}
		return "log: " + ev.Entry.Text + " " + ev.Entry.URL
	}
	return ""
}

// networkProblem describes ev when it is an answer of 400 or more or a
// failed request (not one a navigation cancelled), else "".
func (l *consoleLog) networkProblem(ev any) string {
	switch ev := ev.(type) {
	case *network.EventRequestWillBeSent:
		l.mu.Lock()
		l.urls[ev.RequestID] = ev.Request.Method + " " + ev.Request.URL
		l.mu.Unlock()
	case *network.EventResponseReceived:
		if ev.Response.Status >= 400 {
			return fmt.Sprintf("network: %d %s", ev.Response.Status, ev.Response.URL)
		}
	case *network.EventLoadingFailed:
		if ev.Canceled { // a navigation ended the page's requests
			return ""
		}
		l.mu.Lock()
		u := l.urls[ev.RequestID]
		l.mu.Unlock()
		return "network: " + ev.ErrorText + " " + u
	}
	return ""
}

// take returns the errors so far and forgets them.
func (l *consoleLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.errs
	l.errs = nil
	return out
}

// takeButPreviews returns the errors so far but the schedule preview's
// refusals, and forgets them all. The page asks for a preview while a
// schedule is typed, so a half-typed or mistyped schedule is answered 400
// (shown under the field as the answer it is) and the browser logs every
// 4xx itself.
func (l *consoleLog) takeButPreviews() []string {
	var out []string
	for _, e := range l.take() {
		if !strings.Contains(e, "/api/v1/schedule/preview?") || !strings.Contains(e, "400") {
			out = append(out, e)
		}
	}
	return out
}

// waitAcross polls a JavaScript expression until it is true, like waitJS,
// but across navigations: an evaluation that a navigation interrupts is
// tried again rather than failing the step.
func waitAcross(t *testing.T, ctx context.Context, step, expr string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		ectx, cancel := context.WithTimeout(ctx, 2*time.Second)
		ok, err := chromedp.Run(ectx, chromedp.Evaluate[bool](expr, chromedp.EvalAwaitPromise))
		cancel()
		if err == nil && ok {
			return
		}
		last = err
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s: %s did not become true (last error %v)\npage state: %s", step, expr, last, pageState(ctx))
}

// TestBrowserSignInEditsRow: with auth required, the table sends the
// browser to the sign-in page; signing in leads back, where a row is added
// and edited, the audit trail names the user; the pages show who is signed
// in and sign out, in English and in Simplified Chinese, without a single
// console error.
func TestBrowserSignInEditsRow(t *testing.T) {
	chromium := needBrowser(t)
	const password = "browser admin password"
	base := startNodeWith(t, func(c *config.Config) {
		c.Auth = config.AuthRequired
		c.AdminPassword = password
	})
	ctx := newBrowser(t, chromium)
	console := listenConsole(t, ctx)

	for _, lang := range []struct {
		code, signIn, signedAs, title, auditNav string
	}{
		{"en", "Sign in", "Signed in as admin (admin)", "English memo", "Audit"},
		{"zh", "登录", "已登录：admin（admin）", "中文备忘", "审计"},
	} {
		run(t, ctx, lang.code+": the table sends to the sign-in page", 30*time.Second,
			chromedp.Navigate(base+"/login"),
			chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`localStorage.setItem("cronsheet.lang", %q)`, lang.code)),
			chromedp.Navigate(base+"/?poll=300"),
		)
		waitAcross(t, ctx, lang.code+": the sign-in page", fmt.Sprintf(
			`location.pathname === "/login" && location.search === "?next=%%2F%%3Fpoll%%3D300" && `+
				`(document.getElementById("login-button") || {}).textContent === %q`, lang.signIn))
		run(t, ctx, lang.code+": sign in", 30*time.Second,
			chromedp.SendKeys(css(`#login-name`), "admin"),
			chromedp.SendKeys(css(`#login-password`), password+kb.Enter),
		)
		waitAcross(t, ctx, lang.code+": back at the table", fmt.Sprintf(
			`location.pathname === "/" && location.search === "?poll=300" && document.body.dataset.ready === "1" && `+
				`(document.getElementById("auth-user") || {}).textContent === %q`, lang.signedAs))
		draft := "draft " + lang.code
		run(t, ctx, lang.code+": add a row", 20*time.Second,
			chromedp.SendKeys(css(`#add-fields input[name="title"]`), draft),
			chromedp.SendKeys(css(`#add-fields input[name="when"]`), "every 1h"),
			chromedp.Click(css(`#add-button`)),
			chromedp.WaitVisible(chromedp.Search(fmt.Sprintf(`//table[@id="rows"]//td[text()=%q]`, draft))),
		)
		id := get(t, ctx, lang.code+": read the new row's id", chromedp.Evaluate[string](fmt.Sprintf(
			`cronsheet.table.rows().data().toArray().find(r => r.fields.title === %q).id`, draft)))
		tr := fmt.Sprintf(`#rows tbody tr[id=%q]`, id)
		run(t, ctx, lang.code+": edit the row's title", 20*time.Second,
			jsClick(tr+` td:nth-child(2)`),
			chromedp.WaitVisible(css(tr+` td.editing input`)),
			chromedp.Clear(css(tr+` td.editing input`)),
			chromedp.SendKeys(css(tr+` td.editing input`), lang.title+kb.Enter),
			chromedp.WaitNotPresent(css(tr+` td.editing`)),
			waitJS(fmt.Sprintf(`document.querySelector(%q).textContent === %q`, tr+` td:nth-child(2)`, lang.title)),
		)
		audit := get(t, ctx, lang.code+": read the audit trail", chromedp.Evaluate[string](
			fmt.Sprintf(`fetch("/api/v1/scenarios/memos/rows/%s/audit").then(r => r.text())`, id), chromedp.EvalAwaitPromise))
		var page struct {
			Records []struct{ Who, Action string }
		}
		if err := json.Unmarshal([]byte(audit), &page); err != nil || len(page.Records) != 2 ||
			page.Records[0].Who != "admin" || page.Records[1].Who != "admin" {
			t.Errorf("%s: audit trail %s, want two records by admin", lang.code, audit)
		}
		// The audit page lists both edits by admin, filtered to the row.
		run(t, ctx, lang.code+": the audit page", 20*time.Second,
			chromedp.Navigate(base+"/audit"),
			waitJS(fmt.Sprintf(`document.getElementById("audit-kind").options.length === 9 && `+
				`document.querySelector('a[href="/audit"]').textContent === %q`, lang.auditNav)),
			chromedp.SendKeys(css(`#audit-filters input[name="id"]`), id+kb.Enter),
			waitJS(fmt.Sprintf(`(rows => rows.length === 2 && rows.every(tr => tr.children[1].textContent === "admin" && `+
				`tr.children[3].title === %q))([...document.querySelectorAll("#audit tbody tr")])`, id)),
		)
		// Tokens in the UI: created (shown once), listed, revoked.
		run(t, ctx, lang.code+": create a token in the UI", 20*time.Second,
			chromedp.Navigate(base+"/users"),
			waitJS(`document.querySelectorAll("#users tbody tr").length === 1`),
			chromedp.SendKeys(css(`#token-form input[name="user"]`), "admin"),
			chromedp.SendKeys(css(`#token-form input[name="name"]`), "ui-"+lang.code),
			chromedp.Click(css(`#token-add`)),
			waitJS(`!document.getElementById("new-token").hidden && `+
				`document.getElementById("new-token-value").textContent.startsWith("cst_")`),
			waitJS(`document.querySelectorAll("#tokens tbody tr").length === 1`),
		)
		value := get(t, ctx, lang.code+": read the token", chromedp.Text(css(`#new-token-value`)))
		status := func() int {
			req, _ := http.NewRequest(http.MethodGet, base+"/api/v1/me", nil)
			req.Header.Set("Authorization", "Bearer "+value)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp.StatusCode
		}
		if code := status(); code != http.StatusOK {
			t.Errorf("%s: the UI's token: %d, want 200", lang.code, code)
		}
		run(t, ctx, lang.code+": revoke it", 20*time.Second,
			jsClick(`#tokens tbody tr button.revoke`),
			waitJS(`document.querySelectorAll("#tokens tbody tr").length === 0`),
		)
		if code := status(); code != http.StatusUnauthorized {
			t.Errorf("%s: the revoked token: %d, want 401", lang.code, code)
		}
		if dir := os.Getenv("CRONSHEET_ARTIFACTS"); dir != "" && os.MkdirAll(dir, 0o755) == nil {
			png := get(t, ctx, lang.code+": screenshot", chromedp.FullScreenshot(100))
			_ = os.WriteFile(filepath.Join(dir, "webtable-users-"+lang.code+".png"), png, 0o644)
		}
		if errs := console.take(); len(errs) > 0 {
			t.Errorf("%s: console errors while signed in:\n%s", lang.code, strings.Join(errs, "\n"))
		}
		run(t, ctx, lang.code+": back to the table", 20*time.Second, chromedp.Navigate(base+"/?poll=300"),
			chromedp.WaitVisible(css(`#logout`)))
		// Sign out: the table may have a poll in flight when the page
		// goes, whose refusal (401) is expected; the sign-in page that
		// follows must load clean.
		run(t, ctx, lang.code+": sign out", 20*time.Second, jsClick(`#logout`))
		waitAcross(t, ctx, lang.code+": the sign-in page again", fmt.Sprintf(
			`location.pathname === "/login" && (document.getElementById("login-button") || {}).textContent === %q`, lang.signIn))
		console.take()
		run(t, ctx, lang.code+": reload the sign-in page", 20*time.Second, chromedp.Navigate(base+"/login"))
		waitAcross(t, ctx, lang.code+": the session is gone", `fetch("/api/v1/me").then(r => r.status === 401)`)
		for _, e := range console.take() {
			if !strings.Contains(e, "/api/v1/me") { // the probe's own 401
				t.Errorf("%s: console error on the sign-in page: %s", lang.code, e)
			}
		}
	}
}

// TestBrowserCrossOriginRefused is a cross-origin write attack: a page on
// another origin (another port of 127.0.0.1, so same-site but cross-origin)
// posts a text/plain form and no-cors fetches to a node in local_dev (the
// `make run` setup). Every one is refused and nothing is written.
func TestBrowserCrossOriginRefused(t *testing.T) {
	chromium := needBrowser(t)
	base := startNode(t) // local_dev on loopback
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html><body>
<form id="f" method="POST" action="%[1]s/api/v1/scenarios/memos/rows" enctype="text/plain">
<input name='{"memo_id":"evil-form","content":"x","when":"every 1m","pad":"' value='"}'>
</form>
<script>
const opts = (body) => ({method: "POST", mode: "no-cors", credentials: "include",
  headers: {"Content-Type": "text/plain"}, body: JSON.stringify(body)});
Promise.allSettled([
  fetch("%[1]s/api/v1/scenarios/memos/rows", opts({memo_id: "evil-fetch", content: "x", when: "every 1m"})),
  fetch("%[1]s/api/v1/targets", opts({id: "evil", name: "evil", kind: "http", state: "running",
    http: {method: "GET", url: "http://127.0.0.1:9/"}})),
  fetch("%[1]s/api/v1/jobs", opts({method: "GET", name: "http://127.0.0.1:9/steal", delay: 0})),
]).then(() => { document.title = "fetched"; document.getElementById("f").submit(); });
</script></body></html>`, base)
	}))
	t.Cleanup(evil.Close)
	ctx := newBrowser(t, chromium)

	run(t, ctx, "open the attacker's page", 30*time.Second, chromedp.Navigate(evil.URL))
	// The form's answer replaces the page once the fetches settled.
	waitAcross(t, ctx, "the form's answer", fmt.Sprintf(`location.href.startsWith(%q) && `+
		`document.body.textContent.includes("request refused")`, base))
	for _, path := range []string{"/api/v1/scenarios/memos/rows", "/api/v1/targets", "/api/v1/jobs"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		var body map[string]any
		err = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		for _, v := range body {
			if list, ok := v.([]any); ok && len(list) > 0 {
				t.Errorf("GET %s after the attack: %v, want nothing written", path, body)
			}
		}
	}
}
