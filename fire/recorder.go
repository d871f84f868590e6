package fire

import (
	"cmp"
	"context"
	"fmt"
	"sync"
	"time"

	"cronsheet/store"
)

// maxGroupBatch bounds the items one group-committed transaction writes.
const maxGroupBatch = 500

// groupAttempts is how often a failed group transaction is tried.
const groupAttempts = 4

// groupCommit writes items of concurrent callers in shared transactions:
// while one transaction is being written, items queue up, and the next
// transaction takes them all. A burst of fires (or of deliveries ending
// together) thus costs a few commits, not one each.
//
// It starts no goroutine: the first caller that finds nobody writing
// becomes the writer and keeps writing until the queue is empty.
type groupCommit[In, Out any] struct {
	// write stores items in one transaction and returns one result each;
	// an error means nothing was stored.
	write func(ctx context.Context, items []In) ([]Out, error)
	// failed is the result of an item whose transaction failed for good.
	failed  func(err error) Out
	timeout time.Duration // per transaction
	max     int           // items per transaction; 0: maxGroupBatch
	// share, when set, sorts items into shares of at most maxGroupBatch
	// per transaction each (takeLocked).
	share func(In) int

	mu      sync.Mutex
	queue   []groupReq[In, Out]
	writing bool
}

type groupReq[In, Out any] struct {
	item In
	done chan Out // buffered: the writer never blocks on it
}

// submit queues items together (so they usually share a transaction) and
// returns their results, in order, once written.
func (g *groupCommit[In, Out]) submit(items ...In) []Out {
	reqs := make([]groupReq[In, Out], len(items))
	g.mu.Lock()
	for i, it := range items {
		reqs[i] = groupReq[In, Out]{item: it, done: make(chan Out, 1)}
		g.queue = append(g.queue, reqs[i])
	}
	lead := !g.writing
	g.writing = true
	g.mu.Unlock()
	if lead {
		g.writeAll()
	}
	out := make([]Out, len(reqs))
	for i, req := range reqs {
		out[i] = <-req.done
	}
	return out
}

// writeAll writes batches until the queue is empty.
func (g *groupCommit[In, Out]) writeAll() {
	for {
		g.mu.Lock()
		batch := g.takeLocked()
		if len(batch) == 0 {
			g.writing = false
			g.mu.Unlock()
			return
		}
		g.mu.Unlock()
		g.writeBatch(batch)
	}
}

// takeLocked takes the next batch off the queue: the oldest items, at
// most max (maxGroupBatch when 0). With a share, at most maxGroupBatch of
// one share each, the oldest of each: the fires of a burst, queued all at
// once, then do not keep the deliveries ending meanwhile waiting behind
// all of them.
func (g *groupCommit[In, Out]) takeLocked() []groupReq[In, Out] {
	limit := min(len(g.queue), cmp.Or(g.max, maxGroupBatch))
	if g.share == nil {
		batch := append([]groupReq[In, Out](nil), g.queue[:limit]...)
		g.queue = append(g.queue[:0], g.queue[limit:]...)
		return batch
	}
	var batch []groupReq[In, Out]
	taken := map[int]int{}
	rest := g.queue[:0]
	for _, req := range g.queue {
		if k := g.share(req.item); len(batch) < limit && taken[k] < maxGroupBatch {
			taken[k]++
			batch = append(batch, req)
			continue
		}
		rest = append(rest, req)
	}
	clear(g.queue[len(rest):])
	g.queue = rest
	return batch
}

// writeBatch writes one batch, retrying a failed transaction with backoff.
func (g *groupCommit[In, Out]) writeBatch(batch []groupReq[In, Out]) {
	items := make([]In, len(batch))
	for i, req := range batch {
		items[i] = req.item
	}
	var err error
	for attempt := range groupAttempts {
		if attempt > 0 {
			time.Sleep(time.Duration(50<<attempt) * time.Millisecond)
		}
		var results []Out
		ctx, cancel := context.WithTimeout(context.Background(), g.timeout)
		results, err = g.write(ctx, items)
		cancel()
		if err == nil {
			for i, req := range batch {
				req.done <- results[i]
			}
			return
		}
	}
	for _, req := range batch {
		req.done <- g.failed(fmt.Errorf("after %d tries: %w", groupAttempts, err))
	}
}

// newRecorder group-commits ledger records (store.Ledger.RecordFires).
func newRecorder(st Store, timeout time.Duration) *groupCommit[store.FireRecord, store.FireResult] {
	return &groupCommit[store.FireRecord, store.FireResult]{
		write:   st.RecordFires,
		failed:  func(err error) store.FireResult { return store.FireResult{Err: err} },
		timeout: timeout,
	}
}

// newFinisher group-commits finished runs when the store can
// (store.RunFinisher); nil when it cannot, and FinishRun is called alone.
func newFinisher(st Store, timeout time.Duration) *groupCommit[store.FireRecord, error] {
	rf, ok := st.(store.RunFinisher)
	if !ok {
		return nil
	}
	return &groupCommit[store.FireRecord, error]{
		write:   rf.FinishRuns,
		failed:  func(err error) error { return err },
		timeout: timeout,
	}
}
