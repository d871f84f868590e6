package webtable_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"cronsheet/config"
)

// TestBrowserTargetHealth shows the targets' health on the targets page,
// in English and in 简体中文, without a console error: a target whose
// two deliveries got HTTP 500 (counted at the hook) reads "2 failures in
// a row" with the error and a red dot; a target that answered 200, and
// whose probe answered too, reads OK with a green dot and its probe line.
func TestBrowserTargetHealth(t *testing.T) {
	chromium := needBrowser(t)
	var bad, good, probes atomic.Int32
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodHead:
			probes.Add(1)
		case r.URL.Path == "/bad":
			bad.Add(1)
			w.WriteHeader(http.StatusInternalServerError)
		default:
			good.Add(1)
		}
	}))
	t.Cleanup(hook.Close)
	base := startNodeWith(t, func(c *config.Config) { c.HTTP.Allow = []string{"127.0.0.0/8"} })
	postJSON(t, base, "/api/v1/targets", `{"id":"bad-hook","kind":"http","state":"running","http":{"method":"POST","url":"`+
		hook.URL+`/bad"}}`, http.StatusCreated)
	postJSON(t, base, "/api/v1/targets", `{"id":"good-hook","kind":"http","state":"running","http":{"method":"POST","url":"`+
		hook.URL+`/good"},"probe":{"interval":"10s","path":"/up"}}`, http.StatusCreated)
	postJSON(t, base, "/api/v1/scenarios/memos/rows",
		`{"memo_id":"th-1","content":"ping","when":"daily 03:00","targets":"bad-hook,good-hook","retries":0}`, http.StatusCreated)
	waitSynced(t, base, "th-1")
	for range 2 {
		postJSON(t, base, "/api/v1/tasks/th-1/trigger", `{}`, http.StatusAccepted)
	}
	waitHealth(t, base, func(bad, good map[string]any) bool {
		probe, _ := good["probe"].(map[string]any)
		return bad["failures_in_a_row"] == 2.0 && good["last_success"] != nil && probe != nil && probe["last_success"] != nil
	})
	if b, g, p := bad.Load(), good.Load(), probes.Load(); b != 2 || g != 2 || p < 1 {
		t.Fatalf("the hook counted %d bad, %d good deliveries and %d probes; want 2, 2, at least 1", b, g, p)
	}

	ctx := newBrowser(t, chromium)
	problems := listenTab(t, ctx, true)
	want := map[string][]string{
		"en": {"2 failures in a row, last:", "HTTP 500", "OK ", "probe: OK "},
		"zh": {"连续失败 2 次，最近：", "HTTP 500", "正常（", "探测：正常（"},
	}
	for _, lang := range []string{"en", "zh"} {
		t.Run(lang, func(t *testing.T) {
			run(t, ctx, "set the language", 20*time.Second,
				chromedp.Navigate(base+"/login"),
				chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`localStorage.setItem("cronsheet.lang", %q)`, lang)),
			)
			problems.take()
			run(t, ctx, "load the targets page", 30*time.Second,
				chromedp.Navigate(base+"/targets"),
				waitJS(`document.body && document.body.dataset.ready === "1" && !!document.querySelector('#targets tr[id="good-hook"]')`),
			)
			cell := func(id string) string {
				return get(t, ctx, "read "+id+"'s health", chromedp.Evaluate[string](fmt.Sprintf(
					`(() => { const tr = document.querySelector('#targets tr[id=%q]'); const h = tr.querySelectorAll(".health");
					  return Array.from(h).map((s) => s.textContent + "|" + s.querySelector(".dot").className).join("\n"); })()`, id)))
			}
			badText, goodText := cell("bad-hook"), cell("good-hook")
			w := want[lang]
			if !strings.Contains(badText, w[0]) || !strings.Contains(badText, w[1]) || !strings.Contains(badText, "dot bad") {
				t.Errorf("bad-hook's health reads %q, want %q with %q and a red dot", badText, w[0], w[1])
			}
			lines := strings.Split(goodText, "\n")
			if len(lines) != 2 || !strings.HasPrefix(lines[0], w[2]) || !strings.Contains(lines[0], "dot ok") ||
				!strings.HasPrefix(lines[1], w[3]) || !strings.Contains(lines[1], "dot ok") {
				t.Errorf("good-hook's health reads %q, want %q and %q lines with green dots", goodText, w[2], w[3])
			}
			heading := get(t, ctx, "read the column", chromedp.Evaluate[string](
				`Array.from(document.querySelectorAll("#targets thead th")).map((th) => th.textContent).join("|")`))
			if wantCol := map[string]string{"en": "|health|", "zh": "|健康|"}[lang]; !strings.Contains(heading, wantCol) {
				t.Errorf("columns %q, want %q", heading, wantCol)
			}
			if errs := get(t, ctx, "read script errors", chromedp.Evaluate[string](`JSON.stringify(window.cronsheetErrors || [])`)); errs != "[]" {
				t.Errorf("script errors: %s", errs)
			}
			for _, p := range problems.take() {
				t.Errorf("%s", p)
			}
		})
	}
}

// waitHealth polls GET /api/v1/targets until ok holds of bad-hook's and
// good-hook's health.
func waitHealth(t *testing.T, base string, ok func(bad, good map[string]any) bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var page struct {
			Targets []struct {
				ID     string         `json:"id"`
				Health map[string]any `json:"health"`
			} `json:"targets"`
		}
		getDoc(t, base+"/api/v1/targets", &page)
		h := map[string]map[string]any{}
		for _, tg := range page.Targets {
			h[tg.ID] = tg.Health
		}
		if ok(h["bad-hook"], h["good-hook"]) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the targets' health did not come within 30s: %v", h)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
