package sink

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// Defaults of KafkaConfig.
const (
	DefaultKafkaClientID = "cronsheet-sink"
	DefaultKafkaTimeout  = 30 * time.Second
)

// KafkaConfig configures a sink that produces to a Kafka topic.
type KafkaConfig struct {
	// Brokers are the seed brokers, "host:port". Required.
	Brokers []string
	// Topic receives the records; it is not created. Required.
	Topic string
	// ClientID is the client id sent to the brokers. Default
	// DefaultKafkaClientID.
	ClientID string
	// Timeout bounds the production of each batch. Default
	// DefaultKafkaTimeout.
	Timeout time.Duration
	// Queue bounds the queue and sets the retry backoff.
	Queue QueueConfig
}

// NewKafka validates cfg and returns a sink that produces one record per
// event to cfg.Topic, whatever the event is about (the document's "event"
// field says it; the topic takes no template): key the job id, the flow
// execution id or the task id (so the events of one stay in order on one
// partition), value its document. franz-go's idempotent producer
// retries on its own; records that still fail are retried with the sink's
// backoff, except those Kafka calls non-retriable (a record too large, …),
// which are refused. No connection is made until the first batch. logger
// may be nil.
func NewKafka(logger *slog.Logger, cfg KafkaConfig) (*Sink, error) {
	if len(cfg.Brokers) == 0 || cfg.Topic == "" {
		return nil, errors.New("sink kafka config: brokers and topic are required")
	}
	if cfg.Timeout < 0 {
		return nil, errors.New("sink kafka config: timeout must not be negative")
	}
	q, err := cfg.Queue.withDefaults()
	if err != nil {
		return nil, err
	}
	client, err := kgo.NewClient(
		kgo.SeedBrokers(cfg.Brokers...),
		kgo.ClientID(cmp.Or(cfg.ClientID, DefaultKafkaClientID)),
		kgo.DefaultProduceTopic(cfg.Topic),
		kgo.ProducerLinger(0),
	)
	if err != nil {
		return nil, fmt.Errorf("sink kafka config: %w", err)
	}
	k := &kafkaTransport{client: client, topic: cfg.Topic, timeout: cmp.Or(cfg.Timeout, DefaultKafkaTimeout)}
	return newSink(logger, "sink.kafka", q, k), nil
}

// kafkaTransport produces records with a franz-go client.
type kafkaTransport struct {
	client  *kgo.Client
	topic   string
	timeout time.Duration
}

func (k *kafkaTransport) close() { k.client.Close() }

func (k *kafkaTransport) send(ctx context.Context, batch []item) ([]item, int, error) {
	ctx, cancel := context.WithTimeout(ctx, k.timeout)
	defer cancel()
	recs := make([]*kgo.Record, 0, len(batch))
	index := make(map[*kgo.Record]int, len(batch)) // results come in any order
	refused := 0
	var firstErr error
	for i, it := range batch {
		doc, err := it.document()
		if err != nil {
			refused++
			firstErr = cmp.Or(firstErr, fmt.Errorf("encode event of %s: %w", it.key(), err))
			continue
		}
		r := &kgo.Record{Topic: k.topic, Key: []byte(it.key()), Value: doc}
		index[r] = i
		recs = append(recs, r)
	}
	var retry []item
	for _, res := range k.client.ProduceSync(ctx, recs...) {
		if res.Err == nil {
			continue
		}
		firstErr = cmp.Or(firstErr, fmt.Errorf("produce to topic %q: %w", k.topic, res.Err))
		var ke *kerr.Error
		if errors.As(res.Err, &ke) && !ke.Retriable && ke != kerr.UnknownTopicOrPartition && ke != kerr.UnknownServerError {
			refused++
			continue
		}
		retry = append(retry, batch[index[res.Record]])
	}
	// Keep the order of events, and so of each job's transitions.
	slices.SortFunc(retry, func(a, b item) int { return cmp.Compare(a.seq, b.seq) })
	return retry, refused, firstErr
}
