package server

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"cronsheet/config"
	"cronsheet/task"
)

// hookCall is one request an HTTP target received.
type hookCall struct {
	path, triggerID, idemKey string
}

// hook is a real HTTP target: it records every call and answers 200.
// When reportTo is set, calls to /cb/t1 are reported on later, as an
// asynchronous target does: a progress report, then a final one.
type hook struct {
	srv      *httptest.Server
	mu       sync.Mutex
	calls    []hookCall
	reportTo string
	reports  sync.WaitGroup
	errs     []error
}

func startHook(t *testing.T) *hook {
	t.Helper()
	h := &hook{}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Cronsheet-Trigger-Id")
		h.mu.Lock()
		h.calls = append(h.calls, hookCall{r.URL.Path, id, r.Header.Get("Idempotency-Key")})
		if h.reportTo != "" && r.URL.Path == "/cb/t1" {
			base := h.reportTo
			h.reports.Go(func() { h.report(base, id) })
		}
		h.mu.Unlock()
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("accepted"))
	}))
	t.Cleanup(func() {
		h.stopReports()
		h.srv.Close()
	})
	return h
}

// stopReports stops starting reports and waits for those under way.
func (h *hook) stopReports() {
	h.mu.Lock()
	h.reportTo = "" // under mu: no reports.Go after this
	h.mu.Unlock()
	h.reports.Wait()
}

// postFeedback posts body as a report on run id to the node at base and
// fails unless the node answers 200.
func postFeedback(base, id, body string) error {
	resp, err := http.Post(base+"/api/v1/runs/"+id+"/feedback", "application/json", strings.NewReader(body))
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("feedback on %s: status %d", id, resp.StatusCode)
	}
	return nil
}

// report posts a progress and then a final report on run id, after the
// hook's answer has gone back.
func (h *hook) report(base, id string) {
	time.Sleep(50 * time.Millisecond)
	for _, body := range []string{`{"status":0,"message":"half way","progress":true}`, `{"status":0,"message":"all done","output":"42 rows"}`} {
		if err := postFeedback(base, id, body); err != nil {
			h.mu.Lock()
			h.errs = append(h.errs, err)
			h.mu.Unlock()
			return
		}
	}
}

func (h *hook) seen() []hookCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]hookCall(nil), h.calls...)
}

// eventually polls cond every 20ms until it holds, failing after a generous
// deadline; it never asserts on how long things take.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (b *testBundle) run(t *testing.T, triggerID string) *task.Run {
	t.Helper()
	var r task.Run
	if code := b.call(t, "GET", "/api/v1/runs/"+triggerID, nil, &r); code != http.StatusOK {
		t.Fatalf("get run %s: status %d", triggerID, code)
	}
	return &r
}

// TestHTTPTargetEndToEnd checks http targets end to end, through the API
// of a running node: an http target bound to two tasks gets each fire with
// its trigger id and idempotency key; paused, it rejects scheduled fires
// and takes manual ones; feedback with status 0 makes a run done, and a
// run without feedback becomes timeout at its deadline; a stopped task
// fires only by hand, a closed one not at all; exec targets run only what
// config lists.
func TestHTTPTargetEndToEnd(t *testing.T) {
	h := startHook(t)
	script := filepath.Join(t.TempDir(), "hello.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho hello \"$1\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	b := setup(t, func(c *config.Config) {
		c.HTTP.Allow = []string{"127.0.0.0/8"}
		c.Exec.Commands = map[string]config.ExecCommand{"hello": {Path: script, Args: []string{"{{name}}"}}}
	})
	h.mu.Lock()
	h.reportTo = b.base
	h.mu.Unlock()

	target := map[string]any{"id": "hook", "kind": "http", "state": "running", "feedback_timeout": 2,
		"http": map[string]any{"method": "POST", "url": h.srv.URL + "/cb/{{task_id}}"}}
	if code := b.call(t, "POST", "/api/v1/targets", target, nil); code != http.StatusCreated {
		t.Fatalf("create target: status %d", code)
	}
	for _, id := range []string{"t1", "t2"} {
		code := b.call(t, "POST", "/api/v1/scenarios/memos/rows", map[string]any{
			"memo_id": id, "content": "ping", "when": "every 1s", "targets": "hook",
		}, nil)
		if code != http.StatusCreated {
			t.Fatalf("create row %s: status %d", id, code)
		}
	}

	// Both tasks fire to the hook, each call with its trigger id and the
	// idempotency key of task + slot.
	eventually(t, "fires of both tasks at the hook", func() bool {
		got := map[string]bool{}
		for _, c := range h.seen() {
			got[c.path] = true
		}
		return got["/cb/t1"] && got["/cb/t2"]
	})
	for _, c := range h.seen() {
		taskID := strings.TrimPrefix(c.path, "/cb/")
		run := b.run(t, c.triggerID)
		if run.TaskID != taskID || run.Target != "hook" || c.idemKey != taskID+":"+strconv.FormatInt(run.Slot.UnixMilli(), 10)+":hook" {
			t.Errorf("call %+v: run %+v does not match", c, run)
		}
	}

	// t1's runs: the target reports later, progress then final status 0,
	// and the run is done. t2's runs get no feedback and time out.
	var first, second hookCall
	for _, c := range h.seen() {
		switch c.path {
		case "/cb/t1":
			first = c
		case "/cb/t2":
			second = c
		}
	}
	eventually(t, "the target's final report to end t1's run", func() bool {
		return b.run(t, first.triggerID).State.Final()
	})
	if r := b.run(t, first.triggerID); r.State != task.RunDone || len(r.Feedback) != 2 || !r.Feedback[0].Progress ||
		r.Feedback[1].Message != "all done" || r.Output != "42 rows" {
		t.Errorf("run after the target's reports = %+v, want done with both reports", r)
	}
	if code := b.call(t, "POST", "/api/v1/runs/"+first.triggerID+"/feedback", map[string]any{"status": 0}, nil); code != http.StatusConflict {
		t.Errorf("feedback on a done run: status %d, want 409", code)
	}
	if code := b.call(t, "POST", "/api/v1/runs/tr_nosuchrun/feedback", map[string]any{"status": 0}, nil); code != http.StatusNotFound {
		t.Errorf("feedback on an unknown run: status %d, want 404", code)
	}
	eventually(t, "the run without feedback to time out", func() bool {
		return b.run(t, second.triggerID).State == task.RunTimeout
	})

	// Paused: scheduled fires are rejected, a manual trigger goes through.
	target["state"] = "paused"
	if code := b.call(t, "PUT", "/api/v1/targets/hook", target, nil); code != http.StatusOK {
		t.Fatalf("pause target: status %d", code)
	}
	eventually(t, "a scheduled fire rejected by the paused target", func() bool {
		for _, r := range b.runs(t, "t1") {
			if r.TriggerType == task.TriggerSchedule && r.State == task.RunRejected && strings.Contains(r.Error, "paused") {
				return true
			}
		}
		return false
	})
	var trig struct {
		Runs []*task.Run `json:"runs"`
	}
	if code := b.call(t, "POST", "/api/v1/tasks/t1/trigger", map[string]any{"params": map[string]string{"why": "test"}}, &trig); code != http.StatusAccepted || len(trig.Runs) != 1 {
		t.Fatalf("manual trigger of t1 with the target paused: status %d, %+v", code, trig)
	}
	manualID := trig.Runs[0].TriggerID
	eventually(t, "the manual trigger at the hook", func() bool {
		for _, c := range h.seen() {
			if c.triggerID == manualID {
				return true
			}
		}
		return false
	})
	target["state"] = "running"
	if code := b.call(t, "PUT", "/api/v1/targets/hook", target, nil); code != http.StatusOK {
		t.Fatalf("resume target: status %d", code)
	}

	// Stopped: no scheduled fire after the change is seen, manual still
	// works. Closed: nothing, and a manual trigger is recorded rejected.
	var stopped task.Task
	if code := b.call(t, "PUT", "/api/v1/tasks/t2/state", map[string]string{"state": "stopped"}, &stopped); code != http.StatusOK || stopped.State != task.StateStopped {
		t.Fatalf("stop t2: status %d, %+v", code, stopped)
	}
	eventually(t, "t2 to show no next fire", func() bool {
		return waitTaskNow(t, b, "t2").NextFire.IsZero()
	})
	scheduledBefore := countRuns(b.runs(t, "t2"), task.TriggerSchedule)
	time.Sleep(2500 * time.Millisecond) // two and a half of its slots
	if n := countRuns(b.runs(t, "t2"), task.TriggerSchedule); n != scheduledBefore {
		t.Errorf("stopped t2 got %d scheduled runs after it stopped", n-scheduledBefore)
	}
	if code := b.call(t, "POST", "/api/v1/tasks/t2/trigger", nil, &trig); code != http.StatusAccepted || trig.Runs[0].State == task.RunRejected {
		t.Fatalf("manual trigger of stopped t2: status %d, %+v", code, trig)
	}
	// Let that run end before closing: its outcome mirrors onto the task,
	// and on FerretDB v1 two updates of one document at once can lose one
	// (docs/FERRETDB.md, "Lost updates"); the close must not race it.
	stoppedRun := trig.Runs[0].TriggerID
	eventually(t, "the stopped task's manual run to end", func() bool {
		for _, r := range b.runs(t, "t2") {
			if r.TriggerID == stoppedRun {
				return r.State.Final() && task.RunState(waitTaskNow(t, b, "t2").LastStatus).Final()
			}
		}
		return false
	})
	if code := b.call(t, "PUT", "/api/v1/tasks/t2/state", map[string]string{"state": "closed"}, nil); code != http.StatusOK {
		t.Fatalf("close t2: status %d", code)
	}
	var refused struct {
		Error string      `json:"error"`
		Runs  []*task.Run `json:"runs"`
	}
	time.Sleep(5 * time.Millisecond) // a new instant for the next manual trigger
	if code := b.call(t, "POST", "/api/v1/tasks/t2/trigger", nil, &refused); code != http.StatusConflict ||
		len(refused.Runs) != 1 || refused.Runs[0].State != task.RunRejected || !strings.Contains(refused.Error, "closed") {
		t.Errorf("manual trigger of closed t2: status %d, %+v; want 409 with a rejected record", code, refused)
	}

	// Exec targets: only commands config lists.
	bad := map[string]any{"id": "sh", "kind": "exec", "state": "running", "exec": map[string]any{"command": "rm"}}
	var e struct {
		Field string `json:"field"`
	}
	if code := b.call(t, "POST", "/api/v1/targets", bad, &e); code != http.StatusBadRequest || e.Field != "exec.command" {
		t.Errorf("exec target of an unlisted command: status %d, field %q; want 400 on exec.command", code, e.Field)
	}
	good := map[string]any{"id": "hello", "kind": "exec", "state": "running", "exec": map[string]any{"command": "hello"}}
	if code := b.call(t, "POST", "/api/v1/targets", good, nil); code != http.StatusCreated {
		t.Fatalf("exec target of a listed command: status %d", code)
	}
	if code := b.call(t, "POST", "/api/v1/scenarios/memos/rows", map[string]any{
		"memo_id": "t3", "content": "x", "when": "in 1s", "repeat": "once", "targets": "hello",
	}, nil); code != http.StatusCreated {
		t.Fatalf("create row t3: status %d", code)
	}
	eventually(t, "task t3 to be synced", func() bool {
		return b.call(t, "GET", "/api/v1/tasks/t3", nil, nil) == http.StatusOK
	})
	if code := b.call(t, "POST", "/api/v1/tasks/t3/trigger", map[string]any{"params": map[string]string{"name": "Ann; rm -rf /"}}, &trig); code != http.StatusAccepted {
		t.Fatalf("trigger t3: status %d", code)
	}
	id := trig.Runs[0].TriggerID
	eventually(t, "the exec run to finish", func() bool { return b.run(t, id).State.Final() })
	if r := b.run(t, id); r.State != task.RunDone || !strings.Contains(r.Output, "hello Ann; rm -rf /") {
		t.Errorf("exec run = %+v, want done with the param as one argument", r)
	}
	h.stopReports()
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, err := range h.errs {
		t.Errorf("target's report: %v", err)
	}
}

func countRuns(runs []*task.Run, tt task.TriggerType) int {
	n := 0
	for _, r := range runs {
		if r.TriggerType == tt {
			n++
		}
	}
	return n
}

// waitTaskNow reads a task once.
func waitTaskNow(t *testing.T, b *testBundle, id string) *task.Task {
	t.Helper()
	var tk task.Task
	if code := b.call(t, "GET", "/api/v1/tasks/"+id, nil, &tk); code != http.StatusOK {
		t.Fatalf("get task %s: status %d", id, code)
	}
	return &tk
}
