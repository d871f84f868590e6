package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"cronsheet/config"
	"cronsheet/internal/testsmtp"
	"cronsheet/task"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// modernc.org/sqlite and net/http keep-alive goroutines end lazily.
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
	)
}

type testBundle struct {
	srv    *Server
	engine http.Handler // the gin engine, before checkContract wraps it
	base   string
	smtp   *testsmtp.Server
	stop   func() // stops the node gracefully (once; the cleanup calls it too)
	// runEnded, when set, judges the error Run returned (a test that makes
	// the node stop by itself); nil: Run must return nil.
	runEnded func(err error) bool
}

// setup starts a node on a fresh SQLite file with email sent to a real
// in-process SMTP server; mutate may adjust the config, and opts are
// passed to New.
func setup(t *testing.T, mutate func(*config.Config), opts ...Option) *testBundle {
	t.Helper()
	mail := testsmtp.Start(t)
	cfg := config.Default()
	cfg.Listen = "127.0.0.1:0"
	cfg.NodeID = "test-node"
	// The API tests call without credentials: local_dev on loopback signs
	// them in as the local admin (auth_test.go covers auth: required).
	cfg.Auth = config.AuthLocalDev
	cfg.Store.Path = filepath.Join(t.TempDir(), "cronsheet.db")
	cfg.Patrol.Interval = 50 * time.Millisecond
	cfg.Patrol.Lease = 3 * time.Second
	cfg.Fire.BackoffBase = 50 * time.Millisecond
	cfg.Email = config.Email{Mode: config.ModeSend, Host: mail.Host, Port: mail.Port, From: "cronsheet@example.com",
		TLS: "none", Timeout: 5 * time.Second}
	cfg.ShutdownTimeout = 5 * time.Second
	if mutate != nil {
		mutate(&cfg)
	}
	if testDriver() == "mongo" && cfg.Store.Driver == "sqlite" {
		mongoForPath(t, &cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("config: %v", err)
	}
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := New(ctx, cfg, logger, opts...)
	if err != nil {
		cancel()
		t.Fatalf("new server: %v", err)
	}
	engine := srv.http.Handler
	checkContract(t, srv)
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	var once sync.Once
	b := &testBundle{srv: srv, engine: engine, base: "http://" + srv.Addr(), smtp: mail}
	b.stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; b.runEnded != nil && !b.runEnded(err) || b.runEnded == nil && err != nil {
				t.Errorf("run: %v", err)
			}
		})
	}
	t.Cleanup(b.stop)
	return b
}

// call sends a JSON request and decodes the JSON answer into out (if not nil).
func (b *testBundle) call(t *testing.T, method, path string, body any, out any) int {
	t.Helper()
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequest(method, b.base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if out != nil && len(raw) > 0 {
		if err := json.Unmarshal(raw, out); err != nil {
			t.Fatalf("%s %s: decode %q: %v", method, path, raw, err)
		}
	}
	return resp.StatusCode
}

// waitRow polls a row until cond holds or the timeout passes.
func (b *testBundle) waitRow(t *testing.T, id string, timeout time.Duration, cond func(*task.Row) bool) *task.Row {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var row task.Row
		if code := b.call(t, "GET", "/api/v1/scenarios/memos/rows/"+id, nil, &row); code != 200 {
			t.Fatalf("get row: status %d", code)
		}
		if cond(&row) {
			return &row
		}
		if time.Now().After(deadline) {
			t.Fatalf("row %s: condition not met within %s; last: %+v", id, timeout, row)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (b *testBundle) runs(t *testing.T, taskID string) []*task.Run {
	t.Helper()
	var page struct {
		Runs []*task.Run `json:"runs"`
	}
	if code := b.call(t, "GET", "/api/v1/runs?limit=100&task_id="+url.QueryEscape(taskID), nil, &page); code != 200 {
		t.Fatalf("list runs: status %d", code)
	}
	return page.Runs
}

func TestMemosLoopEmail(t *testing.T) {
	b := setup(t, nil)
	var row task.Row
	code := b.call(t, "POST", "/api/v1/scenarios/memos/rows", map[string]any{
		"title": "stand-up", "content": "Stand up, please.", "when": "every 1s",
		"channel": "email", "to": "dev@example.com", "color": "blue",
	}, &row)
	if code != http.StatusCreated || row.ID == "" {
		t.Fatalf("create row: status %d, row %+v", code, row)
	}

	msgs := b.smtp.WaitFor(2, 15*time.Second)
	if len(msgs) < 2 {
		t.Fatalf("got %d messages, want at least 2", len(msgs))
	}
	for _, m := range msgs[:2] {
		if m.Subject != "stand-up" || !strings.Contains(m.Body, "Stand up, please.") ||
			len(m.To) != 1 || m.To[0] != "dev@example.com" {
			t.Errorf("message = %+v", m)
		}
		if m.Header.Get("X-Cronsheet-Trigger-Id") == "" {
			t.Errorf("message has no trigger id header: %v", m.Header)
		}
	}

	got := b.waitRow(t, row.ID, 10*time.Second, func(r *task.Row) bool { return r.LastStatus == "done" })
	if got.IsActive != 1 || got.IsFetched != 1 || got.LastFire.IsZero() || got.NextFire.IsZero() {
		t.Errorf("row feedback = %+v", got)
	}
	if got.Fields["color"] != "blue" {
		t.Errorf("unknown field not kept: %v", got.Fields)
	}

	runs := b.runs(t, row.ID)
	if len(runs) < 2 {
		t.Fatalf("ledger has %d runs, want >= 2", len(runs))
	}
	for i, r := range runs {
		if r.FiredAt.Before(r.Slot) {
			t.Errorf("run %s fired early: slot %s, fired %s", r.TriggerID, r.Slot, r.FiredAt)
		}
		if i > 0 && runs[i-1].Slot.Sub(r.Slot) != time.Second {
			t.Errorf("slots %s and %s are not 1s apart", r.Slot, runs[i-1].Slot)
		}
	}

	// Spent one-time jobs are swept: gocron holds the pending slot's job,
	// plus at most one that has just run.
	b.srv.armer.Sweep()
	if n := b.srv.armer.Scheduled(); n < 1 || n > 2 {
		t.Errorf("gocron holds %d jobs for one armed task, want 1 (2 while a slot is firing)", n)
	}

	// active: 0 stops it.
	if code := b.call(t, "PATCH", "/api/v1/scenarios/memos/rows/"+row.ID, map[string]any{"active": 0}, nil); code != 200 {
		t.Fatalf("patch: status %d", code)
	}
	b.waitRow(t, row.ID, 5*time.Second, func(r *task.Row) bool { return r.IsFetched == 1 && r.IsActive == 0 })
	waitTask(t, b, row.ID, func(tk *task.Task) bool { return tk.IsEnable == 0 && tk.IsClaimed == 0 })
	before := len(b.smtp.Messages())
	time.Sleep(2500 * time.Millisecond) // two would-be slots
	if after := len(b.smtp.Messages()); after != before {
		t.Errorf("deactivated task still fired: %d → %d messages", before, after)
	}
}

func waitTask(t *testing.T, b *testBundle, id string, cond func(*task.Task) bool) *task.Task {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var tk task.Task
		code := b.call(t, "GET", "/api/v1/tasks/"+url.PathEscape(id), nil, &tk)
		if code == 200 && cond(&tk) {
			return &tk
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s: condition not met; last (status %d): %+v", id, code, tk)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestInvalidScheduleMarksRow(t *testing.T) {
	b := setup(t, nil)
	fields := map[string]any{"title": "typo", "content": "x", "when": "dayly 8:00", "channel": "outbox", "mood": "curious"}
	var row task.Row
	if code := b.call(t, "POST", "/api/v1/scenarios/memos/rows", fields, &row); code != http.StatusCreated {
		t.Fatalf("create: status %d", code)
	}
	got := b.waitRow(t, row.ID, 10*time.Second, func(r *task.Row) bool { return r.IsFetched == 1 })
	if got.IsActive != -1 || !strings.Contains(got.Error, `unknown word "dayly"`) || !strings.HasPrefix(got.Error, "when") {
		t.Errorf("row = is_active %d, error %q; want -1 and an error naming when and dayly", got.IsActive, got.Error)
	}
	for k, v := range fields {
		if fmt.Sprint(got.Fields[k]) != fmt.Sprint(v) {
			t.Errorf("field %s = %v, want %v (the row must keep what the user wrote)", k, got.Fields[k], v)
		}
	}
}

func TestOnceTaskFiresOnceAndIsDone(t *testing.T) {
	b := setup(t, nil)
	var row task.Row
	b.call(t, "POST", "/api/v1/scenarios/memos/rows", map[string]any{
		"content": "once", "when": "in 1s", "channel": "outbox",
	}, &row)
	tk := waitTask(t, b, row.ID, func(tk *task.Task) bool { return tk.IsDone == 1 })
	if tk.LastStatus != "done" {
		t.Errorf("last status = %q", tk.LastStatus)
	}
	runs := b.runs(t, row.ID)
	if len(runs) != 1 || runs[0].State != task.RunDone {
		t.Fatalf("runs = %+v, want one done run", runs)
	}
	var outbox struct {
		Messages []*task.OutboxMessage `json:"messages"`
	}
	b.call(t, "GET", "/api/v1/outbox", nil, &outbox)
	if len(outbox.Messages) != 1 || outbox.Messages[0].Body != "once" || outbox.Messages[0].TriggerID != runs[0].TriggerID {
		t.Errorf("outbox = %+v", outbox.Messages)
	}
}

// smsServer is a Twilio API stand-in that records the form of each message.
type smsServer struct {
	mu    sync.Mutex
	forms []url.Values
}

func TestSMSThroughTwilioClient(t *testing.T) {
	var rec smsServer
	twilio := newTwilioStandIn(t, &rec)
	b := setup(t, func(c *config.Config) {
		c.SMS = config.SMS{Mode: config.ModeSend, AccountSID: "ACtest", From: "+15005550006",
			APIBaseURL: twilio, Timeout: 5 * time.Second, AuthToken: "token"}
	})
	var row task.Row
	b.call(t, "POST", "/api/v1/scenarios/memos/rows", map[string]any{
		"content": "pills", "when": "in 1s", "channel": "sms", "to": "+14155550100",
	}, &row)
	tk := waitTask(t, b, row.ID, func(tk *task.Task) bool { return tk.IsDone == 1 })
	if tk.LastStatus != "done" {
		t.Fatalf("last status = %q", tk.LastStatus)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.forms) != 1 || rec.forms[0].Get("To") != "+14155550100" || rec.forms[0].Get("Body") != "pills" ||
		rec.forms[0].Get("From") != "+15005550006" {
		t.Errorf("twilio got %v", rec.forms)
	}
}

// TestUnknownAPIRoute: a route the API does not have answers 404 with the
// JSON error body (code not_found), like every other API error.
func TestUnknownAPIRoute(t *testing.T) {
	b := setup(t, nil)
	var body struct {
		Error string `json:"error"`
		Code  string `json:"code"`
	}
	if code := b.call(t, "GET", "/api/v1/no-such-thing", nil, &body); code != http.StatusNotFound {
		t.Fatalf("GET /api/v1/no-such-thing = %d, want 404", code)
	}
	if body.Code != string(task.CodeNotFound) || !strings.Contains(body.Error, "/api/v1/no-such-thing") {
		t.Errorf("body = %+v, want code not_found naming the route", body)
	}
}

// TestWrongMethodOnKnownRoute: a wrong method on a path the node routes
// answers 405 with Allow, through the guard; unknown paths, the pages and
// their assets answer as before.
func TestWrongMethodOnKnownRoute(t *testing.T) {
	b := setup(t, nil)
	req, err := http.NewRequest(http.MethodPut, b.base+"/api/v1/scenarios/memos/rows", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed || !strings.Contains(resp.Header.Get("Allow"), "POST") ||
		!strings.Contains(resp.Header.Get("Allow"), "GET") {
		t.Errorf("PUT …/rows = %d Allow %q, want 405 Allow GET, POST", resp.StatusCode, resp.Header.Get("Allow"))
	}
	// Without `make static` the pages answer 503; either way they are served.
	for _, path := range []string{"/", "/assets/app.js"} {
		if code := b.call(t, http.MethodGet, path, nil, nil); code != http.StatusOK && code != http.StatusServiceUnavailable {
			t.Errorf("GET %s = %d, want the page (200, or 503 without assets)", path, code)
		}
	}
	for _, path := range []string{"/no-such-page", "/api/v1/no-such-thing"} {
		if code := b.call(t, http.MethodGet, path, nil, nil); code != http.StatusNotFound {
			t.Errorf("GET %s = %d, want 404", path, code)
		}
	}
}
