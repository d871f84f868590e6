package intake

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"

	"cronsheet/jobs"
	"cronsheet/task"
)

// wsMsg is a message as a client reads it.
type wsMsg struct {
	Type  string     `json:"type"`
	Seq   int        `json:"seq"`
	Job   *jobs.View `json:"job"`
	Error string     `json:"error"`
	Field string     `json:"field"`
}

type wsBundle struct {
	svc *jobs.Service
	ws  *WebSocket
	url string
}

func setupWebSocket(t *testing.T) *wsBundle {
	t.Helper()
	svc := newService(t)
	ws := NewWebSocket(testLogger(t), svc)
	srv := httptest.NewServer(ws)
	t.Cleanup(srv.Close)
	t.Cleanup(ws.Close) // first: the handlers of hijacked connections
	return &wsBundle{svc: svc, ws: ws, url: "ws" + strings.TrimPrefix(srv.URL, "http")}
}

func dial(t *testing.T, b *wsBundle) *websocket.Conn {
	t.Helper()
	conn, _, err := websocket.Dial(testContext(t), b.url, nil)
	if err != nil {
		t.Fatalf("dial: %v", err)
	}
	t.Cleanup(func() { _ = conn.CloseNow() })
	return conn
}

func exchange(t *testing.T, conn *websocket.Conn, body string) wsMsg {
	t.Helper()
	ctx := testContext(t)
	if err := conn.Write(ctx, websocket.MessageText, []byte(body)); err != nil {
		t.Fatalf("write: %v", err)
	}
	return readMsg(t, conn)
}

func readMsg(t *testing.T, conn *websocket.Conn) wsMsg {
	t.Helper()
	var m wsMsg
	if err := wsjson.Read(testContext(t), conn, &m); err != nil {
		t.Fatalf("read: %v", err)
	}
	return m
}

func TestWebSocket(t *testing.T) {
	t.Parallel()

	t.Run("SubmitRefuseAndResult", func(t *testing.T) {
		t.Parallel()
		b := setupWebSocket(t)
		conn := dial(t, b)

		acc := exchange(t, conn, validRequest)
		if acc.Type != "accepted" || acc.Seq != 1 || acc.Job == nil || acc.Job.ID == "" || acc.Job.State != task.JobPending {
			t.Fatalf("valid request: got %+v, want accepted seq 1 with a pending job", acc)
		}
		for i, body := range []string{unknownField, missingMethod, waitingRequest} {
			got := exchange(t, conn, body)
			wantMsg, wantField := "wait: not allowed on a WebSocket: the result is sent when the job is final", "wait"
			if body != waitingRequest {
				wantMsg, wantField = wantRefusal(t, body)
			}
			if got.Type != "error" || got.Seq != i+2 || got.Error != wantMsg || got.Field != wantField || got.Job != nil {
				t.Errorf("%s: got %+v, want error seq %d %q field %q", body, got, i+2, wantMsg, wantField)
			}
		}

		if _, err := b.svc.Cancel(testContext(t), acc.Job.ID); err != nil {
			t.Fatalf("cancel: %v", err)
		}
		res := readMsg(t, conn)
		if res.Type != "result" || res.Seq != 0 || res.Job == nil || res.Job.ID != acc.Job.ID || res.Job.State != task.JobCancelled {
			t.Fatalf("after cancel: got %+v, want the cancelled job's result", res)
		}
		if err := conn.Close(websocket.StatusNormalClosure, ""); err != nil {
			t.Fatalf("close: %v", err)
		}
	})

	t.Run("FinalOnSubmit", func(t *testing.T) {
		t.Parallel()
		b := setupWebSocket(t)
		v, err := b.svc.Submit(testContext(t), jobs.Request{Method: "GET", Name: "http://example.com/hook", Key: "k1", Delay: new(60.0)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := b.svc.Cancel(testContext(t), v.ID); err != nil {
			t.Fatal(err)
		}
		conn := dial(t, b)
		acc := exchange(t, conn, `{"method":"GET","name":"http://example.com/hook","key":"k1","delay":60}`)
		if acc.Type != "accepted" || acc.Job == nil || acc.Job.ID != v.ID || acc.Job.Created {
			t.Fatalf("repeat of a key: got %+v, want accepted job %s, created false", acc, v.ID)
		}
		if res := readMsg(t, conn); res.Type != "result" || res.Job == nil || res.Job.State != task.JobCancelled {
			t.Fatalf("got %+v, want the finished job's result at once", res)
		}
		// The key with another request: refused, naming the key, as on HTTP.
		if got := exchange(t, conn, `{"method":"GET","name":"http://example.com/other","key":"k1","delay":60}`); got.Type != "error" ||
			got.Field != "key" || !strings.Contains(got.Error, "different request") {
			t.Fatalf("key with a different request: got %+v, want an error naming key", got)
		}
	})

	t.Run("BinaryMessage", func(t *testing.T) {
		t.Parallel()
		b := setupWebSocket(t)
		conn := dial(t, b)
		if err := conn.Write(testContext(t), websocket.MessageBinary, []byte(validRequest)); err != nil {
			t.Fatal(err)
		}
		if got := readMsg(t, conn); got.Type != "error" || got.Seq != 1 || got.Field != "body" {
			t.Fatalf("binary message: got %+v, want error on body", got)
		}
	})

	t.Run("OtherOriginRefused", func(t *testing.T) {
		t.Parallel()
		b := setupWebSocket(t)
		conn, resp, err := websocket.Dial(testContext(t), b.url, &websocket.DialOptions{
			HTTPHeader: http.Header{"Origin": {"https://evil.example"}}})
		if err == nil {
			_ = conn.CloseNow()
			t.Fatal("a foreign origin was accepted")
		}
		if resp == nil || resp.StatusCode != http.StatusForbidden {
			t.Fatalf("foreign origin: got %v, %v; want 403", resp, err)
		}
	})

	t.Run("CloseGoesAway", func(t *testing.T) {
		t.Parallel()
		b := setupWebSocket(t)
		conn := dial(t, b)
		readErr := make(chan error, 1)
		go func() {
			_, _, err := conn.Read(testContext(t))
			readErr <- err
		}()
		b.ws.Close() // waits for the client to answer the close
		err := <-readErr
		if s := websocket.CloseStatus(err); s != websocket.StatusGoingAway {
			t.Fatalf("after Close: read error %v (status %v), want going away", err, s)
		}
		if _, resp, err := websocket.Dial(testContext(t), b.url, nil); err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("dial after Close: %v, %v; want 503", resp, err)
		}
	})

	t.Run("OversizeMessage", func(t *testing.T) {
		t.Parallel()
		b := setupWebSocket(t)
		conn := dial(t, b)
		conn.SetReadLimit(-1)
		big := `{"method":"POST","name":"http://example.com/hook","params":"` + strings.Repeat("x", jobs.MaxRequestBytes) + `"}`
		_ = conn.Write(testContext(t), websocket.MessageText, []byte(big)) // the server may close mid-write
		_, _, err := conn.Read(testContext(t))
		if s := websocket.CloseStatus(err); s != websocket.StatusMessageTooBig {
			t.Fatalf("oversize message: read error %v (status %v), want message too big", err, s)
		}
	})
}

// fakeSubmitter records the OnFinal subscriber; Submit is not used.
type fakeSubmitter struct {
	wants func(string) bool
	final func(*jobs.View)
}

func (f *fakeSubmitter) Submit(ctx context.Context, _ jobs.Request) (*jobs.View, error) {
	return nil, errors.New("not used")
}
func (f *fakeSubmitter) SubmitBatch(context.Context, []jobs.Request) ([]jobs.BatchResult, error) {
	return nil, errors.New("not used")
}
func (f *fakeSubmitter) OnFinal(wants func(string) bool, fn func(*jobs.View)) {
	f.wants, f.final = wants, fn
}

func newTestConn(queue int) *wsConn {
	return &wsConn{queue: make(chan []byte, queue), quit: make(chan struct{}), pending: map[string]struct{}{}}
}

func TestWebSocketSlowClientDisconnected(t *testing.T) {
	t.Parallel()
	c := newTestConn(1)
	if !c.send([]byte("1")) {
		t.Fatal("first message refused")
	}
	if c.send([]byte("2")) {
		t.Fatal("a message past the queue was accepted")
	}
	select {
	case <-c.quit:
	default:
		t.Fatal("a full queue did not end the connection")
	}
	if c.status != websocket.StatusPolicyViolation {
		t.Fatalf("status %v, want policy violation", c.status)
	}
}

// A job that becomes final between Submit returning and the connection
// routing its result still reaches the connection, once.
func TestWebSocketFinalBeforeTrack(t *testing.T) {
	t.Parallel()
	f := &fakeSubmitter{}
	w := NewWebSocket(nil, f)
	defer w.Close()
	c := newTestConn(4)

	if f.wants("job_a") {
		t.Fatal("wants a job that nobody submitted or awaits")
	}
	w.mu.Lock()
	mark := w.recent.begin()
	w.mu.Unlock()
	if !f.wants("job_a") {
		t.Fatal("does not want a job that became final while a submission was under way")
	}
	f.final(&jobs.View{ID: "job_a", State: task.JobDone})
	if !w.track(c, &jobs.View{ID: "job_a", State: task.JobPending}, mark) {
		t.Fatal("track refused")
	}
	w.mu.Lock()
	w.recent.end()
	w.mu.Unlock()
	if got := len(c.queue); got != 1 {
		t.Fatalf("%d messages queued, want the result", got)
	}
	if len(w.routes) != 0 || len(c.pending) != 0 {
		t.Fatalf("a delivered job is still routed: %v %v", w.routes, c.pending)
	}

	// A final announced before the mark is not this submission's.
	w.mu.Lock()
	mark = w.recent.begin()
	w.mu.Unlock()
	w.track(c, &jobs.View{ID: "job_b", State: task.JobPending}, mark)
	w.mu.Lock()
	w.recent.end()
	w.mu.Unlock()
	if !f.wants("job_b") || f.wants("job_c") {
		t.Fatalf("wants job_b (routed) %v, job_c (nobody's) %v; want true, false", f.wants("job_b"), f.wants("job_c"))
	}
	f.final(&jobs.View{ID: "job_b", State: task.JobDead})
	f.final(&jobs.View{ID: "job_c", State: task.JobDead}) // nobody's
	if got := len(c.queue); got != 2 {
		t.Fatalf("%d messages queued, want 2 results", got)
	}
}
