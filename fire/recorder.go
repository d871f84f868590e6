package fire

import (
	"context"
	"fmt"
	"sync"
	"time"

	"cronsheet/store"
)

// maxRecordBatch bounds the fires one ledger transaction records.
const maxRecordBatch = 500

// recordAttempts is how often a failed ledger transaction is tried.
const recordAttempts = 4

// recorder writes the ledger records of concurrent fires in shared
// transactions (group commit): while one transaction is being written,
// fires queue up, and the next transaction takes them all. A burst of
// fires due in the same second thus costs a few commits, not one each.
//
// It starts no goroutine: the first caller that finds nobody writing
// becomes the writer and keeps writing until the queue is empty.
type recorder struct {
	store   fireRecorder
	timeout time.Duration // per transaction

	mu      sync.Mutex
	queue   []recordReq
	writing bool
}

type fireRecorder interface {
	RecordFires(ctx context.Context, recs []store.FireRecord) ([]store.FireResult, error)
}

type recordReq struct {
	rec  store.FireRecord
	done chan store.FireResult // buffered: the writer never blocks on it
}

// recordAll queues recs together (so they usually share a transaction)
// and returns their results, in order.
func (r *recorder) recordAll(recs []store.FireRecord) []store.FireResult {
	reqs := make([]recordReq, len(recs))
	r.mu.Lock()
	for i, rec := range recs {
		reqs[i] = recordReq{rec: rec, done: make(chan store.FireResult, 1)}
		r.queue = append(r.queue, reqs[i])
	}
	lead := !r.writing
	r.writing = true
	r.mu.Unlock()
	if lead {
		r.writeAll()
	}
	out := make([]store.FireResult, len(reqs))
	for i, req := range reqs {
		out[i] = <-req.done
	}
	return out
}

// writeAll writes batches until the queue is empty.
func (r *recorder) writeAll() {
	for {
		r.mu.Lock()
		n := min(len(r.queue), maxRecordBatch)
		if n == 0 {
			r.writing = false
			r.mu.Unlock()
			return
		}
		batch := append([]recordReq(nil), r.queue[:n]...)
		r.queue = append(r.queue[:0], r.queue[n:]...)
		r.mu.Unlock()
		r.write(batch)
	}
}

// write records one batch, retrying a failed transaction with backoff.
func (r *recorder) write(batch []recordReq) {
	recs := make([]store.FireRecord, len(batch))
	for i, req := range batch {
		recs[i] = req.rec
	}
	var err error
	for attempt := range recordAttempts {
		if attempt > 0 {
			time.Sleep(time.Duration(50<<attempt) * time.Millisecond)
		}
		var results []store.FireResult
		ctx, cancel := context.WithTimeout(context.Background(), r.timeout)
		results, err = r.store.RecordFires(ctx, recs)
		cancel()
		if err == nil {
			for i, req := range batch {
				req.done <- results[i]
			}
			return
		}
	}
	for _, req := range batch {
		req.done <- store.FireResult{Err: fmt.Errorf("after %d tries: %w", recordAttempts, err)}
	}
}
