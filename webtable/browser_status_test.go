package webtable_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/gin-gonic/gin"

	"cronsheet/static"
	"cronsheet/webtable"
)

// statusHealthy is a GET /api/v1/status answer in the shape package server
// writes (flow.Stats has no JSON tags, so its keys are Go's names).
const statusHealthy = `{
  "node": "node-a",
  "store": {"driver": "sqlite", "ok": true},
  "armed": 7,
  "pending_jobs": 2,
  "next_due": [{"id": "job-next-1", "due_at": "2099-01-01T00:00:00Z"}, {"id": "job-next-2", "due_at": "2099-01-02T00:00:00Z"}],
  "running": ["job-run-1"],
  "failed": [],
  "dead": ["job-dead-1"],
  "queues": {"Groups": {"mail": {"InFlight": 2, "Waiting": 5, "Limit": 3}}, "Hosts": {"api.example.com": {"Waiting": 4}}},
  "last_errors": [{"at": "2026-03-07T08:30:00Z", "task_id": "job-dead-1", "trigger_id": "tr_9",
    "state": "dead", "error": "post http://api.example.com/hook: connection refused"}]
}`

// statusDown is the answer (a 503) once the store fails.
const statusDown = `{
  "node": "node-a",
  "store": {"driver": "sqlite", "ok": false, "error": "ping: disk I/O error"},
  "armed": 7, "pending_jobs": 0, "next_due": [],
  "running": [], "failed": ["job-failed-1"], "dead": ["job-dead-1", "job-dead-2"],
  "queues": {"Groups": {}, "Hosts": {}},
  "last_errors": []
}`

// statusServer serves the pages, a status document the test can swap, and
// GET /api/v1/jobs/:id for the dead jobs.
type statusServer struct {
	mu   sync.Mutex
	code int
	body string
}

func (s *statusServer) set(code int, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.code, s.body = code, body
}

func startStatusPages(t *testing.T) (*statusServer, string) {
	t.Helper()
	s := &statusServer{code: http.StatusOK, body: statusHealthy}
	engine := gin.New()
	webtable.NewPages(static.FS).Register(engine)
	engine.GET("/api/v1/status", func(c *gin.Context) {
		s.mu.Lock()
		code, body := s.code, s.body
		s.mu.Unlock()
		c.Data(code, "application/json; charset=utf-8", []byte(body))
	})
	engine.GET("/api/v1/jobs/:id", func(c *gin.Context) {
		id := c.Param("id")
		if !strings.HasPrefix(id, "job-dead-") {
			c.JSON(http.StatusNotFound, gin.H{"error": "job " + id + " not found"})
			return
		}
		c.JSON(http.StatusOK, gin.H{"id": id, "state": "dead", "method": "POST", "name": "http://api.example.com/hook",
			"attempts": 3, "max_retries": 2, "error": "connection refused",
			"events": []gin.H{{"job_id": id, "at": "2026-03-07T08:30:00Z", "state": "dead", "reason": "dead: connection refused"}}})
	})
	srv := httptest.NewServer(engine)
	t.Cleanup(srv.Close)
	return s, srv.URL
}

// textOf is a JavaScript expression for the text of the element with id.
func textOf(id string) string {
	return fmt.Sprintf(`document.getElementById(%q).textContent`, id)
}

func TestBrowserStatus(t *testing.T) {
	chromium := needBrowser(t)
	st, base := startStatusPages(t)
	ctx := newBrowser(t, chromium)

	run(t, ctx, "load the status page", 30*time.Second,
		chromedp.Navigate(base+"/status?poll=200"),
		chromedp.WaitVisible(css(`body[data-ready="1"]`)),
		waitJS(textOf("st-store")+`.includes("sqlite")`),
	)
	for _, c := range []struct{ name, expr, want string }{
		{"store", textOf("st-store"), "sqlite ok"},
		{"node", textOf("st-node"), "node-a"},
		{"armed", textOf("st-armed"), "7"},
		{"pending", textOf("st-pending"), "2"},
		{"next due", `[...document.querySelectorAll("#next-due a.job-link")].map(a => a.textContent).join(",")`, "job-next-1,job-next-2"},
		{"running", `[...document.querySelectorAll("#running a")].map(a => a.textContent).join(",")`, "job-run-1"},
		{"failed", textOf("failed"), "none"},
		{"dead", `[...document.querySelectorAll("#dead a")].map(a => a.getAttribute("href")).join(",")`, "/api/v1/jobs/job-dead-1"},
		{"dead count", textOf("dead-count"), "(1)"},
		{"group", `document.querySelector('#groups tr[data-group="mail"]').innerText.replace(/\s+/g, " ").trim()`, "mail 2 5 3"},
		{"host", `document.querySelector("#hosts tbody").innerText.replace(/\s+/g, " ").trim()`, "api.example.com 4"},
		{"last error", `document.querySelector("#last-errors tbody td:last-child").textContent`,
			"post http://api.example.com/hook: connection refused"},
		{"last error trigger", `document.querySelector("#last-errors tbody a").getAttribute("href")`, "/runs?trigger_id=tr_9"},
		{"header link", `document.querySelector('nav a[href="/status"]').className`, "here"},
	} {
		if got := get(t, ctx, "read "+c.name, chromedp.Evaluate[string](c.expr)); got != c.want {
			t.Errorf("%s = %q, want %q", c.name, got, c.want)
		}
	}

	run(t, ctx, "open a dead job", 20*time.Second,
		jsClick(`#dead a[data-job="job-dead-1"]`),
		waitJS(`document.getElementById("job-json").dataset.job === "job-dead-1"`),
	)
	detail := get(t, ctx, "read the job", chromedp.Evaluate[string](textOf("job-json")))
	if !strings.Contains(detail, `"state": "dead"`) || !strings.Contains(detail, `"attempts": 3`) {
		t.Errorf("job detail = %s", detail)
	}
	if u := get(t, ctx, "read the URL", chromedp.Evaluate[string](`location.search`)); !strings.Contains(u, "job=job-dead-1") {
		t.Errorf("URL query = %q, want the open job", u)
	}
	screenshot(t, ctx, "status")

	// The page polls: the store failing (a 503 with the status) shows.
	st.set(http.StatusServiceUnavailable, statusDown)
	run(t, ctx, "see the store fail", 20*time.Second,
		waitJS(`!!document.querySelector('#dead a[data-job="job-dead-2"]')`),
		waitJS(textOf("st-store")+`.includes("disk I/O error")`),
		waitJS(textOf("last-errors")+`.includes("none")`),
		waitJS(textOf("groups")+`.includes("none")`),
	)
	if got := get(t, ctx, "read the store", chromedp.Evaluate[string](`document.querySelector("#st-store .last-bad").textContent`)); got != "unavailable" {
		t.Errorf("store state = %q, want unavailable", got)
	}
	if got := get(t, ctx, "read the detail", chromedp.Evaluate[string](textOf("job-id"))); got != "job-dead-1" {
		t.Errorf("the detail changed with the poll: %q", got)
	}

	// 简体中文: the page comes back translated, with the open job (kept in
	// its URL). The language switch stores the choice and reloads; the
	// test does the same with a navigation it can wait for.
	st.set(http.StatusOK, statusHealthy)
	here := get(t, ctx, "read the URL", chromedp.Evaluate[string](`location.href`))
	run(t, ctx, "switch to Chinese", 30*time.Second,
		chromedp.Evaluate[chromedp.Void](`localStorage.setItem("cronsheet.lang", "zh")`),
		chromedp.Navigate(here),
		waitJS(`document.documentElement.lang === "zh-CN" && document.body.dataset.ready === "1"`),
		waitJS(textOf("st-store")+` === "sqlite 正常"`),
		waitJS(`document.getElementById("job-json").dataset.job === "job-dead-1"`),
	)
	for _, c := range []struct{ name, expr, want string }{
		{"nav", `document.querySelector('nav a[href="/status"]').textContent`, "状态"},
		{"dead heading", `document.querySelector('[data-i18n="st.dead"]').textContent`, "死信"},
		{"errors heading", `document.querySelector('[data-i18n="st.errors"]').textContent`, "最近错误"},
		{"dead job", `document.querySelector("#dead a").textContent`, "job-dead-1"},
		{"failed", textOf("failed"), "无"},
	} {
		if got := get(t, ctx, "read "+c.name, chromedp.Evaluate[string](c.expr)); got != c.want {
			t.Errorf("%s = %q, want %q", c.name, got, c.want)
		}
	}
	if errs := get(t, ctx, "read script errors", chromedp.Evaluate[string](`JSON.stringify(window.cronsheetErrors)`)); errs != "[]" {
		t.Errorf("script errors: %s", errs)
	}
	screenshot(t, ctx, "status-zh")
}
