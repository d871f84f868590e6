package executors

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"cronsheet/task"
)

// DefaultKafkaClientID is the Kafka client id when KafkaConfig sets none.
const DefaultKafkaClientID = "cronsheet"

// KafkaConfig configures a Kafka executor.
type KafkaConfig struct {
	// Brokers are the seed brokers, "host:port" (port default 9092).
	// Required.
	Brokers []string
	// ClientID is the client id sent to the brokers. Default
	// DefaultKafkaClientID.
	ClientID string
}

// Kafka produces one record per delivery with a franz-go client: an
// idempotent producer (franz-go's default), no automatic topic creation, no
// linger. It is safe for concurrent use; Close it when done.
type Kafka struct {
	logger *slog.Logger
	client *kgo.Client
}

// NewKafka validates cfg and returns a Kafka executor. logger may be nil. No
// connection is made until the first delivery.
func NewKafka(logger *slog.Logger, cfg KafkaConfig) (*Kafka, error) {
	if len(cfg.Brokers) == 0 {
		return nil, errors.New("kafka config: brokers are required")
	}
	logger = componentLogger(logger, "executors.kafka")
	client, err := kgo.NewClient(
		kgo.SeedBrokers(cfg.Brokers...),
		kgo.ClientID(cmp.Or(cfg.ClientID, DefaultKafkaClientID)),
		kgo.ProducerLinger(0),
		kgo.WithLogger(kgoLogger{logger}),
	)
	if err != nil {
		return nil, fmt.Errorf("kafka config: %w", err)
	}
	return &Kafka{logger: logger, client: client}, nil
}

// Close closes the client. Records still waiting fail with
// kgo.ErrClientClosed; their deliveries have already returned.
func (k *Kafka) Close() { k.client.Close() }

// Execute produces one record to d.Target.Kafka.Topic: the Key template
// (no key when empty) and the Value template (default d.Document()), with
// the X-Cronsheet-Trigger-Id and Idempotency-Key headers. Success output is
// "kafka <topic>/<partition>@<offset>".
//
// Template errors, a topic that does not exist, a record too large and other
// errors Kafka calls non-retriable are task.Permanent; everything else is
// retryable. When ctx ends first, Execute returns its error while the
// record may still be written: consumers drop repeats by Idempotency-Key.
func (k *Kafka) Execute(ctx context.Context, d task.Delivery) (string, error) {
	if d.Target == nil || d.Target.Kafka == nil {
		return "", task.Permanent(fmt.Errorf("kafka delivery without a kafka target: %w", task.ErrInvalid))
	}
	t := d.Target.Kafka
	rec, err := kafkaRecord(d, t)
	if err != nil {
		return "", task.Permanent(err)
	}
	// The promise is called exactly once, possibly after ctx ends (an
	// in-flight idempotent record is not abandoned), so the channel is
	// buffered and nobody needs to read it then.
	done := make(chan error, 1)
	k.client.Produce(ctx, rec, func(_ *kgo.Record, err error) { done <- err })
	select {
	case err = <-done:
	case <-ctx.Done():
		err = context.Cause(ctx)
	}
	if err != nil {
		return "", classifyKafka(t.Topic, err)
	}
	k.logger.DebugContext(ctx, "kafka record produced", "task_id", d.TaskID,
		"trigger_id", d.TriggerID, "attempt", d.Attempt, "topic", rec.Topic,
		"partition", rec.Partition, "offset", rec.Offset)
	return fmt.Sprintf("kafka %s/%d@%d", rec.Topic, rec.Partition, rec.Offset), nil
}

// kafkaRecord builds the record of d for target t.
func kafkaRecord(d task.Delivery, t *task.KafkaTarget) (*kgo.Record, error) {
	vars := d.Vars()
	if t.Raw {
		vars = nil // no templates: key and value go as they are
	}
	rec := &kgo.Record{
		Topic: t.Topic,
		Headers: []kgo.RecordHeader{
			{Key: HeaderTriggerID, Value: []byte(d.TriggerID)},
			{Key: HeaderIdempotencyKey, Value: []byte(d.LedgerKey())},
			{Key: HeaderNode, Value: []byte(d.Node)},
			{Key: HeaderInstance, Value: []byte(d.Instance)},
		},
	}
	if t.Key != "" {
		key, err := expandUnlessRaw(t.Key, vars)
		if err != nil {
			return nil, fmt.Errorf("kafka key template: %w", err)
		}
		rec.Key = []byte(key)
	}
	if t.Value == "" {
		rec.Value = d.Document()
		return rec, nil
	}
	value, err := expandUnlessRaw(t.Value, vars)
	if err != nil {
		return nil, fmt.Errorf("kafka value template: %w", err)
	}
	rec.Value = []byte(value)
	return rec, nil
}

// classifyKafka marks the errors that another attempt cannot fix permanent.
func classifyKafka(topic string, err error) error {
	err = fmt.Errorf("kafka produce to topic %q: %w", topic, err)
	if errors.Is(err, kerr.UnknownTopicOrPartition) || errors.Is(err, kerr.UnknownTopicID) {
		// franz-go gave up after several metadata refreshes said so.
		return task.Permanent(fmt.Errorf("%w (the topic does not exist; it is not created automatically)", err))
	}
	var ke *kerr.Error
	if errors.As(err, &ke) && !ke.Retriable && !transientKafka(ke) {
		return task.Permanent(err)
	}
	return err
}

// transientKafka reports the errors Kafka calls non-retriable that a later
// attempt, with the producer state reset, may well get past.
func transientKafka(ke *kerr.Error) bool {
	switch ke {
	case kerr.UnknownServerError, kerr.OutOfOrderSequenceNumber, kerr.DuplicateSequenceNumber,
		kerr.InvalidProducerEpoch, kerr.UnknownProducerID, kerr.InvalidProducerIDMapping:
		return true
	}
	return false
}

// kgoLogger passes franz-go's warnings and errors to slog.
type kgoLogger struct{ l *slog.Logger }

// Level implements kgo.Logger.
func (k kgoLogger) Level() kgo.LogLevel { return kgo.LogLevelWarn }

// Log implements kgo.Logger.
func (k kgoLogger) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	lvl := slog.LevelInfo
	switch level {
	case kgo.LogLevelError:
		lvl = slog.LevelError
	case kgo.LogLevelWarn:
		lvl = slog.LevelWarn
	case kgo.LogLevelDebug:
		lvl = slog.LevelDebug
	}
	k.l.Log(context.Background(), lvl, "kafka: "+msg, keyvals...)
}

var _ Executor = (*Kafka)(nil)
