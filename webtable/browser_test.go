package webtable_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"cronsheet/config"
	"cronsheet/internal/apitest"
	"cronsheet/server"
	"cronsheet/static"
	"cronsheet/store"
	"cronsheet/store/mongo"
	"cronsheet/store/sqlite"
	"cronsheet/task"
)

// browserPath is Debian's Chromium; CRONSHEET_CHROMIUM overrides it.
func browserPath() string {
	if p := os.Getenv("CRONSHEET_CHROMIUM"); p != "" {
		return p
	}
	return "/usr/bin/chromium"
}

// needBrowser skips the test without Chromium or without the vendor files
// of `make static`; under CI=true that is a failure.
func needBrowser(t *testing.T) string {
	t.Helper()
	why := ""
	path := browserPath()
	if _, err := os.Stat(path); err != nil {
		why = fmt.Sprintf("no Chromium at %s (apt-get install -y chromium, or set CRONSHEET_CHROMIUM)", path)
	} else {
		for _, f := range static.Vendor() {
			if _, err := fs.Stat(static.FS, f); err != nil {
				why = fmt.Sprintf("static/%s is missing: run `make static` before the browser tests", f)
				break
			}
		}
	}
	if why == "" {
		return path
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("browser test cannot run under CI=true: %s", why)
	}
	t.Skipf("browser test skipped: %s", why)
	return ""
}

// startNode runs a whole cronsheet node (patrols, scheduler, outbox) on a
// fresh SQLite file and returns its base URL.
func startNode(t *testing.T) string {
	t.Helper()
	return startNodeWith(t, nil)
}

// startNodeWith is startNode with mutate adjusting the config (nil: none).
func startNodeWith(t *testing.T, mutate func(*config.Config)) string {
	t.Helper()
	cfg := config.Default()
	cfg.Listen = "127.0.0.1:0"
	cfg.NodeID = "browser-test"
	cfg.Auth = config.AuthLocalDev // loopback: the pages sign in as the local admin
	useTestDriver(t, &cfg)
	cfg.Patrol.Interval = 100 * time.Millisecond
	cfg.Patrol.Lease = 3 * time.Second
	cfg.ShutdownTimeout = 5 * time.Second
	if mutate != nil {
		mutate(&cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	logs := &apitest.SyncBuffer{}
	t.Cleanup(func() {
		if t.Failed() {
			if dir := os.Getenv("CRONSHEET_ARTIFACTS"); dir != "" && os.MkdirAll(dir, 0o755) == nil {
				_ = os.WriteFile(filepath.Join(dir, "webtable-node.log"), []byte(logs.String()), 0o644)
			}
			lines := strings.Split(logs.String(), "\n")
			t.Logf("node log (last lines):\n%s", strings.Join(lines[max(0, len(lines)-80):], "\n"))
		}
	})
	srv, err := server.New(ctx, cfg, slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
	if err != nil {
		cancel()
		t.Fatalf("start node: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	return "http://" + srv.Addr()
}

// newBrowser opens a tab for the test in a browser context of its own
// (cookies, storage and cache start empty and go with the test) on the
// test binary's one headless Chromium (sharedChromium), started on first
// use with the flags Chromium needs on a closed network
// (--disable-background-networking …). An open that fails (Chromium
// exiting before it listens, which a loaded machine sees now and then) is
// tried again on a freshly started Chromium, up to three times: the start
// is not what the tests check.
func newBrowser(t *testing.T, path string) context.Context {
	t.Helper()
	var err error
	for attempt := 1; attempt <= 3; attempt++ {
		var ctx context.Context
		if ctx, err = startBrowser(t, path); err == nil {
			return ctx
		}
		t.Logf("start chromium, attempt %d: %v", attempt, err)
	}
	t.Fatalf("start chromium: %v", err)
	return nil
}

// startBrowser opens one tab in a new browser context of the shared
// Chromium; the tab and its context are closed at the test's end. When the
// tab cannot be opened, that Chromium is stopped, so the next call starts
// a fresh one.
func startBrowser(t *testing.T, path string) (context.Context, error) {
	bctx, err := browsers.get(path)
	if err != nil {
		return nil, err
	}
	ctx, cancel := chromedp.NewContext(bctx, chromedp.WithNewBrowserContext())
	// The first run opens the tab; it must not carry a deadline (the tab
	// would close with it), so it runs on the bare context.
	if err := chromedp.Do(ctx); err != nil {
		cancel()
		browsers.drop(bctx)
		return nil, err
	}
	t.Cleanup(cancel)
	return ctx, nil
}

// run runs actions with a deadline, failing the test with step's name.
func run(t *testing.T, ctx context.Context, step string, timeout time.Duration, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatalf("%s: %v\npage state: %s", step, err, pageState(ctx))
	}
}

// pageState is the table's HTML (the main element's on other pages) and the
// page's notice, for failure reports.
func pageState(ctx context.Context) string {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Second)
	defer cancel()
	s, err := chromedp.Run(sctx, chromedp.Evaluate[string](
		`"errors: " + JSON.stringify(window.cronsheetErrors) + "\nnotice: " + document.getElementById("notice").textContent + "\n" + (document.querySelector("#rows tbody") || document.querySelector("main")).innerHTML`))
	if err != nil {
		return "(unavailable: " + err.Error() + ")"
	}
	return s
}

// get runs one action that returns a value.
func get[T any](t *testing.T, ctx context.Context, step string, a chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("%s: %v", step, err)
	}
	return v
}

// waitJS polls a JavaScript expression until it is true.
func waitJS(expr string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingInterval(100*time.Millisecond))
}

// jsClick clicks the first element matching sel from inside the page, as
// soon as there is one. The table re-renders a row whenever its status
// changes (here every second), which can detach a node between a CDP query
// and a CDP mouse click; a click from JavaScript finds and clicks in one step.
func jsClick(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](fmt.Sprintf(
		`(() => { const el = document.querySelector(%q); if (!el) return false; el.click(); return true; })()`, sel),
		chromedp.WithPollingInterval(50*time.Millisecond))
}

// waitSynced waits, through the API, until each row has been synced
// (is_fetched 1).
func waitSynced(t *testing.T, base string, ids ...string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for _, id := range ids {
		for {
			var row struct {
				IsFetched int `json:"is_fetched"`
			}
			resp, err := http.Get(base + "/api/v1/scenarios/memos/rows/" + id)
			if err != nil {
				t.Fatalf("get row %s: %v", id, err)
			}
			err = json.NewDecoder(resp.Body).Decode(&row)
			resp.Body.Close()
			if err == nil && resp.StatusCode == http.StatusOK && row.IsFetched == 1 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("row %s not synced within 20s (status %d, %v)", id, resp.StatusCode, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// css is a CSS selector for the first match.
func css(sel string) chromedp.CSS { return chromedp.CSS(sel) }

func TestBrowserTable(t *testing.T) {
	chromium := needBrowser(t)
	base := startNode(t)
	ctx := newBrowser(t, chromium)

	// Load the table (polling every 300 ms).
	run(t, ctx, "load the table", 30*time.Second,
		chromedp.Navigate(base+"/?poll=300"),
		chromedp.WaitVisible(css(`body[data-ready="1"]`)),
		chromedp.WaitVisible(css(`#rows tbody`)),
	)

	// Add a row that fires every second into the outbox.
	run(t, ctx, "add a row", 20*time.Second,
		chromedp.SendKeys(css(`#add-fields input[name="title"]`), "browser memo"),
		chromedp.SendKeys(css(`#add-fields input[name="content"]`), "hello from chromium"),
		chromedp.SendKeys(css(`#add-fields input[name="when"]`), "every 1s"),
		chromedp.SetValue(css(`#add-fields select[name="channel"]`), "outbox"),
		chromedp.Click(css(`#add-button`)),
		chromedp.WaitVisible(chromedp.Search(`//table[@id="rows"]//td[text()="browser memo"]`)),
	)
	id := get(t, ctx, "read the new row's id",
		chromedp.Evaluate[string](`cronsheet.table.rows().data().toArray().find(r => r.fields.title === "browser memo").id`))
	tr := fmt.Sprintf(`#rows tbody tr[id=%q]`, id)

	// The status updates by itself after a fire: the row's state, last fire
	// as a relative time, last status.
	run(t, ctx, "see the status after a fire", 30*time.Second,
		chromedp.WaitVisible(css(tr+` td:nth-child(8) .st-enabled`)),
		chromedp.WaitVisible(css(tr+` td:nth-child(10) time`)),
		chromedp.WaitVisible(css(tr+` td:nth-child(9) time`)),
	)
	lastStatus := get(t, ctx, "read the last status", chromedp.Text(css(tr+` td:nth-child(11)`)))
	lastFireTitle := get(t, ctx, "read the last fire", chromedp.AttributeValue(css(tr+` td:nth-child(10) time`), "title")).Value
	if lastStatus == "" || !strings.Contains(lastFireTitle, "Z)") {
		t.Errorf("last status %q, last fire title %q; want a status and the exact instant", lastStatus, lastFireTitle)
	}

	// Edit the title: click, type, Enter.
	run(t, ctx, "edit a cell", 20*time.Second,
		jsClick(tr+` td:nth-child(2)`),
		chromedp.WaitVisible(css(tr+` td.editing input`)),
		chromedp.Clear(css(tr+` td.editing input`)),
		chromedp.SendKeys(css(tr+` td.editing input`), "edited memo"+kb.Enter),
		chromedp.WaitNotPresent(css(tr+` td.editing`)),
		waitJS(fmt.Sprintf(`document.querySelector(%q).textContent === "edited memo"`, `#rows tbody tr[id="`+id+`"] td:nth-child(2)`)),
	)

	// A typo in the schedule is refused beside the cell; what was typed stays.
	run(t, ctx, "see a validation error", 20*time.Second,
		jsClick(tr+` td:nth-child(4)`),
		chromedp.WaitVisible(css(tr+` td.editing input`)),
		chromedp.Clear(css(tr+` td.editing input`)),
		chromedp.SendKeys(css(tr+` td.editing input`), "dayly 8:00"),
		chromedp.WaitVisible(css(tr+` td.editing .preview`)),
		chromedp.SendKeys(css(tr+` td.editing input`), kb.Enter),
		waitJS(fmt.Sprintf(`(document.querySelector(%q) || {}).textContent > ""`, tr+` td.editing .cell-error`)),
	)
	msg := get(t, ctx, "read the error", chromedp.Text(css(tr+` td.editing .cell-error`)))
	typed := get(t, ctx, "read the input", chromedp.Value(css(tr+` td.editing input`)))
	if !strings.Contains(msg, "dayly") || typed != "dayly 8:00" {
		t.Errorf("error %q, input %q; want the server's message and the typed text kept", msg, typed)
	}
	// Polling goes on while the edit stays open and keeps it.
	polls := get(t, ctx, "count polls", chromedp.Evaluate[int](`cronsheet.polls()`))
	run(t, ctx, "keep the open edit across polls", 10*time.Second,
		waitJS(fmt.Sprintf(`cronsheet.polls() >= %d`, polls+3)))
	typed = get(t, ctx, "read the input again", chromedp.Value(css(tr+` td.editing input`)))
	if typed != "dayly 8:00" {
		t.Errorf("after polling the input holds %q", typed)
	}
	run(t, ctx, "cancel with Esc", 10*time.Second,
		chromedp.SendKeys(css(tr+` td.editing input`), kb.Escape),
		chromedp.WaitNotPresent(css(tr+` td.editing`)),
		waitJS(fmt.Sprintf(`document.querySelector(%q).textContent === "every 1s"`, tr+` td:nth-child(4)`)),
	)

	// The runs drawer lists the row's fires.
	run(t, ctx, "open the runs drawer", 20*time.Second,
		jsClick(tr+` button.runs`),
		chromedp.WaitVisible(css(`#drawer #runs tbody tr.run-done`)),
	)

	// Run now: the row's task fires by hand; the drawer shows a manual run.
	run(t, ctx, "run now", 20*time.Second,
		jsClick(tr+` button.run-now`),
		waitJS(`document.getElementById("notice").textContent.includes("triggered")`),
		waitJS(`[...document.querySelectorAll("#drawer #runs tbody tr")].some(tr => tr.children[1] && tr.children[1].textContent === "manual")`),
	)

	// Export the current view as CSV.
	csvText := get(t, ctx, "export csv", chromedp.Evaluate[string](
		`fetch(cronsheet.exportURL()).then(r => r.text())`, chromedp.EvalAwaitPromise))
	// The export is a backup: every mapped field, whatever the view shows.
	// (fetch's text() drops the byte order mark the file starts with.)
	header, rest, _ := strings.Cut(strings.TrimPrefix(csvText, "\uFEFF"), "\n")
	if header != "memo_id,title,content,tz,when,repeat,channel,to,active,start,end,timeout,retries,misfire,overlap,"+
		"targets,alert,alert_to,alert_after,alert_absent,params,is_active,next_fire,last_fire,last_status,error" ||
		!strings.Contains(rest, id+",edited memo,hello from chromium,UTC,every 1s,,outbox,") {
		t.Errorf("csv export:\n%s", csvText)
	}

	// Take a screenshot while the row is armed.
	png := get(t, ctx, "screenshot", chromedp.FullScreenshot(100))
	shot := filepath.Join(t.TempDir(), "table.png")
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot of the table: %s", shot)
	fmt.Printf("browser test screenshot: %s\n", shot)
	// t.TempDir goes away with the test; CRONSHEET_ARTIFACTS keeps a copy.
	if dir := os.Getenv("CRONSHEET_ARTIFACTS"); dir != "" {
		keep := filepath.Join(dir, "webtable-table.png")
		if err := os.MkdirAll(dir, 0o755); err == nil {
			if err := os.WriteFile(keep, png, 0o644); err == nil {
				t.Logf("screenshot kept at %s", keep)
			}
		}
	}

	// Toggle active off: the row turns Paused once synced.
	run(t, ctx, "toggle active", 20*time.Second,
		jsClick(tr+` input.act-switch`),
		// Paused once the sync patrol has taken the edit and a poll brought it.
		waitJS(fmt.Sprintf(`(document.querySelector(%q) || {}).textContent === "Paused"`, tr+` td:nth-child(8) .st`)),
		waitJS(fmt.Sprintf(`!document.querySelector(%q).checked`, tr+` input.act-switch`)),
	)
	// Run now on a row that is off is not offered; the button says why.
	run(t, ctx, "run now not offered", 20*time.Second,
		waitJS(fmt.Sprintf(`(b => b.disabled && b.title.includes("Switched off"))(document.querySelector(%q))`, tr+` button.run-now`)),
	)

	// Import a CSV file from the page: a bad line is listed, nothing written;
	// a good file adds its rows.
	run(t, ctx, "import a csv file with an error", 20*time.Second,
		chromedp.Evaluate[chromedp.Void](`cronsheet.importCSV(new Blob(["memo_id,title,when\nm-bulk1,one,every 1h\nm-bulk2,two,dayly 8:00\n"], {type: "text/csv"}))`),
		waitJS(`[...document.querySelectorAll("#import-errors li")].some(li => li.textContent.startsWith("line 3 (when): ") && li.textContent.includes("dayly"))`),
	)
	run(t, ctx, "import a good csv file", 20*time.Second,
		chromedp.Evaluate[chromedp.Void](`cronsheet.importCSV(new Blob(["memo_id,title,when\nm-bulk1,one,every 1h\nm-bulk2,two,every 2h\n"], {type: "text/csv"}))`),
		chromedp.WaitVisible(css(`#rows tbody tr[id="m-bulk1"] td:nth-child(8) .st-enabled`)),
		chromedp.WaitVisible(css(`#rows tbody tr[id="m-bulk2"] td:nth-child(8) .st-enabled`)),
		waitJS(`document.getElementById("import-errors").hidden`),
	)

	// Bulk: tick the two imported rows and deactivate them, once the sync
	// patrol has taken the import (on FerretDB v1 an update that races
	// another update of the same document can be lost: docs/FERRETDB.md).
	waitSynced(t, base, "m-bulk1", "m-bulk2")
	run(t, ctx, "bulk deactivate two rows", 30*time.Second,
		jsClick(`#rows tbody tr[id="m-bulk1"] input.sel-row`),
		jsClick(`#rows tbody tr[id="m-bulk2"] input.sel-row`),
		waitJS(`cronsheet.selected().length === 2 && !document.getElementById("bulk").hidden`),
		jsClick(`#bulk-deactivate`),
		waitJS(`(document.querySelector('#rows tbody tr[id="m-bulk1"] td:nth-child(8) .st') || {}).textContent === "Paused"`),
		waitJS(`(document.querySelector('#rows tbody tr[id="m-bulk2"] td:nth-child(8) .st') || {}).textContent === "Paused"`),
		waitJS(`!document.querySelector('#rows tbody tr[id="m-bulk1"] input.act-switch').checked`),
		waitJS(`cronsheet.selected().length === 0 && document.getElementById("bulk").hidden`),
	)
	if st := get(t, ctx, "read the first row's status", chromedp.Text(css(tr+` td:nth-child(8) .st`))); st != "Paused" {
		// The first row was switched off above; the bulk action left it alone.
		t.Errorf("first row status = %q", st)
	}

	// Delete with confirmation.
	run(t, ctx, "delete the row", 20*time.Second,
		jsClick(tr+` button.del`),
		jsClick(tr+` button.del-yes`),
		chromedp.WaitNotPresent(css(tr)),
	)

	// Simplified Chinese: the page's strings and DataTables' own (from its
	// i18n file, npm datatables.net-plugins) switch together.
	// (The switch stores the choice and reloads; the test does the same
	// with a navigation it can wait for.)
	run(t, ctx, "switch to Chinese", 20*time.Second,
		chromedp.Evaluate[chromedp.Void](`localStorage.setItem("cronsheet.lang", "zh")`),
		chromedp.Navigate(base+"/?poll=300"),
		waitJS(`document.documentElement.lang === "zh-CN"`),
		waitJS(`(document.querySelector(".dt-search label") || {}).textContent === "搜索:"`),
		waitJS(`(document.querySelector("#rows tbody tr button.run-now") || {}).textContent === "立即运行"`),
	)
}

// openNodeStore opens a second handle on the store a node started by
// startNodeWith runs on (cfg as the node got it), for writes the API does
// not make, closed when t ends.
func openNodeStore(t *testing.T, cfg config.Config) store.Product {
	t.Helper()
	var st store.Product
	if cfg.Store.Driver == "mongo" {
		s, err := mongo.Open(t.Context(), mongo.Config{URI: cfg.Store.URI, Database: cfg.Store.Database})
		if err != nil {
			t.Fatalf("open the node's store: %v", err)
		}
		st = s
	} else {
		s, err := sqlite.Open(t.Context(), cfg.Store.Path)
		if err != nil {
			t.Fatalf("open the node's store: %v", err)
		}
		st = s
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// requestLog counts the tab's requests by path prefix.
type requestLog struct {
	mu   sync.Mutex
	urls []string
}

func listenRequests(t *testing.T, ctx context.Context) *requestLog {
	t.Helper()
	l := &requestLog{}
	err := chromedp.Listen(ctx, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			l.mu.Lock()
			l.urls = append(l.urls, e.Request.Method+" "+e.Request.URL)
			l.mu.Unlock()
		}
	})
	if err != nil {
		t.Fatalf("listen to the network: %v", err)
	}
	return l
}

// matching returns the requests so far whose URL contains part.
func (l *requestLog) matching(part string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, u := range l.urls {
		if strings.Contains(u, part) {
			out = append(out, u)
		}
	}
	return out
}

// TestBrowserRowStates: each row shows one state,
// as a word and a colour, with its reason written in the row; a row that
// nothing will fire shows "—, not scheduled" and does not offer Run now
// (the button's title says why); the states come with the page, so no
// table draw asks /api/v1/tasks/ per row; in English and in Simplified
// Chinese, without a console error.
func TestBrowserRowStates(t *testing.T) {
	chromium := needBrowser(t)
	var cfg config.Config
	base := startNodeWith(t, func(c *config.Config) { cfg = *c })
	st := openNodeStore(t, cfg)

	postRow := func(body string) {
		t.Helper()
		postJSON(t, base, "/api/v1/scenarios/memos/rows", body, http.StatusCreated)
	}
	postRow(`{"memo_id":"s-fine","title":"fine memo","content":"c","when":"every 1h","channel":"outbox"}`)
	postRow(`{"memo_id":"s-off","title":"off memo","content":"c","when":"every 1h","channel":"outbox","active":0}`)
	// A row in error reaches the store by another path than the rows API
	// (which may refuse it): its schedule has a typo.
	bad := &task.Row{Scenario: "memos", ID: "s-bad", IsActive: 1, Fields: map[string]any{
		"memo_id": "s-bad", "title": "bad memo", "content": "c", "when": "dayly 8:00", "channel": "outbox"}}
	if err := st.InsertRow(t.Context(), bad); err != nil {
		t.Fatal(err)
	}
	postRow(`{"memo_id":"s-stop","title":"stopped memo","content":"c","when":"every 1h","channel":"outbox"}`)
	postRow(`{"memo_id":"s-closed","title":"closed memo","content":"c","when":"every 1h","channel":"outbox"}`)
	postRow(`{"memo_id":"s-done","title":"done memo","content":"c","when":"in 1s","channel":"outbox"}`)
	waitSynced(t, base, "s-fine", "s-off", "s-bad", "s-stop", "s-closed", "s-done")
	for id, state := range map[string]string{"s-stop": "stopped", "s-closed": "closed"} {
		req, _ := http.NewRequest(http.MethodPut, base+"/api/v1/tasks/"+id+"/state", strings.NewReader(`{"state":"`+state+`"}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("PUT state of %s: %d", id, resp.StatusCode)
		}
	}

	ctx := newBrowser(t, chromium)
	console := listenConsole(t, ctx)
	requests := listenRequests(t, ctx)
	row := func(id string) string { return fmt.Sprintf(`#rows tbody tr[id=%q]`, id) }
	text := func(sel string) string {
		return fmt.Sprintf(`((document.querySelector(%q) || {}).textContent || "")`, sel)
	}
	for _, lang := range []struct {
		code, enabled, paused, closed, errWord, done, off, stopped, notScheduled, cannot string
	}{
		{"en", "Enabled", "Paused", "Closed", "Error", "Done", "Switched off: nothing fires.",
			"Task stopped: it fires only on Run now.", "—, not scheduled", "Cannot run: "},
		{"zh", "已启用", "已暂停", "已关闭", "错误", "已完成", "已停用：不会触发。",
			"任务已停止：只在“立即运行”时触发。", "—，未排程", "无法运行："},
	} {
		t.Run(lang.code, func(t *testing.T) {
			tasksBefore := len(requests.matching("/api/v1/tasks/"))
			tablesBefore := len(requests.matching("/table?"))
			run(t, ctx, "load the table", 30*time.Second,
				chromedp.Navigate(base+"/?poll=300"),
				chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`localStorage.setItem("cronsheet.lang", %q)`, lang.code)),
				chromedp.Navigate(base+"/?poll=300"),
				chromedp.WaitVisible(css(`body[data-ready="1"]`)),
				// The fine row is armed once publish has mirrored its next fire.
				waitJS(fmt.Sprintf(`!!document.querySelector(%q)`, row("s-fine")+` td:nth-child(9) time`)),
				waitJS(text(row("s-bad")+` td:nth-child(8) .st`)+fmt.Sprintf(` === %q`, lang.errWord)),
				// The once row is done when its only run is over.
				waitJS(text(row("s-done")+` td:nth-child(8) .st`)+fmt.Sprintf(` === %q`, lang.done)),
			)
			checks := []struct {
				what, expr, want string
			}{
				{"fine state", text(row("s-fine") + ` td:nth-child(8) .st`), lang.enabled},
				{"fine state colour", fmt.Sprintf(`document.querySelector(%q).className`, row("s-fine")+` td:nth-child(8) .st`), "st st-enabled"},
				{"fine reason", fmt.Sprintf(`String(document.querySelectorAll(%q).length)`, row("s-fine")+` td:nth-child(8) .st-why`), "0"},
				{"fine run now", fmt.Sprintf(`String(document.querySelector(%q).disabled)`, row("s-fine")+` button.run-now`), "false"},
				{"off state", text(row("s-off") + ` td:nth-child(8) .st`), lang.paused},
				{"off state colour", fmt.Sprintf(`document.querySelector(%q).className`, row("s-off")+` td:nth-child(8) .st`), "st st-paused"},
				{"off reason", text(row("s-off") + ` td:nth-child(8) .st-why`), lang.off},
				{"off next fire", text(row("s-off") + ` td:nth-child(9)`), lang.notScheduled},
				{"off run now", fmt.Sprintf(`(b => b.disabled + " " + b.title)(document.querySelector(%q))`, row("s-off")+` button.run-now`),
					"true " + lang.cannot + lang.off},
				{"bad state colour", fmt.Sprintf(`document.querySelector(%q).className`, row("s-bad")+` td:nth-child(8) .st`), "st st-error"},
				{"bad next fire", text(row("s-bad") + ` td:nth-child(9)`), lang.notScheduled},
				{"bad run now", fmt.Sprintf(`String(document.querySelector(%q).disabled)`, row("s-bad")+` button.run-now`), "true"},
				{"bad params", fmt.Sprintf(`String(document.querySelector(%q).disabled)`, row("s-bad")+` button.run-params`), "true"},
				// A stopped task is paused but still runs by hand.
				{"stopped state", text(row("s-stop") + ` td:nth-child(8) .st`), lang.paused},
				{"stopped reason", text(row("s-stop") + ` td:nth-child(8) .st-why`), lang.stopped},
				{"stopped next fire", text(row("s-stop") + ` td:nth-child(9)`), lang.notScheduled},
				{"stopped run now", fmt.Sprintf(`String(document.querySelector(%q).disabled)`, row("s-stop")+` button.run-now`), "false"},
				{"closed state colour", fmt.Sprintf(`document.querySelector(%q).className`, row("s-closed")+` td:nth-child(8) .st`), "st st-closed"},
				{"closed state", text(row("s-closed") + ` td:nth-child(8) .st`), lang.closed},
				{"closed next fire", text(row("s-closed") + ` td:nth-child(9)`), lang.notScheduled},
				{"closed run now", fmt.Sprintf(`String(document.querySelector(%q).disabled)`, row("s-closed")+` button.run-now`), "true"},
				{"done state colour", fmt.Sprintf(`document.querySelector(%q).className`, row("s-done")+` td:nth-child(8) .st`), "st st-done"},
				{"done next fire", text(row("s-done") + ` td:nth-child(9)`), lang.notScheduled},
				{"done run now", fmt.Sprintf(`String(document.querySelector(%q).disabled)`, row("s-done")+` button.run-now`), "true"},
			}
			for _, c := range checks {
				if got := get(t, ctx, c.what, chromedp.Evaluate[string](c.expr)); got != c.want {
					t.Errorf("%s: %q, want %q", c.what, got, c.want)
				}
			}
			// The reason is written in the row, not only in a tooltip: the
			// sync patrol's message about the typo.
			why := get(t, ctx, "bad reason", chromedp.Evaluate[string](text(row("s-bad")+` td:nth-child(8) .st-why`)))
			title := get(t, ctx, "bad run now title", chromedp.Evaluate[string](
				fmt.Sprintf(`document.querySelector(%q).title`, row("s-bad")+` button.run-now`)))
			if !strings.Contains(why, "dayly") || title != lang.cannot+why {
				t.Errorf("bad row: reason %q, Run now title %q; want the schedule's error in both", why, title)
			}
			visible := get(t, ctx, "bad reason shown", chromedp.Evaluate[bool](fmt.Sprintf(
				`(el => el.offsetHeight > 0 && getComputedStyle(el).display === "block")(document.querySelector(%q))`,
				row("s-bad")+` td:nth-child(8) .st-why`)))
			if !visible {
				t.Errorf("bad row: the reason is not shown under the state")
			}
			screenshot(t, ctx, "row-states-"+lang.code)

			// Draws: polls, a redraw, a sort and back, a page length change.
			polls := get(t, ctx, "count polls", chromedp.Evaluate[int](`cronsheet.polls()`))
			run(t, ctx, "draw the table again", 30*time.Second,
				waitJS(fmt.Sprintf(`cronsheet.polls() >= %d`, polls+3)),
				chromedp.Evaluate[chromedp.Void](`void cronsheet.table.ajax.reload(null, false)`),
				chromedp.Evaluate[chromedp.Void](`void cronsheet.table.order([1, "desc"]).draw()`),
				waitJS(`cronsheet.table.order()[0][0] === 1`),
				chromedp.Evaluate[chromedp.Void](`void cronsheet.table.order([0, "asc"]).page.len(10).draw()`),
				waitJS(`cronsheet.table.page.len() === 10`),
				waitJS(fmt.Sprintf(`!!document.querySelector(%q)`, row("s-fine")+` td:nth-child(9) time`)),
				waitJS(fmt.Sprintf(`cronsheet.polls() >= %d`, polls+5)),
			)
			if got := requests.matching("/api/v1/tasks/")[tasksBefore:]; len(got) > 0 {
				t.Errorf("the table's load and draws asked for tasks one by one: %q", got)
			}
			if n := len(requests.matching("/table?")) - tablesBefore; n < 5 {
				t.Errorf("%d table requests while drawing, want at least 5 (polls and draws)", n)
			}
			if errs := console.take(); len(errs) > 0 {
				t.Errorf("console errors: %q", errs)
			}
		})
	}
}
