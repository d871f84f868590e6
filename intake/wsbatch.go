package intake

import (
	"bytes"
	"context"
	"fmt"

	"cronsheet/jobs"
)

// typeBatch answers a batch message: one item per job, in order.
const typeBatch = "batch"

// batchMessage is the answer to a batch: each job's own answer, as the
// HTTP API's answer to a batch gives it.
type batchMessage struct {
	Type string      `json:"type"`
	Seq  int         `json:"seq"`
	Jobs []batchItem `json:"jobs"`
}

// batchItem is one job's answer in a batch: the job accepted, or why it
// was refused.
type batchItem struct {
	Index int        `json:"index"`
	Job   *jobs.View `json:"job,omitempty"`
	Error string     `json:"error,omitempty"`
	Field string     `json:"field,omitempty"`
}

// isBatch reports whether a message is a batch, in the two shapes POST
// /api/v1/jobs takes: a JSON array of requests, or {"jobs": [...]}.
func isBatch(data []byte) bool {
	trimmed := bytes.TrimSpace(data)
	if bytes.HasPrefix(trimmed, []byte("[")) {
		return true
	}
	rest, ok := bytes.CutPrefix(trimmed, []byte("{"))
	return ok && bytes.HasPrefix(bytes.TrimSpace(rest), []byte(`"jobs"`))
}

// handleBatch submits batch message seq and answers it with each job's
// answer; the accepted jobs' results follow as they become final. A batch
// that cannot be read at all is answered with one error. false ends the
// connection.
func (w *WebSocket) handleBatch(ctx context.Context, c *wsConn, seq int, data []byte) bool {
	mark, end := w.recent.window(&w.mu)
	defer end()
	items, err := w.submitBatch(ctx, c, data)
	if err != nil && ctx.Err() != nil {
		return false // shutting down: nobody reads the answer
	}
	if err != nil {
		msg, field, ok := clientError(err)
		if !ok {
			w.logger.ErrorContext(ctx, "websocket submit batch", "seq", seq, "error", err)
			msg = internalMsg
		}
		return c.send(encode(w.logger, wsMessage{Type: typeError, Seq: seq, Error: msg, Field: field}))
	}
	if !c.send(encode(w.logger, batchMessage{Type: typeBatch, Seq: seq, Jobs: items})) {
		return false
	}
	for _, it := range items {
		if it.Job != nil && !w.track(c, it.Job, mark) {
			return false
		}
	}
	return true
}

// submitBatch decodes and submits a batch, each job on its own.
func (w *WebSocket) submitBatch(ctx context.Context, c *wsConn, data []byte) ([]batchItem, error) {
	reqs, err := jobs.ParseBatch(data)
	if err != nil {
		return nil, err
	}
	w.mu.Lock()
	full := len(c.pending)+len(reqs) > wsMaxPending
	w.mu.Unlock()
	if full {
		return nil, &refusedError{msg: fmt.Sprintf("at most %d jobs of a connection may await their results; "+
			"wait for some before submitting more", wsMaxPending)}
	}
	results, err := w.svc.SubmitBatch(ctx, reqs)
	if err != nil {
		return nil, err
	}
	items := make([]batchItem, len(results))
	for i, r := range results {
		items[i] = batchItem{Index: i, Job: r.View}
		if r.Err == nil {
			continue
		}
		msg, field, ok := clientError(r.Err)
		if !ok {
			return nil, r.Err // the store failed: say so for the whole batch
		}
		items[i].Job, items[i].Error, items[i].Field = nil, msg, field
	}
	return items, nil
}
