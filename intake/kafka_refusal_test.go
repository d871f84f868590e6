package intake

import (
	"regexp"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
)

// TestKafkaRefusesAsHTTP: Kafka refuses what the HTTP jobs API refuses,
// with the same words: a MAIL_TO subject with a line break (it would
// start another mail header), a NUL in a param, a value of the wrong type,
// a Host header, a header value with a line break; and by the one text
// rule: a NUL in a text params, a member named twice, a key with CR/LF.
func TestKafkaRefusesAsHTTP(t *testing.T) {
	t.Parallel()
	b := setupKafka(t)
	run(t, b.k)
	ctx := testContext(t)
	sent := map[string]string{
		"crlf":    `{"method":"MAIL_TO","name":"a@example.com","delay":60,"params":"{\"subject\":\"hi\\r\\nBcc: evil@example.com\",\"body\":\"x\"}"}`,
		"nul":     `{"method":"GET","name":"http://example.com/hook","delay":60,"params":{"n":"a\u0000"}}`,
		"typed":   `{"method":"GET","name":"http://example.com/hook","delay":"soon"}`,
		"host":    `{"method":"POST","name":"http://example.com/hook","delay":60,"headers":{"Host":"evil"}}`,
		"hdrlf":   `{"method":"POST","name":"http://example.com/hook","delay":60,"headers":{"Authorization":"Bearer x\r\nX-Evil: 1"}}`,
		"nulbody": `{"method":"POST","name":"http://example.com/hook","delay":60,"params":"a\u0000b"}`,
		"dup":     `{"method":"POST","method":"EXEC","name":"http://example.com/hook","delay":60}`,
		"key":     `{"method":"POST","name":"http://example.com/hook","delay":60,"key":"k\r\nx"}`,
	}
	wantField := map[string]string{"crlf": "params.title", "nul": "params.n", "typed": "delay", "host": "headers.Host",
		"hdrlf": "headers.Authorization", "nulbody": "params", "dup": "method", "key": "key"}
	producer := newClient(t, kgo.SeedBrokers(b.brokers...), kgo.DefaultProduceTopic(intakeTopic))
	for key, body := range sent {
		if _, err := producer.ProduceSync(ctx, &kgo.Record{Key: []byte(key), Value: []byte(body)}).First(); err != nil {
			t.Fatalf("produce %s: %v", key, err)
		}
	}
	consumer := newClient(t, kgo.SeedBrokers(b.brokers...), kgo.ConsumeTopics(resultTopic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	for _, r := range consume(t, consumer, len(sent)) {
		key, m := string(r.Key), decodeMsg(t, r)
		wantMsg, _ := wantRefusal(t, sent[key])
		if m.Type != "error" || m.Field != wantField[key] || m.Error != wantMsg || m.Job != nil {
			t.Errorf("%s: got %+v, want error %q naming %s", key, m, wantMsg, wantField[key])
		}
		if goTypeIn(m.Error) {
			t.Errorf("%s: %q names a Go type", key, m.Error)
		}
	}
}

// goTypeIn reports whether msg names a Go type.
func goTypeIn(msg string) bool {
	return goTypeRE.MatchString(msg)
}

var goTypeRE = regexp.MustCompile(`\b(u?int(8|16|32|64)?|float(32|64)|string|bool)\b|jobapi\.|map\[|\[\]`)

// TestKafkaHeadersMasked: a job's headers go in through Kafka, and its
// answer and its result show their names with "***", never the values.
func TestKafkaHeadersMasked(t *testing.T) {
	t.Parallel()
	b := setupKafka(t)
	run(t, b.k)
	ctx := testContext(t)
	producer := newClient(t, kgo.SeedBrokers(b.brokers...), kgo.DefaultProduceTopic(intakeTopic))
	body := `{"method":"POST","name":"http://example.com/hook","delay":60,"headers":{"Authorization":"Bearer kafka-s3cret"}}`
	if _, err := producer.ProduceSync(ctx, &kgo.Record{Key: []byte("h"), Value: []byte(body)}).First(); err != nil {
		t.Fatalf("produce: %v", err)
	}
	consumer := newClient(t, kgo.SeedBrokers(b.brokers...), kgo.ConsumeTopics(resultTopic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	acc := consume(t, consumer, 1)[0]
	m := decodeMsg(t, acc)
	if m.Type != "accepted" || m.Job == nil || m.Job.Headers["Authorization"] != "***" {
		t.Fatalf("answer = %s, want accepted with the header's name masked", acc.Value)
	}
	if _, err := b.svc.Cancel(ctx, m.Job.ID); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	res := consume(t, consumer, 1)[0]
	for _, r := range []*kgo.Record{acc, res} {
		if strings.Contains(string(r.Value), "s3cret") {
			t.Errorf("a Kafka answer shows the header's value: %s", r.Value)
		}
	}
	stored, err := b.svc.Get(ctx, m.Job.ID)
	if err != nil || stored.Headers["Authorization"] != "***" {
		t.Errorf("Get = %+v, %v", stored, err)
	}
}
