package server

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"cronsheet/config"
	"cronsheet/task"
)

// Header values the reads must never show.
const (
	secretToken = "Bearer s3cret-token-4711"
	secretTrace = "trace-value-0815"
)

// headerHook is a real callback endpoint that keeps the headers of each
// call, by path.
type headerHook struct {
	srv   *httptest.Server
	mu    sync.Mutex
	calls map[string][]http.Header
}

func startHeaderHook(t *testing.T) *headerHook {
	t.Helper()
	h := &headerHook{calls: map[string][]http.Header{}}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.calls[r.URL.Path] = append(h.calls[r.URL.Path], r.Header.Clone())
		h.mu.Unlock()
		_, _ = w.Write([]byte("ok"))
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *headerHook) callsTo(path string) []http.Header {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.calls[path]
}

// wsJob submits msg on the jobs WebSocket and returns every message up to
// and including the job's result push (or the first error answer).
func (b *testBundle) wsJob(t *testing.T, msg string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(b.base, "http")+"/api/v1/jobs/ws", nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer conn.CloseNow()
	if err := conn.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
		t.Fatalf("write: %v", err)
	}
	var out []string
	for {
		_, data, err := conn.Read(ctx)
		if err != nil {
			t.Fatalf("read after %q: %v", out, err)
		}
		out = append(out, string(data))
		var m struct {
			Type string `json:"type"`
		}
		_ = json.Unmarshal(data, &m)
		if m.Type == "result" || m.Type == "error" {
			return out
		}
	}
}

// TestJobHeadersWriteOnly: a job's headers arrive at its hook, through the
// HTTP and the WebSocket doors, and no read shows their values: the
// answers, GET job, the list, the job's events, the tasks API, the run,
// the audit trail, the WebSocket answers and the event sink's documents
// show the names with "***" at most. A key reused with other headers is
// 409 without them; bad headers are 400 naming headers.<name> at both
// doors. On the test driver.
func TestJobHeadersWriteOnly(t *testing.T) {
	h := startHeaderHook(t)
	es := startIndexedSink(t)
	b := setup(t, func(c *config.Config) {
		c.HTTP.Allow = []string{"127.0.0.0/8"}
		c.Events = config.Events{Kind: "http", URL: es.srv.URL + "/_bulk"}
	})
	headers := map[string]string{"Authorization": secretToken, "X-Trace": secretTrace}
	req := map[string]any{"method": "POST", "name": h.srv.URL + "/http", "params": `{"a":1}`, "key": "hk",
		"headers": headers, "wait": 10}
	var reads []string // every body read, checked at the end
	code, body := b.send(t, "POST", "/api/v1/jobs", "", mustJSONText(t, req))
	reads = append(reads, body)
	var v jobView
	if err := json.Unmarshal([]byte(body), &v); err != nil || code != http.StatusCreated || v.State != task.JobDone {
		t.Fatalf("submit: %d %s", code, body)
	}
	if !strings.Contains(body, `"headers":{"Authorization":"***","X-Trace":"***"}`) {
		t.Errorf("the answer does not show the header names masked: %s", body)
	}
	calls := h.callsTo("/http")
	if len(calls) != 1 || calls[0].Get("Authorization") != secretToken || calls[0].Get("X-Trace") != secretTrace {
		t.Fatalf("hook calls = %v, want one with both headers", calls)
	}

	reads = append(reads, sameKeyReads(t, b, req, v.ID)...)
	reads = append(reads, wsHeaderReads(t, b, h, headers)...)

	// A pending job with headers, cancelled: its audit record.
	var pending jobView
	b.call(t, "POST", "/api/v1/jobs", map[string]any{"method": "POST", "name": h.srv.URL + "/later", "delay": 3600,
		"headers": headers}, &pending)
	if code := b.call(t, "DELETE", "/api/v1/jobs/"+pending.ID, nil, nil); code != http.StatusOK {
		t.Fatalf("cancel: status %d", code)
	}

	for _, path := range []string{"/api/v1/jobs/" + v.ID, "/api/v1/jobs/" + pending.ID, "/api/v1/jobs?state=done",
		"/api/v1/jobs?state=cancelled", "/api/v1/tasks/" + v.ID, "/api/v1/runs/" + v.Run.TriggerID,
		"/api/v1/audit", "/api/v1/jobs/dead.jsonl"} {
		code, body := b.send(t, "GET", path, "", "")
		if code != http.StatusOK {
			t.Errorf("GET %s: %d %s", path, code, body)
		}
		reads = append(reads, body)
	}
	if !strings.Contains(reads[len(reads)-8], `"Authorization":"***"`) {
		t.Errorf("GET job does not show the header names masked: %s", reads[len(reads)-8])
	}
	if !strings.Contains(reads[len(reads)-4], `"Authorization":"***"`) || strings.Contains(reads[len(reads)-4], `"digest"`) {
		t.Errorf("GET task of the job: %s, want the names masked and no digest", reads[len(reads)-4])
	}
	eventually(t, "the job's done transition at the sink", func() bool {
		for _, d := range es.withEvent("job.transition") {
			if d.doc["job_id"] == v.ID && d.doc["state"] == "done" {
				return true
			}
		}
		return false
	})
	es.mu.Lock()
	for _, d := range es.docs {
		reads = append(reads, fmt.Sprint(d.doc))
	}
	es.mu.Unlock()
	for _, r := range reads {
		if strings.Contains(r, "s3cret") || strings.Contains(r, secretTrace) {
			t.Errorf("a read shows a header value: %s", r)
		}
	}

	checkBadHeaders(t, b, h)
}

// sameKeyReads submits req (which holds a key and made job id) again: 200
// with the job; then with other headers: 409 naming key, not showing them.
// It returns the answers' bodies.
func sameKeyReads(t *testing.T, b *testBundle, req map[string]any, id string) []string {
	t.Helper()
	code, body := b.send(t, "POST", "/api/v1/jobs", "", mustJSONText(t, req))
	if code != http.StatusOK || !strings.Contains(body, id) {
		t.Errorf("the same request again: %d %s, want 200 with job %s", code, body, id)
	}
	other := maps.Clone(req)
	other["headers"] = map[string]string{"Authorization": "Bearer another-0042", "X-Trace": secretTrace}
	code, conflict := b.send(t, "POST", "/api/v1/jobs", "", mustJSONText(t, other))
	if code != http.StatusConflict || !strings.Contains(conflict, `"field":"key"`) || strings.Contains(conflict, "another-0042") {
		t.Errorf("the key with other headers: %d %s, want 409 naming key, without the headers", code, conflict)
	}
	return []string{body, conflict}
}

// wsHeaderReads submits a GET job with headers through the WebSocket: its
// call carries them, its answers show the names masked. It returns the
// answers.
func wsHeaderReads(t *testing.T, b *testBundle, h *headerHook, headers map[string]string) []string {
	t.Helper()
	ws := b.wsJob(t, mustJSONText(t, map[string]any{"method": "GET", "name": h.srv.URL + "/ws", "headers": headers}))
	if last := ws[len(ws)-1]; !strings.Contains(last, `"type":"result"`) || !strings.Contains(last, `"Authorization":"***"`) {
		t.Errorf("WebSocket answers = %q, want a result showing the names masked", ws)
	}
	eventually(t, "the WebSocket job's call", func() bool { return len(h.callsTo("/ws")) == 1 })
	if got := h.callsTo("/ws")[0].Get("Authorization"); got != secretToken {
		t.Errorf("WebSocket job's call Authorization = %q", got)
	}
	return ws
}

// checkBadHeaders: a Host header is 400 naming headers.Host through HTTP
// and the WebSocket, and nothing is called.
func checkBadHeaders(t *testing.T, b *testBundle, h *headerHook) {
	t.Helper()
	bad := mustJSONText(t, map[string]any{"method": "POST", "name": h.srv.URL + "/bad", "headers": map[string]string{"Host": "evil"}})
	if code, body := b.send(t, "POST", "/api/v1/jobs", "", bad); code != http.StatusBadRequest ||
		!strings.Contains(body, `"field":"headers.Host"`) {
		t.Errorf("HTTP with a Host header: %d %s, want 400 naming headers.Host", code, body)
	}
	if ans := b.wsJob(t, bad); !strings.Contains(ans[0], `"field":"headers.Host"`) {
		t.Errorf("WebSocket with a Host header: %s, want an error naming headers.Host", ans[0])
	}
	if n := len(h.callsTo("/bad")); n != 0 {
		t.Errorf("a refused job was called %d times", n)
	}
}

func mustJSONText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
