package webtable_test

import (
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// TestBrowserAPIDocs loads the API reference (/api/docs) in English and
// 简体中文 and asserts that Swagger UI renders every operation of
// /api/v1/openapi.json, with no console error, and that everything the
// page loads comes from the node itself (no CDN: it works offline).
func TestBrowserAPIDocs(t *testing.T) {
	chromium := needBrowser(t)
	base := startNode(t)
	ctx := newBrowser(t, chromium)
	problems := listenTab(t, ctx, true)
	var mu sync.Mutex
	var foreign []string
	if err := chromedp.Listen(ctx, func(ev any) {
		if ev, ok := ev.(*network.EventRequestWillBeSent); ok {
			u, err := url.Parse(ev.Request.URL)
			if err == nil && u.Scheme != "data" && "http://"+u.Host != base {
				mu.Lock()
				foreign = append(foreign, ev.Request.URL)
				mu.Unlock()
			}
		}
	}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Paths map[string]map[string]any `json:"paths"`
	}
	getDoc(t, base+"/api/v1/openapi.json", &doc)
	ops := 0
	for _, item := range doc.Paths {
		for m := range item {
			if m != "parameters" {
				ops++
			}
		}
	}
	for lang, about := range map[string]string{"en": "The REST API's reference", "zh": "REST API 参考"} {
		t.Run(lang, func(t *testing.T) {
			run(t, ctx, "set the language", 20*time.Second,
				chromedp.Navigate(base+"/login"),
				chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`localStorage.setItem("cronsheet.lang", %q)`, lang)),
			)
			problems.take()
			run(t, ctx, "load /api/docs", 30*time.Second,
				chromedp.Navigate(base+"/api/docs"),
				waitJS(`document.body && document.body.dataset.ready === "1"`),
			)
			if n := get(t, ctx, "count the operations", chromedp.Evaluate[int](`document.querySelectorAll("#swagger-ui .opblock").length`)); n != ops {
				t.Errorf("Swagger UI shows %d operations, the document has %d", n, ops)
			}
			if got := get(t, ctx, "read the about line", chromedp.Evaluate[string](`document.getElementById("api-about").textContent`)); !strings.HasPrefix(got, about) {
				t.Errorf("about line = %q, want it to start %q", got, about)
			}
			for _, p := range problems.take() {
				t.Errorf("%s", p)
			}
		})
	}
	mu.Lock()
	defer mu.Unlock()
	if len(foreign) > 0 {
		t.Errorf("the page loaded from elsewhere than the node: %v", foreign)
	}
}
