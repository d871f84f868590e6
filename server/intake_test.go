package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"cronsheet/config"
	"cronsheet/task"
)

// intakeMessage is a message of the WebSocket or Kafka intake.
type intakeMessage struct {
	Type  string   `json:"type"`
	Job   *jobView `json:"job"`
	Error string   `json:"error"`
	Field string   `json:"field"`
}

// badJob is the malformed body every channel must refuse the same way.
const badJob = `{"method":"POST","name":"http://127.0.0.1:9/x","delay":"soon"}`

// httpRefusal returns what the HTTP intake says of badJob.
func httpRefusal(t *testing.T, b *testBundle) (msg, field string) {
	t.Helper()
	resp, err := http.Post(b.base+"/api/v1/jobs", "application/json", strings.NewReader(badJob))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e struct{ Error, Field string }
	if err := json.NewDecoder(resp.Body).Decode(&e); err != nil || resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("HTTP refusal: status %d, %v", resp.StatusCode, err)
	}
	return e.Error, e.Field
}

// TestWebSocketIntake: a job submitted over the WebSocket is accepted,
// fires, and its result is pushed on the same connection; a malformed one
// gets the HTTP API's message.
func TestWebSocketIntake(t *testing.T) {
	b, h := setupJobs(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(b.base, "http")+"/api/v1/jobs/ws", nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	defer conn.CloseNow()
	if err := wsjson.Write(ctx, conn, map[string]any{"method": "POST", "delay": 0.2, "name": h.srv.URL + "/ws"}); err != nil {
		t.Fatal(err)
	}
	if err := conn.Write(ctx, websocket.MessageText, []byte(badJob)); err != nil {
		t.Fatal(err)
	}
	var accepted, refused, result intakeMessage
	for _, m := range []*intakeMessage{&accepted, &refused, &result} {
		if err := wsjson.Read(ctx, conn, m); err != nil {
			t.Fatalf("read: %v", err)
		}
	}
	if accepted.Type != "accepted" || accepted.Job == nil {
		t.Fatalf("first answer = %+v, want accepted", accepted)
	}
	msg, field := httpRefusal(t, b)
	if refused.Type != "error" || refused.Error != msg || refused.Field != field {
		t.Errorf("WebSocket refusal = %+v; HTTP says %q on %q", refused, msg, field)
	}
	if result.Type != "result" || result.Job == nil || result.Job.ID != accepted.Job.ID || result.Job.State != task.JobDone {
		t.Errorf("pushed result = %+v, want job %s done", result, accepted.Job.ID)
	}
	if n := len(h.callsOf(accepted.Job.ID)); n != 1 {
		t.Errorf("hook called %d times, want 1", n)
	}
}

// TestKafkaIntake: a job produced to the intake topic is answered on the
// result topic (accepted, then its result); a malformed one gets the HTTP
// API's message.
func TestKafkaIntake(t *testing.T) {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, "jobs-in", "jobs-out"))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	h := startJobHook(t)
	b := setup(t, func(c *config.Config) {
		c.HTTP.Allow = []string{"127.0.0.0/8"}
		c.Jobs.Kafka = config.JobsKafka{Brokers: cluster.ListenAddrs(), Topic: "jobs-in", ResultTopic: "jobs-out", Group: "cronsheet"}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl, err := kgo.NewClient(kgo.SeedBrokers(cluster.ListenAddrs()...), kgo.ConsumeTopics("jobs-out"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	good, _ := json.Marshal(map[string]any{"method": "POST", "delay": 0.2, "name": h.srv.URL + "/kafka"})
	for _, v := range [][]byte{good, []byte(badJob)} {
		if err := cl.ProduceSync(ctx, &kgo.Record{Topic: "jobs-in", Value: v}).FirstErr(); err != nil {
			t.Fatalf("produce: %v", err)
		}
	}
	var msgs []intakeMessage
	for len(msgs) < 3 {
		fetches := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			t.Fatalf("got %d answers of 3: %+v", len(msgs), msgs)
		}
		for _, r := range fetches.Records() {
			var m intakeMessage
			if err := json.Unmarshal(r.Value, &m); err != nil {
				t.Fatalf("answer %s: %v", r.Value, err)
			}
			msgs = append(msgs, m)
		}
	}
	byType := map[string]intakeMessage{}
	for _, m := range msgs {
		byType[m.Type] = m
	}
	msg, field := httpRefusal(t, b)
	if e := byType["error"]; e.Error != msg || e.Field != field {
		t.Errorf("Kafka refusal = %+v; HTTP says %q on %q", e, msg, field)
	}
	acc, res := byType["accepted"], byType["result"]
	if acc.Job == nil || res.Job == nil || res.Job.ID != acc.Job.ID || res.Job.State != task.JobDone {
		t.Errorf("answers = %+v, want accepted then a done result of the same job", msgs)
	}
	if acc.Job != nil && len(h.callsOf(acc.Job.ID)) != 1 {
		t.Errorf("hook calls = %d, want 1", len(h.callsOf(acc.Job.ID)))
	}
}

// TestEventSink: with events.kind http, each job transition reaches the
// bulk endpoint as an Elasticsearch bulk action and document.
func TestEventSink(t *testing.T) {
	var mu sync.Mutex
	var docs []map[string]any
	es := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		lines := strings.Split(strings.TrimSpace(string(body)), "\n")
		mu.Lock()
		for i := 1; i < len(lines); i += 2 {
			var d map[string]any
			if json.Unmarshal([]byte(lines[i]), &d) == nil {
				docs = append(docs, d)
			}
		}
		mu.Unlock()
		_, _ = w.Write([]byte(`{"errors":false,"items":[]}`))
	}))
	defer es.Close()
	h := startJobHook(t)
	b := setup(t, func(c *config.Config) {
		c.HTTP.Allow = []string{"127.0.0.0/8"}
		c.Events = config.Events{Kind: "http", URL: es.URL + "/_bulk"}
	})
	var v jobView
	b.call(t, "POST", "/api/v1/jobs", map[string]any{"method": "POST", "name": h.srv.URL + "/e", "wait": 10}, &v)
	if v.State != task.JobDone {
		t.Fatalf("job = %+v, want done", v)
	}
	eventually(t, "the job's transitions at the sink", func() bool {
		mu.Lock()
		defer mu.Unlock()
		states := map[string]bool{}
		for _, d := range docs {
			if d["job_id"] == v.ID && d["event"] == "job.transition" && d["@timestamp"] != nil {
				states[d["state"].(string)] = true
			}
		}
		return states["pending"] && states["running"] && states["done"]
	})
}
