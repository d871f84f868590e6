package sink_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"cronsheet/sink"
	"cronsheet/store"
	"cronsheet/task"
)

// bulkRequest is one request the fake bulk endpoint received.
type bulkRequest struct {
	contentType string
	body        []byte
}

// esBundle is a fake Elasticsearch bulk endpoint and a sink posting to it.
type esBundle struct {
	sink     *sink.Sink
	requests chan bulkRequest
	logs     *syncBuffer
}

// setupES starts the endpoint, which answers each request with answer(n,
// req) (n counts from 1), and a sink posting to it with queue q. The sink
// is closed at cleanup if the test did not close it.
func setupES(t *testing.T, q sink.QueueConfig, answer func(n int, req bulkRequest) (int, string)) *esBundle {
	t.Helper()
	b := &esBundle{requests: make(chan bulkRequest, 100), logs: &syncBuffer{}}
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil || r.Method != http.MethodPost || r.URL.Path != "/_bulk" {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		req := bulkRequest{contentType: r.Header.Get("Content-Type"), body: body}
		b.requests <- req
		mu.Lock()
		n++
		i := n
		mu.Unlock()
		code, text := answer(i, req)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		_, _ = io.WriteString(w, text)
	}))
	t.Cleanup(srv.Close)
	logger := slog.New(slog.NewTextHandler(b.logs, nil))
	s, err := sink.NewHTTP(logger, sink.HTTPConfig{URL: srv.URL + "/_bulk", Index: "job-events", Queue: q})
	if err != nil {
		t.Fatalf("NewHTTP: %v", err)
	}
	b.sink = s
	t.Cleanup(func() { _ = s.Close(context.Background()) })
	return b
}

// ok is a bulk answer without errors.
func ok(int, bulkRequest) (int, string) { return http.StatusOK, `{"took":1,"errors":false,"items":[]}` }

// fastRetry retries at once, so tests do not wait.
var fastRetry = sink.QueueConfig{MinBackoff: time.Millisecond, MaxBackoff: time.Millisecond}

// bulkPair is one action line and its document.
type bulkPair struct {
	Action map[string]map[string]string
	Doc    map[string]any
}

// parseBulk checks that body is NDJSON of alternating action lines and
// documents, each valid JSON, and returns the pairs.
func parseBulk(t *testing.T, body []byte) []bulkPair {
	t.Helper()
	if !bytes.HasSuffix(body, []byte("\n")) {
		t.Errorf("bulk body does not end with a newline: %q", body)
	}
	var pairs []bulkPair
	sc := bufio.NewScanner(bytes.NewReader(body))
	for line := 0; sc.Scan(); line++ {
		if line%2 == 0 {
			var p bulkPair
			if err := json.Unmarshal(sc.Bytes(), &p.Action); err != nil || p.Action["index"] == nil {
				t.Fatalf("line %d is not an index action: %s (%v)", line+1, sc.Bytes(), err)
			}
			pairs = append(pairs, p)
			continue
		}
		if err := json.Unmarshal(sc.Bytes(), &pairs[len(pairs)-1].Doc); err != nil {
			t.Fatalf("line %d is not a JSON document: %s (%v)", line+1, sc.Bytes(), err)
		}
	}
	if len(pairs) > 0 && pairs[len(pairs)-1].Doc == nil {
		t.Fatalf("the last action has no document: %s", body)
	}
	return pairs
}

// receive reads the next request, failing after a minute.
func (b *esBundle) receive(t *testing.T) bulkRequest {
	t.Helper()
	select {
	case r := <-b.requests:
		return r
	case <-time.After(time.Minute):
		t.Fatal("no bulk request came")
		return bulkRequest{}
	}
}

// jobIDs returns the job_id of each document.
func jobIDs(pairs []bulkPair) []string {
	var ids []string
	for _, p := range pairs {
		ids = append(ids, fmt.Sprint(p.Doc["job_id"]))
	}
	return ids
}

var at = time.Date(2026, 3, 7, 8, 30, 0, 123456789, time.FixedZone("CST", 8*3600))

// events returns n transitions of jobs j0, j1, …
func events(n int) []store.JobEvent {
	evs := make([]store.JobEvent, n)
	for i := range evs {
		evs[i] = store.JobEvent{JobID: fmt.Sprintf("j%d", i), At: at.Add(time.Duration(i) * time.Millisecond), State: task.JobRunning}
	}
	return evs
}

func closeSink(t *testing.T, s *sink.Sink) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
}

func TestHTTPBulk(t *testing.T) {
	t.Parallel()
	b := setupES(t, sink.QueueConfig{}, ok)
	evs := []store.JobEvent{
		{JobID: "job-1", At: at, State: task.JobRunning, TriggerID: "tr_1", Attempt: 1, Reason: "schedule"},
		{JobID: "job-1", At: at.Add(time.Second), State: task.JobDone, TriggerID: "tr_1", Attempt: 1, Reason: "200 OK"},
		{JobID: "job-2", At: at, State: task.JobCancelled, Reason: "cancelled by the API"},
	}
	b.sink.Publish(evs)
	closeSink(t, b.sink)
	req := b.receive(t)
	if req.contentType != "application/x-ndjson" {
		t.Errorf("Content-Type = %q", req.contentType)
	}
	pairs := parseBulk(t, req.body)
	if len(pairs) != len(evs) {
		t.Fatalf("got %d documents, want %d:\n%s", len(pairs), len(evs), req.body)
	}
	for i, ev := range evs {
		p := pairs[i]
		wantID := fmt.Sprintf("%s-%d-%d", ev.JobID, ev.At.UnixMilli(), i+1)
		if p.Action["index"]["_index"] != "job-events" || p.Action["index"]["_id"] != wantID {
			t.Errorf("action %d = %v, want _index job-events and _id %s", i, p.Action, wantID)
		}
		want := map[string]any{
			"@timestamp": ev.At.UTC().Format(time.RFC3339Nano), "event": "job.transition",
			"job_id": ev.JobID, "state": string(ev.State), "attempt": float64(ev.Attempt),
		}
		if ev.TriggerID != "" {
			want["trigger_id"] = ev.TriggerID
		}
		if ev.Reason != "" {
			want["reason"] = ev.Reason
		}
		if fmt.Sprint(p.Doc) != fmt.Sprint(want) {
			t.Errorf("document %d = %v\nwant %v", i, p.Doc, want)
		}
	}
	if d := b.sink.Dropped(); d != 0 {
		t.Errorf("Dropped = %d, want 0", d)
	}
}

func TestHTTPRetries(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		status int
	}{
		{"ServiceUnavailable", http.StatusServiceUnavailable},
		{"TooManyRequests", http.StatusTooManyRequests},
		{"BadGateway", http.StatusBadGateway},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setupES(t, fastRetry, func(n int, req bulkRequest) (int, string) {
				if n == 1 {
					return tt.status, `{"error":"busy"}`
				}
				return ok(n, req)
			})
			b.sink.Publish(events(3))
			closeSink(t, b.sink)
			first, second := b.receive(t), b.receive(t)
			if !bytes.Equal(first.body, second.body) {
				t.Errorf("the retry differs from the first request:\n%s\n%s", first.body, second.body)
			}
			if got := jobIDs(parseBulk(t, second.body)); strings.Join(got, ",") != "j0,j1,j2" {
				t.Errorf("retried jobs = %v", got)
			}
			if d := b.sink.Dropped(); d != 0 {
				t.Errorf("Dropped = %d, want 0", d)
			}
			if !strings.Contains(b.logs.String(), "will retry") {
				t.Errorf("the retry is not logged:\n%s", b.logs)
			}
		})
	}
}

func TestHTTPConnectionErrorRetries(t *testing.T) {
	t.Parallel()
	// Nothing listens: every attempt fails to connect, so Close gives up
	// when its context ends and counts what was left.
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close()
	logs := &syncBuffer{}
	s, err := sink.NewHTTP(slog.New(slog.NewTextHandler(logs, nil)), sink.HTTPConfig{URL: url, Queue: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	s.Publish(events(2))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Close(ctx); err == nil || !strings.Contains(err.Error(), "2 events unsent") {
		t.Errorf("Close = %v, want 2 events unsent", err)
	}
	if d := s.Dropped(); d != 2 {
		t.Errorf("Dropped = %d, want 2", d)
	}
	s.Publish(events(1))
	if d := s.Dropped(); d != 3 {
		t.Errorf("Dropped after a Publish past Close = %d, want 3", d)
	}
}

func TestHTTPRefused(t *testing.T) {
	t.Parallel()
	b := setupES(t, fastRetry, func(int, bulkRequest) (int, string) {
		return http.StatusBadRequest, `{"error":{"type":"parse_exception"}}`
	})
	b.sink.Publish(events(3))
	closeSink(t, b.sink)
	b.receive(t)
	select {
	case r := <-b.requests:
		t.Errorf("a refused batch was sent again: %s", r.body)
	default:
	}
	if d := b.sink.Dropped(); d != 3 {
		t.Errorf("Dropped = %d, want 3", d)
	}
	if !strings.Contains(b.logs.String(), "parse_exception") {
		t.Errorf("the refusal is not logged:\n%s", b.logs)
	}
}

func TestHTTPBulkItemErrors(t *testing.T) {
	t.Parallel()
	// Item 0 is rejected for load (retried), item 1 for its mapping
	// (logged, dropped), item 2 goes in.
	b := setupES(t, fastRetry, func(n int, req bulkRequest) (int, string) {
		if n > 1 {
			return ok(n, req)
		}
		return http.StatusOK, `{"took":3,"errors":true,"items":[
			{"index":{"_id":"a","status":429,"error":{"type":"es_rejected_execution_exception"}}},
			{"index":{"_id":"b","status":400,"error":{"type":"mapper_parsing_exception","reason":"failed to parse"}}},
			{"index":{"_id":"c","status":201}}]}`
	})
	b.sink.Publish(events(3))
	closeSink(t, b.sink)
	b.receive(t)
	if got := jobIDs(parseBulk(t, b.receive(t).body)); strings.Join(got, ",") != "j0" {
		t.Errorf("retried jobs = %v, want [j0]", got)
	}
	if d := b.sink.Dropped(); d != 1 {
		t.Errorf("Dropped = %d, want 1", d)
	}
	if !strings.Contains(b.logs.String(), "mapper_parsing_exception") {
		t.Errorf("the bulk errors are not logged:\n%s", b.logs)
	}
}

func TestHTTPQueueOverflow(t *testing.T) {
	t.Parallel()
	started, release := make(chan struct{}), make(chan struct{})
	b := setupES(t, sink.QueueConfig{Size: 4, Batch: 100}, func(n int, req bulkRequest) (int, string) {
		if n == 1 {
			close(started)
			<-release // hold the sender while the queue fills
		}
		return ok(n, req)
	})
	evs := events(11)
	b.sink.Publish(evs[:1])
	<-started
	for _, ev := range evs[1:] {
		b.sink.Publish([]store.JobEvent{ev})
	}
	if d := b.sink.Dropped(); d != 6 {
		t.Errorf("Dropped with 10 events over a queue of 4 = %d, want 6", d)
	}
	close(release)
	closeSink(t, b.sink)
	var got []string
	for range 2 {
		got = append(got, jobIDs(parseBulk(t, b.receive(t).body))...)
	}
	if strings.Join(got, ",") != "j0,j7,j8,j9,j10" {
		t.Errorf("sent jobs = %v, want j0 then the newest four", got)
	}
}

func TestNewHTTPValidates(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		cfg  sink.HTTPConfig
	}{
		{"NoURL", sink.HTTPConfig{}},
		{"NotHTTP", sink.HTTPConfig{URL: "ftp://es/_bulk"}},
		{"NoHost", sink.HTTPConfig{URL: "http:///_bulk"}},
		{"NegativeTimeout", sink.HTTPConfig{URL: "http://es:9200/_bulk", Timeout: -time.Second}},
		{"NegativeQueue", sink.HTTPConfig{URL: "http://es:9200/_bulk", Queue: sink.QueueConfig{Size: -1}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if s, err := sink.NewHTTP(nil, tt.cfg); err == nil {
				_ = s.Close(context.Background())
				t.Errorf("NewHTTP(%+v) = nil error", tt.cfg)
			}
		})
	}
}

// syncBuffer is a bytes.Buffer safe for a logger and a test at once.
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
