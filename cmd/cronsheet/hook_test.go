package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"cronsheet/config"
	"cronsheet/internal/testwait"
	"cronsheet/server"
	"cronsheet/task"
)

// syncBuffer collects the hook's output from its goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// startHookCmd runs `cronsheet hook args…` in-process on a free port and
// returns its base URL and output; it stops at the test's end.
func startHookCmd(t *testing.T, args ...string) (string, *syncBuffer) {
	t.Helper()
	var out, errOut syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- runHook(ctx, append([]string{"-listen", "127.0.0.1:0"}, args...), func(string) string { return "" }, &out, &errOut)
	}()
	t.Cleanup(func() {
		cancel()
		if code := <-done; code != 0 {
			t.Errorf("hook exited %d: %s", code, errOut.String())
		}
	})
	re := regexp.MustCompile(`listening on (\S+)\n`)
	var addr string
	testwait.For(t, 30*time.Second, "the hook to listen", func() bool {
		if m := re.FindStringSubmatch(out.String()); m != nil {
			addr = m[1]
			return true
		}
		return false
	})
	return "http://" + addr, &out
}

// TestHookPrintsRequests sends the hook a request by hand: it answers 200
// and prints the method, path, the cronsheet headers and the body, but no
// other header.
func TestHookPrintsRequests(t *testing.T) {
	base, out := startHookCmd(t)
	req, err := http.NewRequest(http.MethodPost, base+"/cb/t1?x=1", strings.NewReader(`{"hello":"world"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Cronsheet-Trigger-Id", "tr_abc")
	req.Header.Set("Idempotency-Key", "t1:1700000000000:hook")
	req.Header.Set("X-Cronsheet-Node", "n1")
	req.Header.Set("X-Secret", "not printed")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "ok\n" {
		t.Errorf("answer = %d %q, want 200 ok", resp.StatusCode, body)
	}
	testwait.For(t, 30*time.Second, "the printed request", func() bool { return strings.Contains(out.String(), `{"hello":"world"}`) })
	got := out.String()
	for _, want := range []string{"--- POST /cb/t1?x=1 from 127.0.0.1:", "X-Cronsheet-Trigger-Id: tr_abc\n",
		"Idempotency-Key: t1:1700000000000:hook\n", "X-Cronsheet-Node: n1\n", "body (17 bytes):\n{\"hello\":\"world\"}\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "X-Secret") || strings.Contains(got, "feedback") {
		t.Errorf("output shows another header, or feedback without -feedback:\n%s", got)
	}

	// A body past the bound is refused, and said so.
	resp, err = http.Post(base+"/big", "text/plain", strings.NewReader(strings.Repeat("x", hookMaxBody+1)))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized body: %d, want 413", resp.StatusCode)
	}
}

// TestHookFlags: wrong flags exit 2 naming the flag.
func TestHookFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-feedback", "maybe"}, "-feedback \"maybe\""},
		{[]string{"-feedback-to", "ftp://x"}, "-feedback-to"},
		{[]string{"-listen", "nowhere"}, "-listen"},
		{[]string{"-delay", "-1s"}, "-delay"},
		{[]string{"-message", strings.Repeat("m", hookMaxMessage+1)}, "-message"},
		{[]string{"extra"}, "unexpected argument"},
	} {
		var out, errOut syncBuffer
		code := runHook(t.Context(), c.args, func(string) string { return "" }, &out, &errOut)
		if code != 2 || !strings.Contains(errOut.String(), c.want) {
			t.Errorf("hook %v = %d %q, want 2 naming %s", c.args, code, errOut.String(), c.want)
		}
	}
}

// TestHookReportsFeedback is the hook as the target of a real node: the
// node fires a task to it (an http target with feedback_timeout), the hook
// prints the delivery and reports done back, and the run ends done with
// the hook's message.
func TestHookReportsFeedback(t *testing.T) {
	cfg := config.Default()
	cfg.Listen = "127.0.0.1:0"
	cfg.NodeID = "hook-test"
	cfg.Auth = config.AuthLocalDev
	cfg.Store.Path = filepath.Join(t.TempDir(), "c.db")
	cfg.Patrol.Interval = 50 * time.Millisecond
	cfg.HTTP.Allow = []string{"127.0.0.0/8"}
	cfg.ShutdownTimeout = 5 * time.Second
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := server.New(ctx, cfg, slog.New(slog.DiscardHandler))
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	node := "http://" + srv.Addr()
	hookURL, out := startHookCmd(t, "-feedback", "done", "-feedback-to", node, "-message", "printed it")
	t.Cleanup(func() { // before the hook stops (cleanups run last first)
		// The test and the hook share http.DefaultClient: when two of their
		// requests overlap, the transport may dial a connection that the
		// other request's connection ends up not needing, and it waits in
		// the pool unused; the node's Shutdown waits up to 5 s for such a
		// new connection, as long as the shutdown timeout here.
		http.DefaultClient.CloseIdleConnections()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})

	call := func(method, path string, body, into any) int {
		t.Helper()
		raw, _ := json.Marshal(body)
		req, err := http.NewRequest(method, node+path, bytes.NewReader(raw))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if into != nil {
			if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
				t.Fatalf("%s %s: %v", method, path, err)
			}
		}
		return resp.StatusCode
	}
	target := map[string]any{"id": "hook", "kind": "http", "state": "running", "feedback_timeout": 60,
		"http": map[string]any{"method": "POST", "url": hookURL + "/hook"}}
	if code := call("POST", "/api/v1/targets", target, nil); code != http.StatusCreated {
		t.Fatalf("create target: %d", code)
	}
	row := map[string]any{"memo_id": "r1", "content": "ping", "when": "daily 08:00", "targets": "hook"}
	if code := call("POST", "/api/v1/scenarios/memos/rows", row, nil); code != http.StatusCreated {
		t.Fatalf("create row: %d", code)
	}
	var trig struct {
		Runs []*task.Run `json:"runs"`
	}
	testwait.For(t, 30*time.Second, "the row's task to be triggerable", func() bool {
		return call("POST", "/api/v1/tasks/r1/trigger", map[string]any{}, &trig) == http.StatusAccepted
	})
	if len(trig.Runs) != 1 {
		t.Fatalf("trigger: %+v, want one run", trig)
	}
	id := trig.Runs[0].TriggerID
	var run task.Run
	testwait.For(t, 30*time.Second, "the hook's report to end the run", func() bool {
		call("GET", "/api/v1/runs/"+id, nil, &run)
		return run.State.Final()
	})
	if run.State != task.RunDone || len(run.Feedback) != 1 || run.Feedback[0].Message != "printed it" {
		t.Errorf("run = %+v, want done by the hook's one report", run)
	}
	testwait.For(t, 30*time.Second, "the hook to print its report", func() bool { return strings.Contains(out.String(), "feedback "+id+": done") })
	got := out.String()
	for _, want := range []string{"--- POST /hook from 127.0.0.1:", "X-Cronsheet-Trigger-Id: " + id + "\n",
		"Idempotency-Key: r1:", "X-Cronsheet-Node: hook-test\n", `"trigger_id":"` + id + `"`, "answered 200 OK"} {
		if !strings.Contains(got, want) {
			t.Errorf("hook output lacks %q:\n%s", want, got)
		}
	}
}
