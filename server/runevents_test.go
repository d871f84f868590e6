package server

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"cronsheet/config"
	"cronsheet/task"
)

// indexedSink is a local Elasticsearch bulk endpoint that keeps each
// document with the _index its action line named.
type indexedSink struct {
	srv  *httptest.Server
	mu   sync.Mutex
	docs []indexedDoc
}

type indexedDoc struct {
	index string
	doc   map[string]any
}

func startIndexedSink(t *testing.T) *indexedSink {
	t.Helper()
	s := &indexedSink{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		lines := strings.Split(strings.TrimSpace(string(body)), "\n")
		s.mu.Lock()
		for i := 0; i+1 < len(lines); i += 2 {
			var action map[string]map[string]string
			var d map[string]any
			if json.Unmarshal([]byte(lines[i]), &action) == nil && json.Unmarshal([]byte(lines[i+1]), &d) == nil {
				s.docs = append(s.docs, indexedDoc{index: action["index"]["_index"], doc: d})
			}
		}
		s.mu.Unlock()
		_, _ = w.Write([]byte(`{"errors":false,"items":[]}`))
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// runDocs returns the task run documents of triggerID, by event.
func (s *indexedSink) runDocs(triggerID string) map[string][]indexedDoc {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string][]indexedDoc{}
	for _, d := range s.docs {
		if d.doc["trigger_id"] == triggerID && strings.HasPrefix(fmt.Sprint(d.doc["event"]), "task.run.") {
			ev := fmt.Sprint(d.doc["event"])
			out[ev] = append(out[ev], d)
		}
	}
	return out
}

// withEvent returns the documents whose event is ev.
func (s *indexedSink) withEvent(ev string) []indexedDoc {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []indexedDoc
	for _, d := range s.docs {
		if d.doc["event"] == ev {
			out = append(out, d)
		}
	}
	return out
}

// TestTaskRunEventsAtTheSink: each run of a task reaches the event sink
// twice, when it fires and when its outcome is final, with its task,
// trigger, slot, target, state, attempt, error, duration and node, in
// the index the template names for the tasks service and the event's
// UTC day; a job's transitions go to the jobs index, and its runs are
// not sent as task runs. /metrics shows the sink's drops. On the test
// driver.
func TestTaskRunEventsAtTheSink(t *testing.T) {
	h := startHook(t)
	es := startIndexedSink(t)
	b := setup(t, func(c *config.Config) {
		c.HTTP.Allow = []string{"127.0.0.0/8"}
		c.Events = config.Events{Kind: "http", URL: es.srv.URL + "/_bulk", Index: "cronsheet-{service}-{date}"}
	})
	target := map[string]any{"id": "hook", "kind": "http", "state": "running",
		"http": map[string]any{"method": "POST", "url": h.srv.URL + "/cb/{{task_id}}"}}
	if code := b.call(t, "POST", "/api/v1/targets", target, nil); code != http.StatusCreated {
		t.Fatalf("create target: status %d", code)
	}
	if code := b.call(t, "POST", "/api/v1/scenarios/memos/rows", map[string]any{
		"memo_id": "s1", "content": "ping", "when": "every 1s", "targets": "hook"}, nil); code != http.StatusCreated {
		t.Fatalf("create row: status %d", code)
	}
	var ended []*task.Run
	eventually(t, "two runs of s1 to end", func() bool {
		ended = ended[:0]
		for _, r := range b.runs(t, "s1") {
			if r.State.Final() {
				ended = append(ended, r)
			}
		}
		return len(ended) >= 2
	})
	for _, r := range ended {
		eventually(t, "both events of run "+r.TriggerID, func() bool {
			d := es.runDocs(r.TriggerID)
			return len(d["task.run.fired"]) > 0 && len(d["task.run.final"]) > 0
		})
		docs := es.runDocs(r.TriggerID)
		if len(docs["task.run.fired"]) != 1 || len(docs["task.run.final"]) != 1 {
			t.Fatalf("run %s: the sink got %d fired and %d final documents, want one each", r.TriggerID,
				len(docs["task.run.fired"]), len(docs["task.run.final"]))
		}
		fired, final := docs["task.run.fired"][0], docs["task.run.final"][0]
		slot := r.Slot.UTC().Format(time.RFC3339Nano)
		if fired.doc["task_id"] != "s1" || fired.doc["slot"] != slot || fired.doc["target"] != "hook" ||
			fired.doc["state"] != "running" || fired.doc["attempt"] != float64(1) || fired.doc["node"] != "test-node" ||
			fired.doc["trigger_type"] != string(task.TriggerSchedule) {
			t.Errorf("fired document = %v, want run %+v as fired", fired.doc, r)
		}
		if final.doc["state"] != string(r.State) || final.doc["slot"] != slot || final.doc["attempt"] != float64(r.Attempt) {
			t.Errorf("final document = %v, want run %+v", final.doc, r)
		}
		// The duration is from fire to end, as the documents' times say
		// (the store may keep the run's times to the millisecond only).
		firedAt, _ := time.Parse(time.RFC3339Nano, fmt.Sprint(fired.doc["@timestamp"]))
		endedAt, _ := time.Parse(time.RFC3339Nano, fmt.Sprint(final.doc["@timestamp"]))
		if ms, ok := final.doc["duration_ms"].(float64); !ok || int64(ms) != endedAt.Sub(firedAt).Milliseconds() ||
			!endedAt.Truncate(time.Millisecond).Equal(r.FinishedAt.Truncate(time.Millisecond)) {
			t.Errorf("final duration_ms = %v at %v, want %d and the run's end %v", final.doc["duration_ms"], endedAt,
				endedAt.Sub(firedAt).Milliseconds(), r.FinishedAt)
		}
		for _, d := range []indexedDoc{fired, final} {
			at, err := time.Parse(time.RFC3339Nano, fmt.Sprint(d.doc["@timestamp"]))
			if want := "cronsheet-tasks-" + at.UTC().Format("2006.01.02"); err != nil || d.index != want {
				t.Errorf("%s document in index %q, want %q", d.doc["event"], d.index, want)
			}
		}
	}

	// A job: its transitions in the jobs index, its run not as a task run.
	var v jobView
	if code := b.call(t, "POST", "/api/v1/jobs", map[string]any{"method": "POST", "name": h.srv.URL + "/job",
		"wait": 10}, &v); code != http.StatusCreated || v.State != task.JobDone {
		t.Fatalf("job: status %d, %+v", code, v)
	}
	eventually(t, "the job's done transition at the sink", func() bool {
		for _, d := range es.withEvent("job.transition") {
			if d.doc["job_id"] == v.ID && d.doc["state"] == "done" {
				return strings.HasPrefix(d.index, "cronsheet-jobs-")
			}
		}
		return false
	})
	if n := len(es.runDocs(v.Run.TriggerID)); n != 0 {
		t.Errorf("the job's run came as task run events (%d kinds)", n)
	}
	if got := scrapeCounters(t, b, "cronsheet_sink_dropped_total"); fmt.Sprint(got) != "map[:0]" {
		t.Errorf("cronsheet_sink_dropped_total = %v, want one series at 0", got)
	}
}
