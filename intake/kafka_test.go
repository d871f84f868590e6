package intake

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"cronsheet/jobs"
	"cronsheet/task"
)

const (
	intakeTopic = "cronsheet.jobs"
	resultTopic = "cronsheet.jobs.results"
)

// kafkaMsg is an answer or result as a consumer reads it.
type kafkaMsg struct {
	Type      string     `json:"type"`
	Job       *jobs.View `json:"job"`
	Error     string     `json:"error"`
	Field     string     `json:"field"`
	Topic     string     `json:"topic"`
	Partition int32      `json:"partition"`
	Offset    int64      `json:"offset"`
}

type kafkaBundle struct {
	svc     *jobs.Service
	k       *Kafka
	brokers []string
}

func setupKafka(t *testing.T) *kafkaBundle {
	t.Helper()
	svc := newService(t)
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, intakeTopic, resultTopic))
	if err != nil {
		t.Fatalf("kfake: %v", err)
	}
	t.Cleanup(cluster.Close)
	b := &kafkaBundle{svc: svc, brokers: cluster.ListenAddrs()}
	b.k = b.newIntake(t)
	return b
}

// newIntake returns another intake over the bundle's service, in the same
// group, closed at cleanup.
func (b *kafkaBundle) newIntake(t *testing.T) *Kafka {
	t.Helper()
	k, err := NewKafka(testLogger(t), b.svc, KafkaConfig{Brokers: b.brokers, Topic: intakeTopic, ResultTopic: resultTopic, Group: "cronsheet-intake"})
	if err != nil {
		t.Fatalf("NewKafka: %v", err)
	}
	t.Cleanup(k.Close)
	return k
}

// run runs k until the returned stop (or cleanup) is called.
func run(t *testing.T, k *Kafka) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- k.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

func newClient(t *testing.T, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(cl.Close)
	return cl
}

// consume reads n records from cl.
func consume(t *testing.T, cl *kgo.Client, n int) []*kgo.Record {
	t.Helper()
	ctx := testContext(t)
	var recs []*kgo.Record
	for len(recs) < n {
		fetches := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d records of %d: %v", len(recs), n, err)
		}
		fetches.EachError(func(topic string, p int32, err error) { t.Fatalf("fetch %s/%d: %v", topic, p, err) })
		recs = append(recs, fetches.Records()...)
	}
	if len(recs) > n {
		t.Fatalf("got %d records, want %d", len(recs), n)
	}
	return recs
}

func decodeMsg(t *testing.T, r *kgo.Record) kafkaMsg {
	t.Helper()
	var m kafkaMsg
	if err := json.Unmarshal(r.Value, &m); err != nil {
		t.Fatalf("record %s: %v", r.Value, err)
	}
	return m
}

func TestKafka(t *testing.T) {
	t.Parallel()
	b := setupKafka(t)
	run(t, b.k)
	ctx := testContext(t)

	producer := newClient(t, kgo.SeedBrokers(b.brokers...), kgo.DefaultProduceTopic(intakeTopic))
	sent := map[string]string{"valid": validRequest, "unknown": unknownField, "nomethod": missingMethod, "wait": waitingRequest}
	offsets := map[string]int64{}
	for _, key := range []string{"valid", "unknown", "nomethod", "wait"} {
		res, err := producer.ProduceSync(ctx, &kgo.Record{Key: []byte(key), Value: []byte(sent[key])}).First()
		if err != nil {
			t.Fatalf("produce %s: %v", key, err)
		}
		offsets[key] = res.Offset
	}

	consumer := newClient(t, kgo.SeedBrokers(b.brokers...), kgo.ConsumeTopics(resultTopic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	got := map[string]kafkaMsg{}
	for _, r := range consume(t, consumer, len(sent)) {
		got[string(r.Key)] = decodeMsg(t, r)
	}

	acc := got["valid"]
	if acc.Type != "accepted" || acc.Job == nil || acc.Job.ID == "" || acc.Job.State != task.JobPending ||
		acc.Topic != intakeTopic || acc.Offset != offsets["valid"] {
		t.Fatalf("valid request: got %+v, want accepted with a pending job", acc)
	}
	if want := recordKey(intakeTopic, 0, offsets["valid"]); acc.Job.Key != want {
		t.Errorf("job key %q, want the derived %q", acc.Job.Key, want)
	}
	for _, key := range []string{"unknown", "nomethod", "wait"} {
		wantMsg, wantField := "wait: not allowed through Kafka: the result is sent when the job is final", "wait"
		if key != "wait" {
			wantMsg, wantField = wantRefusal(t, sent[key])
		}
		m := got[key]
		if m.Type != "error" || m.Error != wantMsg || m.Field != wantField || m.Job != nil ||
			m.Topic != intakeTopic || m.Partition != 0 || m.Offset != offsets[key] {
			t.Errorf("%s: got %+v, want error %q field %q at offset %d", key, m, wantMsg, wantField, offsets[key])
		}
	}

	if _, err := b.svc.Cancel(ctx, acc.Job.ID); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	r := consume(t, consumer, 1)[0]
	res := decodeMsg(t, r)
	if string(r.Key) != acc.Job.ID || res.Type != "result" || res.Job == nil || res.Job.ID != acc.Job.ID || res.Job.State != task.JobCancelled {
		t.Fatalf("after cancel: key %q, %+v; want the cancelled job's result keyed by its id", r.Key, res)
	}
}

// Offsets are committed once their records are handled: an intake that
// takes over the group starts after them.
func TestKafkaCommitsHandled(t *testing.T) {
	t.Parallel()
	b := setupKafka(t)
	ctx := testContext(t)
	producer := newClient(t, kgo.SeedBrokers(b.brokers...), kgo.DefaultProduceTopic(intakeTopic))
	consumer := newClient(t, kgo.SeedBrokers(b.brokers...), kgo.ConsumeTopics(resultTopic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))

	stop := run(t, b.k)
	if err := producer.ProduceSync(ctx, &kgo.Record{Key: []byte("first"), Value: []byte(validRequest)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	if r := consume(t, consumer, 1)[0]; string(r.Key) != "first" {
		t.Fatalf("answer keyed %q, want first", r.Key)
	}
	stop()
	b.k.Close()

	run(t, b.newIntake(t))
	if err := producer.ProduceSync(ctx, &kgo.Record{Key: []byte("second"), Value: []byte(validRequest)}).FirstErr(); err != nil {
		t.Fatal(err)
	}
	// One partition: had "first" not been committed, its answer would come
	// again, before this one.
	if r := consume(t, consumer, 1)[0]; string(r.Key) != "second" {
		t.Fatalf("answer keyed %q (%s), want second: a handled record was delivered again", r.Key, r.Value)
	}
}

// A redelivered record (same topic, partition and offset) finds the job it
// made the first time.
func TestKafkaRedelivery(t *testing.T) {
	t.Parallel()
	b := setupKafka(t)
	ctx := testContext(t)
	rec := &kgo.Record{Topic: intakeTopic, Partition: 2, Offset: 41, Value: []byte(validRequest)}
	first, err := b.k.submit(ctx, rec)
	if err != nil {
		t.Fatal(err)
	}
	again, err := b.k.submit(ctx, rec)
	if err != nil {
		t.Fatal(err)
	}
	if again.ID != first.ID || !first.Created || again.Created {
		t.Fatalf("redelivery: first %s (created %v), again %s (created %v); want the same job, created once",
			first.ID, first.Created, again.ID, again.Created)
	}
	if first.Key != "kafka:"+intakeTopic+":2:41" {
		t.Errorf("derived key %q", first.Key)
	}
	next, err := b.k.submit(ctx, &kgo.Record{Topic: intakeTopic, Partition: 2, Offset: 42, Value: []byte(validRequest)})
	if err != nil {
		t.Fatal(err)
	}
	if next.ID == first.ID {
		t.Fatal("the next offset found the same job")
	}
	keyed := `{"method":"GET","name":"http://example.com/hook","delay":60,"key":"mine"}`
	own, err := b.k.submit(ctx, &kgo.Record{Topic: intakeTopic, Offset: 43, Value: []byte(keyed)})
	if err != nil {
		t.Fatal(err)
	}
	if own.Key != "mine" {
		t.Errorf("a request's own key was replaced: %q", own.Key)
	}
}

func TestRecordKey(t *testing.T) {
	t.Parallel()
	if got := recordKey("t", 1, 2); got != "kafka:t:1:2" {
		t.Errorf("recordKey = %q", got)
	}
	long := strings.Repeat("x", 249)
	a, b := recordKey(long, 0, 7), recordKey(long+"y", 0, 7)
	if len(a) > task.MaxJobKey || a == b || !strings.HasSuffix(a, ":0:7") {
		t.Errorf("long topics: %q, %q", a, b)
	}
}

func TestKafkaConfigRequired(t *testing.T) {
	t.Parallel()
	ok := KafkaConfig{Brokers: []string{"127.0.0.1:1"}, Topic: "a", ResultTopic: "b", Group: "g"}
	for _, tt := range []struct {
		name  string
		edit  func(*KafkaConfig)
		field string
	}{
		{"NoBrokers", func(c *KafkaConfig) { c.Brokers = nil }, "brokers"},
		{"NoTopic", func(c *KafkaConfig) { c.Topic = "" }, "topic"},
		{"NoResultTopic", func(c *KafkaConfig) { c.ResultTopic = "" }, "result_topic"},
		{"SameTopics", func(c *KafkaConfig) { c.ResultTopic = "a" }, "result_topic"},
		{"NoGroup", func(c *KafkaConfig) { c.Group = "" }, "group"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := ok
			tt.edit(&cfg)
			_, err := NewKafka(nil, &fakeSubmitter{}, cfg)
			var ve *task.ValidationError
			if !errors.As(err, &ve) || ve.Field != tt.field {
				t.Fatalf("got %v, want a validation error on %s", err, tt.field)
			}
		})
	}
}
