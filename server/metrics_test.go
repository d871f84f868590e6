package server

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"cronsheet/config"
	"cronsheet/task"
)

// scrapeCounters reads /metrics and returns the value of every series of
// family, keyed by its labels as name=value pairs joined by ','.
func scrapeCounters(t *testing.T, b *testBundle, family string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(b.base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET /metrics: %d %s", resp.StatusCode, raw)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	out := map[string]float64{}
	for _, m := range mfs[family].GetMetric() {
		var labels []string
		for _, l := range m.GetLabel() {
			labels = append(labels, l.GetName()+"="+l.GetValue())
		}
		out[strings.Join(labels, ",")] = m.GetCounter().GetValue()
	}
	return out
}

// TestMetricsHTTPDeliveryFinishedByFeedback: a manual fire to an http
// target with feedback is labelled kind="http" (not the task's channel),
// and the run, accepted and then made done by the target's final report,
// is counted once as done; accepted is no outcome.
func TestMetricsHTTPDeliveryFinishedByFeedback(t *testing.T) {
	h := startHook(t)
	b := setup(t, func(c *config.Config) { c.HTTP.Allow = []string{"127.0.0.0/8"} })
	h.mu.Lock()
	h.reportTo = b.base // the hook reports on /cb/t1: progress, then done
	h.mu.Unlock()

	target := map[string]any{"id": "hook", "kind": "http", "state": "running", "feedback_timeout": 60,
		"http": map[string]any{"method": "POST", "url": h.srv.URL + "/cb/{{task_id}}"}}
	if code := b.call(t, "POST", "/api/v1/targets", target, nil); code != http.StatusCreated {
		t.Fatalf("create target: status %d", code)
	}
	row := map[string]any{"memo_id": "t1", "content": "ping", "when": "daily 08:00", "targets": "hook"}
	if code := b.call(t, "POST", "/api/v1/scenarios/memos/rows", row, nil); code != http.StatusCreated {
		t.Fatalf("create row: status %d", code)
	}
	waitTask(t, b, "t1", func(tk *task.Task) bool { return tk.IsEnable == 1 })
	var trig struct {
		Runs []*task.Run `json:"runs"`
	}
	if code := b.call(t, "POST", "/api/v1/tasks/t1/trigger", map[string]any{}, &trig); code != http.StatusAccepted || len(trig.Runs) != 1 {
		t.Fatalf("trigger t1: status %d, %+v", code, trig)
	}
	id := trig.Runs[0].TriggerID
	eventually(t, "the target's final report to end the run", func() bool { return b.run(t, id).State.Final() })
	if r := b.run(t, id); r.State != task.RunDone || len(r.Feedback) != 2 {
		t.Fatalf("run = %+v, want done by the target's reports", r)
	}
	h.stopReports()
	for _, err := range h.errs {
		t.Errorf("target's report: %v", err)
	}

	fires := scrapeCounters(t, b, "cronsheet_fires_total")
	if got := fires["kind=http,trigger_type=manual"]; got != 1 {
		t.Errorf("fires_total{kind=http,trigger_type=manual} = %v, want 1; all: %v", got, fires)
	}
	outcomes := scrapeCounters(t, b, "cronsheet_run_outcomes_total")
	if got := outcomes["kind=http,state=done"]; got != 1 {
		t.Errorf("run_outcomes_total{kind=http,state=done} = %v, want 1; all: %v", got, outcomes)
	}
	for labels := range outcomes {
		if strings.Contains(labels, "state=accepted") || strings.Contains(labels, "kind=outbox") {
			t.Errorf("run_outcomes_total has %s; want only the final state of the http target", labels)
		}
	}
	for labels := range fires {
		if strings.Contains(labels, "kind=outbox") {
			t.Errorf("fires_total has %s: an http delivery labelled by the task's channel", labels)
		}
	}
}
