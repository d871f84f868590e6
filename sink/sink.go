// Package sink sends lifecycle events out of cronsheet: one JSON document
// per job transition (store.JobEvent), per end of a flow execution or of
// one of its step runs (FlowEvent), and per fire and final outcome of a
// task's run (RunEvent), to an HTTP endpoint as Elasticsearch bulk
// requests (NewHTTP, the index named by a template: package index) or to
// a Kafka topic (NewKafka).
//
// The sink is best-effort. The store keeps every transition (GET
// /api/v1/jobs/{id} shows them); the sink only copies them out. Publish
// never blocks: events wait in a bounded queue, and when it is full the
// oldest waiting events are dropped and counted (Dropped). A background
// sender takes up to a batch at a time and retries a failed batch with
// backoff until it goes through or the sink is closed.
//
// It imports store, task and sink/index only.
package sink

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"cronsheet/store"
)

// Defaults of QueueConfig.
const (
	DefaultQueueSize  = 10000
	DefaultBatchSize  = 500
	DefaultMinBackoff = 200 * time.Millisecond
	DefaultMaxBackoff = 30 * time.Second
)

// QueueConfig bounds what a Sink keeps and how it retries.
type QueueConfig struct {
	// Size is the most events waiting to be sent; past it the oldest are
	// dropped. Default DefaultQueueSize.
	Size int
	// Batch is the most events per request. Default DefaultBatchSize.
	Batch int
	// MinBackoff is the wait before the first retry of a failed batch; it
	// doubles (±10% jitter) up to MaxBackoff. Defaults DefaultMinBackoff
	// and DefaultMaxBackoff.
	MinBackoff, MaxBackoff time.Duration
}

func (c QueueConfig) withDefaults() (QueueConfig, error) {
	if c.Size < 0 || c.Batch < 0 || c.MinBackoff < 0 || c.MaxBackoff < 0 {
		return c, errors.New("sink queue config: size, batch and backoffs must not be negative")
	}
	c.Size = cmp.Or(c.Size, DefaultQueueSize)
	c.Batch = cmp.Or(c.Batch, DefaultBatchSize)
	c.MinBackoff = cmp.Or(c.MinBackoff, DefaultMinBackoff)
	c.MaxBackoff = max(cmp.Or(c.MaxBackoff, DefaultMaxBackoff), c.MinBackoff)
	return c, nil
}

// transport delivers batches for a Sink.
type transport interface {
	// send delivers batch. It returns the events worth another try (with
	// err saying why), and how many the far end refused for good.
	send(ctx context.Context, batch []item) (retry []item, refused int, err error)
	// close releases the transport's connections.
	close()
}

// Sink copies lifecycle events to an outside system; see the package doc.
// Its methods are safe for concurrent use.
type Sink struct {
	logger  *slog.Logger
	cfg     QueueConfig
	tr      transport
	dropped atomic.Int64

	mu     sync.Mutex
	queue  ring
	seq    uint64 // numbers the events, for their _id
	closed bool

	wake        chan struct{} // an event is waiting
	stop        chan struct{} // closed by Close: flush and return
	abort       context.Context
	abortCancel context.CancelFunc // Close's ctx ended: give up
	done        chan struct{}      // the sender returned
	unsent      int                // events given up at Close; read after done
	closeOnce   sync.Once
	closeErr    error
}

// newSink starts the sender over tr.
func newSink(logger *slog.Logger, component string, cfg QueueConfig, tr transport) *Sink {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &Sink{
		logger: logger.With("component", component),
		cfg:    cfg,
		tr:     tr,
		queue:  newRing(cfg.Size),
		wake:   make(chan struct{}, 1),
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	s.abort, s.abortCancel = context.WithCancel(context.Background())
	go s.run()
	return s
}

// Publish queues evs to be sent and returns at once (it suits
// jobs.Service.OnEvents). When the queue is full the oldest waiting events
// are dropped and counted; after Close every event is.
func (s *Sink) Publish(evs []store.JobEvent) {
	s.push(len(evs), func(i int, seq uint64) item { return item{ev: evs[i], seq: seq} })
}

// PublishFlow queues flow events like Publish does job events.
func (s *Sink) PublishFlow(evs ...FlowEvent) {
	s.push(len(evs), func(i int, seq uint64) item { return item{flow: &evs[i], seq: seq} })
}

// PublishRun queues task run events like Publish does job events. It
// takes a short lock and encodes nothing, so the firer may call it on
// its fire path.
func (s *Sink) PublishRun(evs ...RunEvent) {
	s.push(len(evs), func(i int, seq uint64) item { return item{run: &evs[i], seq: seq} })
}

// push queues n items made by mk (given the index and sequence number of
// each) and wakes the sender.
func (s *Sink) push(n int, mk func(i int, seq uint64) item) {
	if n == 0 {
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		s.dropped.Add(int64(n))
		return
	}
	lost := 0
	for i := range n {
		s.seq++
		lost += s.queue.push(mk(i, s.seq))
	}
	s.mu.Unlock()
	if lost > 0 {
		s.dropped.Add(int64(lost))
	}
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Dropped returns how many events the sink gave up on: pushed out of a
// full queue, refused for good by the far end (an HTTP 4xx, a bulk item
// error other than 429, a Kafka error no retry can fix), or still unsent
// when Close's ctx ended.
func (s *Sink) Dropped() int64 { return s.dropped.Load() }

// Close stops taking events and sends what is queued, retrying as usual,
// until everything is sent or ctx ends; then it gives up on the rest
// (counted in Dropped) and closes the connections. The error says how many
// events were left unsent. Calling Close again returns the same answer.
func (s *Sink) Close(ctx context.Context) error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		close(s.stop)
		select {
		case <-s.done:
			s.abortCancel()
			s.tr.close()
		case <-ctx.Done():
			// Cancel the send under way and close the connections first:
			// a Kafka record already in flight ends only then.
			s.abortCancel()
			s.tr.close()
			<-s.done
		}
		if s.unsent > 0 {
			s.closeErr = fmt.Errorf("sink closed with %d events unsent: %w", s.unsent, context.Cause(ctx))
		}
	})
	return s.closeErr
}

// run is the sender: it sends batches until Close, then flushes.
func (s *Sink) run() {
	defer close(s.done)
	for {
		batch := s.next()
		if batch == nil {
			return
		}
		s.deliver(batch)
	}
}

// next waits for the next batch; nil means the sink is closed and
// flushed (or given up on).
func (s *Sink) next() []item {
	for {
		s.mu.Lock()
		if s.abort.Err() != nil {
			n := s.queue.len()
			s.queue.pop(n)
			s.mu.Unlock()
			s.giveUp(n)
			return nil
		}
		batch := s.queue.pop(s.cfg.Batch)
		s.mu.Unlock()
		if len(batch) > 0 {
			return batch
		}
		select {
		case <-s.wake:
		case <-s.stop:
			s.mu.Lock()
			empty := s.queue.len() == 0
			s.mu.Unlock()
			if empty {
				return nil
			}
		}
	}
}

// deliver sends batch, retrying with backoff until it is through or the
// sink gives up.
func (s *Sink) deliver(batch []item) {
	backoff := s.cfg.MinBackoff
	for attempt := 1; ; attempt++ {
		retry, refused, err := s.tr.send(s.abort, batch)
		s.dropped.Add(int64(refused))
		if refused > 0 || (err != nil && len(retry) == 0) {
			// Refused for good, or taken with errors (a bulk answer with
			// "errors":true): logged, not retried.
			s.logger.Error("sink did not take every event", "num_refused", refused, "error", err)
		}
		if len(retry) == 0 {
			return
		}
		if s.abort.Err() != nil {
			s.giveUp(len(retry))
			return
		}
		s.logger.Warn("sink send failed, will retry", "num_events", len(retry), "attempt", attempt,
			"retry_in", backoff, "error", err)
		batch = retry
		wait := time.NewTimer(jitter(backoff))
		select {
		case <-wait.C:
		case <-s.abort.Done():
			wait.Stop()
			s.giveUp(len(batch))
			return
		}
		backoff = min(2*backoff, s.cfg.MaxBackoff)
	}
}

// giveUp counts n events abandoned at Close.
func (s *Sink) giveUp(n int) {
	if n == 0 {
		return
	}
	s.unsent += n
	s.dropped.Add(int64(n))
	s.logger.Warn("sink closed before sending every event", "num_unsent", n)
}

// jitter spreads d by ±10%.
func jitter(d time.Duration) time.Duration {
	return d + time.Duration((rand.Float64()*0.2-0.1)*float64(d))
}
