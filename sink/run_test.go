package sink_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"

	"cronsheet/sink"
	"cronsheet/store"
	"cronsheet/task"
)

// runEvents are a run fired and its end, a day apart in UTC.
func runEvents() []sink.RunEvent {
	fired := time.Date(2026, 12, 3, 23, 59, 59, 0, time.UTC)
	base := sink.RunEvent{TaskID: "m1", Title: "standup", TriggerID: "tr_1", TriggerType: "schedule",
		Slot: fired, Target: "hook", Attempt: 1, Node: "n1"}
	f, e := base, base
	f.At, f.Event, f.State = fired, sink.EventRunFired, "running"
	e.At, e.Event, e.State, e.Attempt, e.Error, e.Duration = fired.Add(1500*time.Millisecond), sink.EventRunFinal,
		"dead", 3, "HTTP 500", 1500*time.Millisecond
	return []sink.RunEvent{f, e}
}

func TestHTTPRunEventsAndIndexTemplate(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var bodies [][]byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		bodies = append(bodies, b)
		mu.Unlock()
		_, _ = w.Write([]byte(`{"errors":false}`))
	}))
	t.Cleanup(srv.Close)
	s, err := sink.NewHTTP(nil, sink.HTTPConfig{URL: srv.URL + "/_bulk", Index: "cronsheet-{service}-{date}"})
	if err != nil {
		t.Fatal(err)
	}
	s.PublishRun(runEvents()...)
	s.Publish([]store.JobEvent{{JobID: "job-1", At: at, State: task.JobDone}})
	s.PublishFlow(sink.FlowEvent{At: at, Event: sink.EventFlowExecution, FlowID: "f", ExecutionID: "x", State: "done"})
	closeSink(t, s)

	mu.Lock()
	defer mu.Unlock()
	var pairs []bulkPair
	for _, b := range bodies {
		pairs = append(pairs, parseBulk(t, b)...)
	}
	if len(pairs) != 4 {
		t.Fatalf("the receiver got %d documents, want 4", len(pairs))
	}
	wantIndex := []string{"cronsheet-tasks-2026.12.03", "cronsheet-tasks-2026.12.04", "cronsheet-jobs-2026.03.07",
		"cronsheet-flows-2026.03.07"}
	for i, p := range pairs {
		if got := p.Action["index"]["_index"]; got != wantIndex[i] {
			t.Errorf("document %d _index = %q, want %q", i, got, wantIndex[i])
		}
	}
	fired, final := pairs[0].Doc, pairs[1].Doc
	wantFired := map[string]any{"@timestamp": "2026-12-03T23:59:59Z", "event": "task.run.fired", "task_id": "m1",
		"title": "standup", "trigger_id": "tr_1", "trigger_type": "schedule", "slot": "2026-12-03T23:59:59Z",
		"target": "hook", "state": "running", "attempt": float64(1), "node": "n1"}
	if fmt.Sprint(fired) != fmt.Sprint(wantFired) {
		t.Errorf("fired document = %v\nwant %v", fired, wantFired)
	}
	if final["event"] != "task.run.final" || final["state"] != "dead" || final["error"] != "HTTP 500" ||
		final["duration_ms"] != float64(1500) || final["attempt"] != float64(3) {
		t.Errorf("final document = %v", final)
	}
	if id := pairs[0].Action["index"]["_id"]; id != "tr_1-task.run.fired-1" {
		t.Errorf("fired _id = %q", id)
	}
}

func TestKafkaRunEvents(t *testing.T) {
	t.Parallel()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, topic))
	if err != nil {
		t.Fatalf("kfake: %v", err)
	}
	t.Cleanup(c.Close)
	s, err := sink.NewKafka(nil, sink.KafkaConfig{Brokers: c.ListenAddrs(), Topic: topic, Queue: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	evs := runEvents()
	s.PublishRun(evs...)
	closeSink(t, s)
	recs := consume(t, c.ListenAddrs(), len(evs))
	for i, r := range recs {
		var doc sink.RunDocument
		if err := json.Unmarshal(r.Value, &doc); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if string(r.Key) != "m1" || doc.Event != evs[i].Event || doc.TriggerID != "tr_1" || doc.State != evs[i].State {
			t.Errorf("record %d = key %q %+v", i, r.Key, doc)
		}
	}
	if recs[1].Value == nil || !strings.Contains(string(recs[1].Value), `"duration_ms":1500`) {
		t.Errorf("final record lacks its duration: %s", recs[1].Value)
	}
}

func TestNewHTTPRefusesBadIndex(t *testing.T) {
	t.Parallel()
	s, err := sink.NewHTTP(nil, sink.HTTPConfig{URL: "http://es:9200/_bulk", Index: "x-{month}"})
	if err == nil {
		_ = s.Close(context.Background())
		t.Fatal("NewHTTP took index x-{month}")
	}
	if !strings.Contains(err.Error(), "{month}") {
		t.Errorf("error = %v, want it to name {month}", err)
	}
}
