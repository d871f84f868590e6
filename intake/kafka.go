package intake

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"cronsheet/jobs"
	"cronsheet/task"
)

// Kafka intake settings.
const (
	// kafkaMaxTracked bounds the jobs whose results are still to be
	// produced; past it the oldest is forgotten (its result is not
	// produced) and a warning is logged.
	kafkaMaxTracked = 50000
	kafkaRecent     = 256 // see recentFinals
	kafkaPoll       = 100 // records handled between commits
	kafkaFlush      = 10 * time.Second
	kafkaCommit     = 10 * time.Second
	kafkaMaxBackoff = 5 * time.Second
)

// KafkaConfig configures the Kafka intake. Every field is required.
type KafkaConfig struct {
	// Brokers are the seed brokers, "host:port".
	Brokers []string
	// Topic is the intake topic: each record's value is one job request,
	// the body of POST /api/v1/jobs.
	Topic string
	// ResultTopic receives the answers and results.
	ResultTopic string
	// Group is the consumer group reading Topic.
	Group string
}

func (c KafkaConfig) validate() error {
	switch {
	case len(c.Brokers) == 0:
		return task.Invalid("brokers", "at least one seed broker is required")
	case c.Topic == "":
		return task.Invalid("topic", "required")
	case c.ResultTopic == "":
		return task.Invalid("result_topic", "required")
	case c.ResultTopic == c.Topic:
		return task.Invalid("result_topic", "must differ from topic")
	case c.Group == "":
		return task.Invalid("group", "required")
	}
	return nil
}

// Kafka is the Kafka intake. It reads KafkaConfig.Topic in consumer group
// KafkaConfig.Group; each record's value is one job request. To
// KafkaConfig.ResultTopic it produces, keyed by the request record's key,
//
//	{"type": "accepted", "job": {…}, "topic", "partition", "offset"}
//	{"type": "error", "error": "…", "field": "…", "topic", "partition", "offset"}
//
// (topic, partition and offset name the request record), and, keyed by the
// job id, {"type": "result", "job": {…}} when a job submitted through
// Kafka becomes final on this node.
//
// Delivery is at least once: a record's offset is committed only after it
// was submitted and answered, so a record may be handled again after a
// crash or a rebalance. A request without a "key" is given the key
// "kafka:<topic>:<partition>:<offset>", so a redelivered record finds the
// job it made the first time (answered "accepted" again, with created
// false) instead of making a second one. The key is the record's place in
// the topic: recreating the topic reuses offsets, and their records would
// find the old jobs; give requests their own keys if that can happen.
//
// Submitted jobs are tracked in memory (at most 50,000, oldest forgotten
// first) to produce their results: results of jobs pending across a
// restart of this node are not produced; read them with
// GET /api/v1/jobs/{id}.
type Kafka struct {
	logger *slog.Logger
	svc    Submitter
	cfg    KafkaConfig
	client *kgo.Client

	mu      sync.Mutex
	closed  bool
	running bool
	tracked *boundedSet
	recent  recentFinals
	once    sync.Once
}

// NewKafka validates cfg, makes the Kafka client (no connection is made
// until Run) and registers the intake's one OnFinal subscriber with svc
// (so call it before svc is used). logger may be nil.
func NewKafka(logger *slog.Logger, svc Submitter, cfg KafkaConfig) (*Kafka, error) {
	if err := cfg.validate(); err != nil {
		return nil, fmt.Errorf("kafka intake: %w", err)
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	logger = logger.With("component", "intake.kafka")
	client, err := kgo.NewClient(
		kgo.SeedBrokers(cfg.Brokers...),
		kgo.ConsumerGroup(cfg.Group),
		kgo.ConsumeTopics(cfg.Topic),
		kgo.DisableAutoCommit(),
		kgo.BlockRebalanceOnPoll(), // never commit a partition lost in a rebalance
		kgo.WithLogger(kgoLogger{logger}),
	)
	if err != nil {
		return nil, fmt.Errorf("kafka intake client: %w", err)
	}
	k := &Kafka{logger: logger, svc: svc, cfg: cfg, client: client,
		tracked: newBoundedSet(kafkaMaxTracked), recent: newRecentFinals(kafkaRecent)}
	svc.OnFinal(k.wants, k.onFinal)
	return k, nil
}

// Close produces the results still buffered (for up to 10 s), leaves the
// group and closes the client; results of jobs that become final later are
// not produced. Stop Run (cancel its context and wait for it) first. Safe
// to call twice.
func (k *Kafka) Close() {
	k.once.Do(func() {
		k.mu.Lock()
		k.closed = true
		k.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), kafkaFlush)
		if err := k.client.Flush(ctx); err != nil {
			k.logger.Warn("results not produced before close", "error", err)
		}
		cancel()
		k.client.CloseAllowingRebalance()
	})
}

// Run consumes the intake topic until ctx ends or Close is called, then
// returns nil. Failures to fetch or commit are logged and retried; a
// submission the store fails is retried until it succeeds or ctx ends.
// Run may be called once.
func (k *Kafka) Run(ctx context.Context) error {
	k.mu.Lock()
	if k.running || k.closed {
		k.mu.Unlock()
		return errors.New("kafka intake: Run called twice or after Close")
	}
	k.running = true
	k.mu.Unlock()
	for {
		fetches := k.client.PollRecords(ctx, kafkaPoll)
		if fetches.IsClientClosed() || ctx.Err() != nil {
			k.client.AllowRebalance()
			return nil
		}
		failed := false
		fetches.EachError(func(topic string, partition int32, err error) {
			failed = true
			k.logger.ErrorContext(ctx, "fetch", "topic", topic, "partition", partition, "error", err)
		})
		recs := fetches.Records()
		err := k.handleAll(ctx, recs)
		k.client.AllowRebalance()
		if err != nil {
			return nil // ctx ended
		}
		if failed && len(recs) == 0 && !sleep(ctx, time.Second) {
			return nil
		}
	}
}

// handleAll handles recs in order, then commits those handled. It returns
// an error only when ctx ended.
func (k *Kafka) handleAll(ctx context.Context, recs []*kgo.Record) error {
	var err error
	n := 0
	for _, r := range recs {
		if err = k.handle(ctx, r); err != nil {
			break
		}
		n++
	}
	if n > 0 {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), kafkaCommit)
		if cerr := k.client.CommitRecords(cctx, recs[:n]...); cerr != nil {
			// The records will be handled again; their keys find their jobs.
			k.logger.ErrorContext(ctx, "commit offsets", "records", n, "error", cerr)
		}
		cancel()
	}
	return err
}

// kafkaAnswer answers one request record.
type kafkaAnswer struct {
	Type      string     `json:"type"`
	Job       *jobs.View `json:"job,omitempty"`
	Error     string     `json:"error,omitempty"`
	Field     string     `json:"field,omitempty"`
	Topic     string     `json:"topic"`
	Partition int32      `json:"partition"`
	Offset    int64      `json:"offset"`
}

// handle submits one record and produces its answer. It returns an error
// only when ctx ended (the record is then not committed).
func (k *Kafka) handle(ctx context.Context, r *kgo.Record) error {
	mark, end := k.recent.window(&k.mu)
	defer end()
	v, err := k.submit(ctx, r)
	if err != nil && ctx.Err() != nil {
		return err
	}
	answer := kafkaAnswer{Type: typeAccepted, Job: v, Topic: r.Topic, Partition: r.Partition, Offset: r.Offset}
	if err != nil {
		answer.Type = typeError
		answer.Error, answer.Field, _ = clientError(err) // submit retries the rest
	}
	out := &kgo.Record{Topic: k.cfg.ResultTopic, Key: r.Key, Value: encode(k.logger, answer)}
	if perr := k.client.ProduceSync(ctx, out).FirstErr(); perr != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		k.logger.ErrorContext(ctx, "produce answer", "topic", r.Topic, "partition", r.Partition,
			"offset", r.Offset, "error", perr)
	}
	if v != nil {
		k.track(v, mark)
	}
	return nil
}

// submit decodes and submits one record, with a derived key when the
// request has none. A failure of the store is retried (with backoff) until
// ctx ends; every other error is the client's.
func (k *Kafka) submit(ctx context.Context, r *kgo.Record) (*jobs.View, error) {
	req, err := parse(r.Value, "through Kafka")
	if err != nil {
		return nil, err
	}
	if req.Key == "" {
		req.Key = recordKey(r.Topic, r.Partition, r.Offset)
	}
	backoff := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		v, err := k.svc.Submit(ctx, req)
		if err == nil {
			return v, nil
		}
		if _, _, ok := clientError(err); ok || ctx.Err() != nil {
			return nil, err
		}
		k.logger.ErrorContext(ctx, "submit job; retrying", "topic", r.Topic, "partition", r.Partition,
			"offset", r.Offset, "attempt", attempt, "error", err)
		if !sleep(ctx, backoff) {
			return nil, fmt.Errorf("submit record %s/%d/%d: %w", r.Topic, r.Partition, r.Offset, ctx.Err())
		}
		backoff = min(2*backoff, kafkaMaxBackoff)
	}
}

// recordKey is the idempotency key of a request record without one:
// "kafka:<topic>:<partition>:<offset>", with the topic hashed when the key
// would be longer than task.MaxJobKey.
func recordKey(topic string, partition int32, offset int64) string {
	place := ":" + strconv.Itoa(int(partition)) + ":" + strconv.FormatInt(offset, 10)
	if key := "kafka:" + topic + place; len(key) <= task.MaxJobKey {
		return key
	}
	sum := sha256.Sum256([]byte(topic))
	return "kafka:sha256-" + hex.EncodeToString(sum[:16]) + place
}

// track arranges for v's result to be produced: now, when v is final
// already or became final since mark; else when the service announces it.
func (k *Kafka) track(v *jobs.View, mark uint64) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if v.State.Final() {
		k.produceResult(v)
		return
	}
	if final := k.recent.take(v.ID, mark); final != nil {
		k.produceResult(final)
		return
	}
	if evicted := k.tracked.add(v.ID); evicted != "" {
		k.logger.Warn("too many pending jobs tracked; the oldest's result will not be produced",
			"job_id", evicted, "max", kafkaMaxTracked)
	}
}

// wants tells the service which final jobs onFinal needs: the tracked
// ones, and any while a record is being submitted.
func (k *Kafka) wants(id string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.recent.submitting() || k.tracked.has(id)
}

// onFinal is the service's OnFinal subscriber.
func (k *Kafka) onFinal(v *jobs.View) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.recent.announce()
	if k.tracked.remove(v.ID) {
		k.produceResult(v)
	} else {
		k.recent.keep(v)
	}
}

// produceResult produces v's result without blocking; call it under mu.
func (k *Kafka) produceResult(v *jobs.View) {
	if k.closed {
		return
	}
	rec := &kgo.Record{Topic: k.cfg.ResultTopic, Key: []byte(v.ID), Value: encode(k.logger, resultMessage{Type: typeResult, Job: v})}
	k.client.TryProduce(context.Background(), rec, func(_ *kgo.Record, err error) {
		if err != nil {
			k.logger.Error("produce result", "job_id", v.ID, "state", v.State, "error", err)
		}
	})
}

// sleep waits d or until ctx ends; false means ctx ended.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// kgoLogger passes franz-go's warnings and errors to slog.
type kgoLogger struct{ l *slog.Logger }

func (kgoLogger) Level() kgo.LogLevel { return kgo.LogLevelWarn }

func (g kgoLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	lv := slog.LevelWarn
	if level == kgo.LogLevelError {
		lv = slog.LevelError
	}
	g.l.Log(context.Background(), lv, msg, keyvals...)
}
