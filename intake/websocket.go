package intake

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"

	"cronsheet/jobs"
	"cronsheet/task"
)

// WebSocket settings.
const (
	// wsQueue bounds a connection's messages waiting to be written; a
	// client that lets it fill is disconnected (StatusPolicyViolation).
	wsQueue = 256
	// wsMaxPending bounds the jobs of one connection whose results are
	// still to be pushed; past it, submissions are refused.
	wsMaxPending = 10000
	// wsRecent is how many unclaimed final jobs are remembered (see
	// recentFinals).
	wsRecent       = 256
	wsWriteTimeout = 10 * time.Second
	wsPingInterval = 30 * time.Second
	wsPingTimeout  = 15 * time.Second
)

// WebSocket is the WebSocket intake, an http.Handler (GET). Each text
// message a client sends is one job request, the body of POST
// /api/v1/jobs, answered in order with
//
//	{"type": "accepted", "seq": N, "job": {…}}
//	{"type": "error", "seq": N, "error": "…", "field": "…"}
//
// where N numbers the connection's messages from 1. When a job submitted
// on the connection becomes final (done, dead, cancelled) the connection
// gets {"type": "result", "job": {…}}; a job already final when submitted
// (a key naming a finished job) gets its result right after "accepted".
//
// The Origin header, when a browser sends one, must name the request's
// host. A message is at most jobs.MaxRequestBytes: a larger one closes the
// connection (StatusMessageTooBig). The server pings every 30 s and closes
// a connection that does not answer; a client that does not read its
// messages fast enough is disconnected (StatusPolicyViolation) rather than
// slowing the service. Results of jobs still pending when a connection
// closes are not sent anywhere: reconnect and GET /api/v1/jobs/{id}.
type WebSocket struct {
	logger *slog.Logger
	svc    Submitter
	ctx    context.Context // ends at Close
	cancel context.CancelFunc
	wg     sync.WaitGroup // ServeHTTP calls

	mu     sync.Mutex
	closed bool
	routes map[string][]*wsConn // job id → connections awaiting its result
	recent recentFinals
}

// NewWebSocket returns the WebSocket intake over svc and registers its one
// OnFinal subscriber with svc (so call it before svc is used). logger may
// be nil. Close it after the HTTP server has shut down.
func NewWebSocket(logger *slog.Logger, svc Submitter) *WebSocket {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	w := &WebSocket{logger: logger.With("component", "intake.websocket"), svc: svc,
		routes: map[string][]*wsConn{}, recent: newRecentFinals(wsRecent)}
	w.ctx, w.cancel = context.WithCancel(context.Background())
	svc.OnFinal(w.wants, w.onFinal)
	return w
}

// Close closes every connection (StatusGoingAway) and waits for their
// handlers to return: at once for clients that answer the close, after
// about 10 s for those that do not. Later upgrades are refused with 503.
// http.Server.Shutdown does not wait for (or close) upgraded connections,
// so call Close after it. Safe to call twice.
func (w *WebSocket) Close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.cancel()
	w.wg.Wait()
}

// wsConn is one client connection.
type wsConn struct {
	conn    *websocket.Conn
	queue   chan []byte
	quit    chan struct{} // closed by fail
	once    sync.Once
	status  websocket.StatusCode
	reason  string
	pending map[string]struct{} // jobs awaiting their result; under WebSocket.mu
}

// fail asks the writer to close the connection with status and reason;
// the first call wins.
func (c *wsConn) fail(status websocket.StatusCode, reason string) {
	c.once.Do(func() {
		c.status, c.reason = status, reason
		close(c.quit)
	})
}

// send queues msg without blocking; a full queue disconnects the client.
func (c *wsConn) send(msg []byte) bool {
	select {
	case c.queue <- msg:
		return true
	default:
		c.fail(websocket.StatusPolicyViolation, "too slow: messages are not being read")
		return false
	}
}

// ServeHTTP upgrades the request to a WebSocket and serves it until either
// side closes it, the request's context ends or Close is called.
func (w *WebSocket) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		rw.Header().Set("Content-Type", "application/json; charset=utf-8")
		rw.WriteHeader(http.StatusServiceUnavailable)
		_, _ = rw.Write([]byte(`{"error":"shutting down"}`))
		return
	}
	w.wg.Add(1) // under mu: Close's Wait cannot have begun
	w.mu.Unlock()
	defer w.wg.Done()

	conn, err := websocket.Accept(rw, r, nil) // nil: same-origin only
	if err != nil {
		w.logger.InfoContext(r.Context(), "websocket refused", "remote", r.RemoteAddr, "error", err)
		return // Accept wrote the answer
	}
	defer conn.CloseNow()
	conn.SetReadLimit(jobs.MaxRequestBytes)
	c := &wsConn{conn: conn, queue: make(chan []byte, wsQueue), quit: make(chan struct{}), pending: map[string]struct{}{}}

	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	stopClose := context.AfterFunc(w.ctx, cancel)
	defer stopClose()
	stopFail := context.AfterFunc(ctx, func() { c.fail(websocket.StatusGoingAway, "server shutting down") })
	defer stopFail()

	var writer sync.WaitGroup
	writer.Go(func() { w.write(c) })
	w.logger.DebugContext(ctx, "websocket open", "remote", r.RemoteAddr)
	w.read(ctx, c)
	c.fail(websocket.StatusNormalClosure, "")
	writer.Wait()
	w.forget(c)
	w.logger.DebugContext(ctx, "websocket closed", "remote", r.RemoteAddr, "status", c.status, "reason", c.reason)
}

// write writes queued messages and pings until fail is called, then
// closes the connection.
func (w *WebSocket) write(c *wsConn) {
	ping := time.NewTicker(wsPingInterval)
	defer ping.Stop()
	for {
		select {
		case <-c.quit:
			_ = c.conn.Close(c.status, c.reason) // the handshake is bounded by the library (5 s + 5 s)
			return
		case msg := <-c.queue:
			ctx, cancel := context.WithTimeout(context.Background(), wsWriteTimeout)
			err := c.conn.Write(ctx, websocket.MessageText, msg)
			cancel()
			if err != nil {
				c.fail(websocket.StatusGoingAway, "write failed")
				_ = c.conn.CloseNow()
				return
			}
		case <-ping.C:
			ctx, cancel := context.WithTimeout(context.Background(), wsPingTimeout)
			err := c.conn.Ping(ctx)
			cancel()
			if err != nil {
				c.fail(websocket.StatusPolicyViolation, "no answer to ping")
				_ = c.conn.CloseNow()
				return
			}
		}
	}
}

// read answers the client's messages in order until the connection or ctx
// ends.
func (w *WebSocket) read(ctx context.Context, c *wsConn) {
	for seq := 1; ; seq++ {
		// Not ctx: cancelling a Read drops the connection without a close
		// frame. The writer's Close ends this Read instead.
		typ, data, err := c.conn.Read(context.Background())
		if err != nil {
			if s := websocket.CloseStatus(err); s != websocket.StatusNormalClosure && s != websocket.StatusGoingAway &&
				ctx.Err() == nil {
				w.logger.DebugContext(ctx, "websocket read", "error", err)
			}
			return
		}
		if !w.handle(ctx, c, seq, typ, data) {
			return
		}
	}
}

// wsMessage is what the WebSocket sends.
type wsMessage struct {
	Type  string     `json:"type"`
	Seq   int        `json:"seq,omitempty"`
	Job   *jobs.View `json:"job,omitempty"`
	Error string     `json:"error,omitempty"`
	Field string     `json:"field,omitempty"`
}

// handle submits message seq and answers it; false ends the connection.
func (w *WebSocket) handle(ctx context.Context, c *wsConn, seq int, typ websocket.MessageType, data []byte) bool {
	if typ == websocket.MessageText && isBatch(data) {
		return w.handleBatch(ctx, c, seq, data)
	}
	mark, end := w.recent.window(&w.mu)
	defer end()
	v, err := w.submit(ctx, c, typ, data)
	if err != nil && ctx.Err() != nil {
		return false // shutting down: nobody reads the answer
	}
	answer := wsMessage{Type: typeAccepted, Seq: seq, Job: v}
	if err != nil {
		msg, field, ok := clientError(err)
		if !ok {
			w.logger.ErrorContext(ctx, "websocket submit", "seq", seq, "error", err)
			msg = internalMsg
		}
		answer = wsMessage{Type: typeError, Seq: seq, Error: msg, Field: field}
	}
	if !c.send(encode(w.logger, answer)) {
		return false
	}
	if v != nil {
		return w.track(c, v, mark)
	}
	return true
}

// submit decodes and submits one message.
func (w *WebSocket) submit(ctx context.Context, c *wsConn, typ websocket.MessageType, data []byte) (*jobs.View, error) {
	if typ != websocket.MessageText {
		return nil, task.Invalid("body", "send each job as a JSON text message, not binary")
	}
	req, err := parse(data, "on a WebSocket")
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	full := len(c.pending) >= wsMaxPending
	w.mu.Unlock()
	if full {
		return nil, &refusedError{msg: fmt.Sprintf("%d jobs of this connection await their results; wait for some before submitting more", wsMaxPending)}
	}
	return w.svc.Submit(ctx, req)
}

// track arranges for v's result to reach c: now, when v is final already
// or became final since mark; else when the service announces it.
func (w *WebSocket) track(c *wsConn, v *jobs.View, mark uint64) bool {
	if v.State.Final() {
		return c.send(encode(w.logger, resultMessage{Type: typeResult, Job: v}))
	}
	w.mu.Lock()
	final := w.recent.take(v.ID, mark)
	if final == nil {
		if _, ok := c.pending[v.ID]; !ok {
			c.pending[v.ID] = struct{}{}
			w.routes[v.ID] = append(w.routes[v.ID], c)
		}
	}
	w.mu.Unlock()
	if final != nil {
		return c.send(encode(w.logger, resultMessage{Type: typeResult, Job: final}))
	}
	return true
}

// wants tells the service which final jobs onFinal needs: those a
// connection awaits, and any while a submission is under way.
func (w *WebSocket) wants(id string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.recent.submitting() || len(w.routes[id]) > 0
}

// onFinal is the service's OnFinal subscriber: it hands v to the
// connections that submitted it, without blocking.
func (w *WebSocket) onFinal(v *jobs.View) {
	w.mu.Lock()
	w.recent.announce()
	conns := w.routes[v.ID]
	delete(w.routes, v.ID)
	for _, c := range conns {
		delete(c.pending, v.ID)
	}
	if len(conns) == 0 {
		w.recent.keep(v)
	}
	w.mu.Unlock()
	if len(conns) == 0 {
		return
	}
	msg := encode(w.logger, resultMessage{Type: typeResult, Job: v})
	for _, c := range conns {
		c.send(msg)
	}
}

// forget drops c's routes.
func (w *WebSocket) forget(c *wsConn) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for id := range c.pending {
		list := w.routes[id]
		for i, other := range list {
			if other == c {
				list = append(list[:i], list[i+1:]...)
				break
			}
		}
		if len(list) == 0 {
			delete(w.routes, id)
		} else {
			w.routes[id] = list
		}
	}
	clear(c.pending)
}

// encode marshals msg; it cannot fail for the message types here.
func encode(logger *slog.Logger, msg any) []byte {
	b, err := json.Marshal(msg)
	if err != nil {
		logger.Error("encode message", "error", err)
		return []byte(`{"type":"error","error":"internal error"}`)
	}
	return b
}

var _ http.Handler = (*WebSocket)(nil)
