package webtable_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// tableTraffic records the tab's table answers as CDP sees them: status
// and bytes on the wire (headers and body) of each GET …/table. A 304 is
// counted when its headers arrive (Chromium sends no loadingFinished for
// it); a full answer's bytes are updated when it finishes loading.
type tableTraffic struct {
	mu      sync.Mutex
	index   map[network.RequestID]int // into answers
	answers []tableHit
}

type tableHit struct {
	status int64
	bytes  float64
}

func listenTable(t *testing.T, ctx context.Context) *tableTraffic {
	t.Helper()
	l := &tableTraffic{index: map[network.RequestID]int{}}
	err := chromedp.Listen(ctx, func(ev any) {
		l.mu.Lock()
		defer l.mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventResponseReceived:
			if strings.Contains(ev.Response.URL, "/table?") {
				l.index[ev.RequestID] = len(l.answers)
				l.answers = append(l.answers, tableHit{status: ev.Response.Status, bytes: ev.Response.EncodedDataLength})
			}
		case *network.EventLoadingFinished:
			if i, ok := l.index[ev.RequestID]; ok {
				l.answers[i].bytes = max(l.answers[i].bytes, ev.EncodedDataLength)
				delete(l.index, ev.RequestID)
			}
		}
	})
	if err != nil {
		t.Fatalf("listen to the network: %v", err)
	}
	return l
}

// since returns the answers after the first n, and how many there are.
func (l *tableTraffic) since(n int) ([]tableHit, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]tableHit(nil), l.answers[min(n, len(l.answers)):]...), len(l.answers)
}

// TestBrowserDeltaRefresh: the table's poll sends the
// page's tag and an idle page is answered 304 without its rows, counted
// by CDP on the wire and by the page; an edit by another client (the API)
// appears on the page; a slow answer doubles the poll's delay and a fast
// one brings it back; a hidden tab polls every 30 s and at once when shown.
func TestBrowserDeltaRefresh(t *testing.T) {
	chromium := needBrowser(t)
	base := startNode(t)
	for i := range 8 {
		postJSON(t, base, "/api/v1/scenarios/memos/rows", fmt.Sprintf(
			`{"memo_id":"d-%d","title":"delta %d","content":"a memo with some words in it","when":"every 1h","channel":"outbox"}`, i, i),
			http.StatusCreated)
	}
	waitSynced(t, base, "d-0", "d-7")

	ctx := newBrowser(t, chromium)
	console := listenTab(t, ctx, true)
	traffic := listenTable(t, ctx)
	run(t, ctx, "load the table", 30*time.Second,
		chromedp.Navigate(base+"/?poll=300"),
		chromedp.WaitVisible(css(`body[data-ready="1"]`)),
		waitJS(`document.querySelectorAll("#rows tbody tr[id]").length === 8`),
		// Idle once the patrols have mirrored every next fire: polls come
		// back unchanged.
		waitJS(`cronsheet.answers().unchanged >= 3`),
	)
	before := get(t, ctx, "count answers", chromedp.Evaluate[map[string]int](`cronsheet.answers()`))
	_, from := traffic.since(0)
	run(t, ctx, "poll an idle page", 20*time.Second,
		waitJS(fmt.Sprintf(`cronsheet.answers().unchanged >= %d`, before["unchanged"]+8)))
	after := get(t, ctx, "count answers again", chromedp.Evaluate[map[string]int](`cronsheet.answers()`))
	if after["full"] != before["full"] {
		t.Errorf("an idle page got %d full answers to its polls, want none (only 304s)", after["full"]-before["full"])
	}
	hits, _ := traffic.since(from)
	var short float64
	n304 := 0
	for _, h := range hits {
		if h.status != http.StatusNotModified {
			t.Errorf("an idle page's poll was answered %d, want 304", h.status)
			continue
		}
		n304++
		short += h.bytes
	}
	if n304 < 8 {
		t.Fatalf("%d answers 304 seen on the wire, want at least 8", n304)
	}

	// Another client edits a row: the next poll brings it, in full.
	req, _ := http.NewRequest(http.MethodPatch, base+"/api/v1/scenarios/memos/rows/d-3", strings.NewReader(`{"title":"edited elsewhere"}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("PATCH d-3: %d", resp.StatusCode)
	}
	_, from = traffic.since(0)
	run(t, ctx, "see the other client's edit", 20*time.Second,
		waitJS(`(document.querySelector('#rows tbody tr[id="d-3"] td:nth-child(2)') || {}).textContent === "edited elsewhere"`),
		waitJS(fmt.Sprintf(`cronsheet.answers().full > %d`, after["full"])),
	)
	hits, _ = traffic.since(from)
	full := 0.0
	for _, h := range hits {
		if h.status == http.StatusOK {
			full = max(full, h.bytes)
		}
	}
	perPoll := short / float64(n304)
	t.Logf("idle polls: %d answers 304, %.0f bytes each on the wire; a full answer of the page: %.0f bytes", n304, perPoll, full)
	if full == 0 || perPoll*3 > full {
		t.Errorf("a 304 poll costs %.0f bytes, a full page %.0f: want the short answer much shorter", perPoll, full)
	}
	// …and once shown, polls are short again.
	mid := get(t, ctx, "count answers", chromedp.Evaluate[map[string]int](`cronsheet.answers()`))
	run(t, ctx, "idle again", 20*time.Second,
		waitJS(fmt.Sprintf(`cronsheet.answers().unchanged >= %d`, mid["unchanged"]+3)))

	// Slow answers (every answer counts as slow) back off; fast ones
	// come back to the page's period.
	run(t, ctx, "back off while answers are slow", 30*time.Second,
		chromedp.Evaluate[chromedp.Void](`cronsheet.setSlowMS(-1)`),
		waitJS(`cronsheet.pollDelay() >= 2400`),
	)
	gap := get(t, ctx, "time two polls", chromedp.Evaluate[float64](`new Promise((ok) => {
		const n = cronsheet.polls(), t0 = performance.now();
		const iv = setInterval(() => { if (cronsheet.polls() > n) { clearInterval(iv); ok(performance.now() - t0); } }, 20);
	})`, chromedp.EvalAwaitPromise))
	if gap < 600 {
		t.Errorf("backed off to %v, the next poll came after %.0f ms", "≥ 2.4 s", gap)
	}
	// Every answer counts as fast here (a loaded CI took over 500 ms, the
	// page's own bound, to answer some polls).
	run(t, ctx, "fast again", 30*time.Second,
		chromedp.Evaluate[chromedp.Void](`cronsheet.setSlowMS(3600e3)`),
		waitJS(`cronsheet.pollDelay() === 300`),
	)

	// A hidden tab polls slowly; shown, it polls at once.
	run(t, ctx, "hide the tab", 10*time.Second,
		chromedp.Evaluate[chromedp.Void](`Object.defineProperty(document, "hidden", {value: true, configurable: true});
			document.dispatchEvent(new Event("visibilitychange"))`),
		waitJS(`cronsheet.pollDelay() === 30000`),
	)
	_, from = traffic.since(0)
	hiddenPolls := get(t, ctx, "count polls", chromedp.Evaluate[int](`cronsheet.polls()`))
	time.Sleep(1500 * time.Millisecond) // 5 periods of the visible page
	if hits, _ := traffic.since(from); len(hits) > 0 {
		t.Errorf("a hidden tab asked for the table %d times in 1.5 s", len(hits))
	}
	run(t, ctx, "show the tab", 10*time.Second,
		chromedp.Evaluate[chromedp.Void](`delete document.hidden; document.dispatchEvent(new Event("visibilitychange"))`),
		waitJS(fmt.Sprintf(`cronsheet.polls() > %d && cronsheet.pollDelay() === 300`, hiddenPolls)),
	)
	if errs := console.take(); len(errs) > 0 {
		t.Errorf("console errors: %q", errs)
	}
}
