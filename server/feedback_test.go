package server

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"cronsheet/config"
	"cronsheet/task"
)

// earlyHook is an HTTP target that reports on a run before it answers:
// on a call to /early/… it posts a final success report on the call's
// run to the node and only then answers 200; /early-fail/… reports status
// 1 the same way. /plain/… answers 200 at once, /fail/… 500, and
// /pager/… (an alert target) 200.
type earlyHook struct {
	srv   *httptest.Server
	mu    sync.Mutex
	base  string         // the node's API, set once it runs
	calls map[string]int // per path
	runs  map[string]string
	errs  []error
}

func startEarlyHook(t *testing.T) *earlyHook {
	t.Helper()
	h := &earlyHook{calls: map[string]int{}, runs: map[string]string{}}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Cronsheet-Trigger-Id")
		h.mu.Lock()
		h.calls[r.URL.Path]++
		h.runs[r.URL.Path] = id
		base := h.base
		h.mu.Unlock()
		switch {
		case strings.HasPrefix(r.URL.Path, "/early/"):
			h.report(base, id, `{"status":0,"message":"done early","output":"reported"}`)
		case strings.HasPrefix(r.URL.Path, "/early-fail/"):
			h.report(base, id, `{"status":1,"message":"target failed"}`)
		case strings.HasPrefix(r.URL.Path, "/fail/"):
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		_, _ = w.Write([]byte("answered"))
	}))
	t.Cleanup(h.srv.Close)
	return h
}

// report posts body as the final report on run id and waits for the
// node's answer.
func (h *earlyHook) report(base, id, body string) {
	if err := postFeedback(base, id, body); err != nil {
		h.mu.Lock()
		h.errs = append(h.errs, err)
		h.mu.Unlock()
	}
}

func (h *earlyHook) callsTo(path string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.calls[path]
}

func (h *earlyHook) runOf(path string) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.runs[path]
}

func (h *earlyHook) checkReports(t *testing.T) {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, err := range h.errs {
		t.Errorf("target's report: %v", err)
	}
}

// setupEarly starts a node on the test driver with targets on h: "early"
// and "early-fail" (they report before they answer, and take feedback for
// a minute), "plain" and "fail" (no feedback), and the alert target
// "pager".
func setupEarly(t *testing.T, h *earlyHook) *testBundle {
	t.Helper()
	b := setup(t, func(c *config.Config) { c.HTTP.Allow = []string{"127.0.0.0/8"} })
	h.mu.Lock()
	h.base = b.base
	h.mu.Unlock()
	for _, tg := range []struct {
		id       string
		feedback int
	}{{"early", 60}, {"early-fail", 60}, {"plain", 0}, {"fail", 0}, {"pager", 0}} {
		target := map[string]any{"id": tg.id, "kind": "http", "state": "running",
			"http": map[string]any{"method": "POST", "url": h.srv.URL + "/" + tg.id + "/{{task_id}}"}}
		if tg.feedback > 0 {
			target["feedback_timeout"] = tg.feedback
		}
		if code := b.call(t, "POST", "/api/v1/targets", target, nil); code != http.StatusCreated {
			t.Fatalf("create target %s: status %d", tg.id, code)
		}
	}
	return b
}

// addRow stores a memos row firing every 2s to target, with extra fields.
func addRow(t *testing.T, b *testBundle, id, target string, extra map[string]any) {
	t.Helper()
	row := map[string]any{"memo_id": id, "content": "ping", "when": "every 2s", "targets": target, "retries": 0}
	for k, v := range extra {
		row[k] = v
	}
	var answer map[string]any
	if code := b.call(t, "POST", "/api/v1/scenarios/memos/rows", row, &answer); code != http.StatusCreated {
		t.Fatalf("create row %s: status %d, %v", id, code, answer)
	}
}

// TestFeedbackBeforeAnswerEndsUntilSuccess: an until_success task whose
// target posts its success report before its HTTP answer returns ends
// exactly as one whose target answers success: one delivery at the
// target, the run done (the report's output stands, the late answer
// writes nothing over it), the task done with no next fire, and the same
// metrics (one scheduled fire, one done outcome, nothing else).
func TestFeedbackBeforeAnswerEndsUntilSuccess(t *testing.T) {
	h := startEarlyHook(t)
	b := setupEarly(t, h)

	// The reference: a target that answers success.
	addRow(t, b, "plain1", "plain", map[string]any{"repeat": "until_success"})
	ref := waitTask(t, b, "plain1", func(tk *task.Task) bool { return tk.IsDone == 1 })
	fires := scrapeCounters(t, b, "cronsheet_fires_total")
	outcomes := scrapeCounters(t, b, "cronsheet_run_outcomes_total")
	if fires["kind=http,trigger_type=schedule"] != 1 || outcomes["kind=http,state=done"] != 1 || len(outcomes) != 1 {
		t.Fatalf("after an answered success: fires %v, outcomes %v; want one scheduled fire, one done", fires, outcomes)
	}

	addRow(t, b, "early1", "early", map[string]any{"repeat": "until_success"})
	got := waitTask(t, b, "early1", func(tk *task.Task) bool { return tk.IsDone == 1 })
	// Slots keep coming every 2s: a task that is not really done fires again.
	time.Sleep(5 * time.Second)
	h.checkReports(t)
	if n := h.callsTo("/early/early1"); n != 1 {
		t.Errorf("deliveries at the target = %d, want 1", n)
	}
	if n := h.callsTo("/plain/plain1"); n != 1 {
		t.Errorf("deliveries of the reference = %d, want 1", n)
	}
	for _, tk := range []*task.Task{ref, got} {
		if tk.LastStatus != string(task.RunDone) || !tk.NextFire.IsZero() {
			t.Errorf("task %s: last_status %q, next_fire %v; want done and none", tk.TaskID, tk.LastStatus, tk.NextFire)
		}
	}
	r := b.run(t, h.runOf("/early/early1"))
	if r.State != task.RunDone || r.Output != "reported" || len(r.Feedback) != 1 || r.FinishedAt.IsZero() {
		t.Errorf("run = %+v, want done by the report, its output kept", r)
	}
	fires = scrapeCounters(t, b, "cronsheet_fires_total")
	outcomes = scrapeCounters(t, b, "cronsheet_run_outcomes_total")
	if fires["kind=http,trigger_type=schedule"] != 2 || len(fires) != 1 {
		t.Errorf("fires_total = %v, want 2 scheduled http fires (one per task)", fires)
	}
	if outcomes["kind=http,state=done"] != 2 || len(outcomes) != 1 {
		t.Errorf("run_outcomes_total = %v, want 2 done (one per task), nothing else", outcomes)
	}
}

// TestFeedbackBeforeAnswerFailureAlerts: a failure report that beats the
// target's answer ends the run dead, alerts as a failed answer does, and
// leaves the until_success task scheduled; the late answer (success)
// does not turn the run done.
func TestFeedbackBeforeAnswerFailureAlerts(t *testing.T) {
	h := startEarlyHook(t)
	b := setupEarly(t, h)
	alert := map[string]any{"repeat": "until_success", "alert": "pager", "alert_after": "1"}
	addRow(t, b, "fail1", "fail", alert)
	addRow(t, b, "late1", "early-fail", alert)

	eventually(t, "an alert for each task", func() bool {
		return h.callsTo("/pager/fail1") > 0 && h.callsTo("/pager/late1") > 0
	})
	h.checkReports(t)
	r := b.run(t, h.runOf("/early-fail/late1"))
	if r.State != task.RunDead || r.Error != "target failed" {
		t.Errorf("run = %+v, want dead with the report's message", r)
	}
	for _, id := range []string{"fail1", "late1"} {
		tk := waitTaskNow(t, b, id)
		if tk.IsDone != 0 {
			t.Errorf("task %s is done after a failure; until_success keeps its schedule", id)
		}
	}
	if outcomes := scrapeCounters(t, b, "cronsheet_run_outcomes_total"); outcomes["kind=http,state=dead"] < 2 {
		t.Errorf("run_outcomes_total = %v, want the dead runs of both tasks", outcomes)
	}
}

// TestJobFeedbackBeforeAnswer: a job whose callback reports success before
// it answers is done once, with the same job events as a job whose
// callback answers success.
func TestJobFeedbackBeforeAnswer(t *testing.T) {
	h := startEarlyHook(t)
	b := setupEarly(t, h)
	jobs := map[string]string{}
	for _, path := range []string{"plain", "early"} {
		var v jobView
		code := b.call(t, "POST", "/api/v1/jobs", map[string]any{"method": "POST", "name": h.srv.URL + "/" + path + "/job"}, &v)
		if code != http.StatusCreated {
			t.Fatalf("submit to %s: status %d", path, code)
		}
		if done := b.waitJob(t, v.ID, task.JobDone); done.Attempts != 1 {
			t.Errorf("%s job = %+v, want done after one attempt", path, done)
		}
		jobs[path] = v.ID
	}
	time.Sleep(time.Second) // the late answer has come back: it adds nothing
	h.checkReports(t)
	if n := h.callsTo("/early/job"); n != 1 {
		t.Errorf("calls of the reporting job's callback = %d, want 1", n)
	}
	events := map[string][]task.JobState{}
	for path, id := range jobs {
		eventually(t, "the "+path+" job's done event", func() bool {
			events[path] = events[path][:0]
			for _, e := range b.job(t, id).Events {
				events[path] = append(events[path], e.State)
			}
			n := len(events[path])
			return n > 0 && events[path][n-1] == task.JobDone
		})
	}
	if fmt.Sprint(events["early"]) != fmt.Sprint(events["plain"]) {
		t.Errorf("job events: reported before the answer %v, answered %v; want the same", events["early"], events["plain"])
	}
	outcomes := scrapeCounters(t, b, "cronsheet_run_outcomes_total")
	if outcomes["kind=http,state=done"] != 2 || len(outcomes) != 1 {
		t.Errorf("run_outcomes_total = %v, want 2 done", outcomes)
	}
}
