package executors_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"cronsheet/executors"
	"cronsheet/task"
)

const kafkaTopic = "cronsheet.events"

// setupKafka starts a kfake cluster with kafkaTopic (one partition), closed
// at cleanup, and returns its seed addresses.
func setupKafka(t *testing.T, opts ...kfake.Opt) []string {
	t.Helper()
	opts = append([]kfake.Opt{kfake.NumBrokers(1), kfake.SeedTopics(1, kafkaTopic)}, opts...)
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		t.Fatalf("kfake: %v", err)
	}
	t.Cleanup(c.Close)
	return c.ListenAddrs()
}

// newKafka returns a Kafka executor closed at cleanup.
func newKafka(t *testing.T, brokers []string) *executors.Kafka {
	t.Helper()
	k, err := executors.NewKafka(nil, executors.KafkaConfig{Brokers: brokers, ClientID: "cronsheet-test"})
	if err != nil {
		t.Fatalf("NewKafka: %v", err)
	}
	t.Cleanup(k.Close)
	return k
}

func kafkaDelivery(topic string) task.Delivery {
	return task.Delivery{
		TaskID:      "task-3",
		TriggerID:   "trg-7",
		Slot:        time.Date(2026, 3, 7, 8, 30, 0, 0, time.UTC),
		Attempt:     1,
		Channel:     task.ChannelKafka,
		TriggerType: task.TriggerSchedule,
		Params:      map[string]string{"region": "eu west"},
		Target: &task.Target{ID: "bus", Kind: task.ChannelKafka, State: task.TargetRunning,
			Kafka: &task.KafkaTarget{Topic: topic}},
	}
}

// consumeAll reads want records of kafkaTopic from the start.
func consumeAll(t *testing.T, brokers []string, want int) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(kafkaTopic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var recs []*kgo.Record
	for len(recs) < want {
		fetches := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("consumed %d records of %d: %v", len(recs), want, err)
		}
		fetches.EachError(func(topic string, p int32, err error) {
			t.Fatalf("fetch %s/%d: %v", topic, p, err)
		})
		recs = append(recs, fetches.Records()...)
	}
	return recs
}

// recordHeaders returns the record's headers as a map.
func recordHeaders(r *kgo.Record) map[string]string {
	h := make(map[string]string, len(r.Headers))
	for _, x := range r.Headers {
		h[x.Key] = string(x.Value)
	}
	return h
}

func TestKafkaProduces(t *testing.T) {
	t.Parallel()
	brokers := setupKafka(t)
	k := newKafka(t, brokers)

	d1 := kafkaDelivery(kafkaTopic)
	d1.Target.Kafka.Key = "{{task_id}}/{{region}}"
	out, err := k.Execute(context.Background(), d1)
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	if want := "kafka " + kafkaTopic + "/0@0"; out != want {
		t.Errorf("output = %q, want %q", out, want)
	}

	d2 := kafkaDelivery(kafkaTopic)
	d2.Attempt, d2.Slot = 2, d2.Slot.Add(time.Hour)
	d2.Target.Kafka.Value = `{"region": "{{region}}", "slot": "{{slot}}"}`
	out, err = k.Execute(context.Background(), d2)
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}
	if want := "kafka " + kafkaTopic + "/0@1"; out != want {
		t.Errorf("output = %q, want %q", out, want)
	}

	recs := consumeAll(t, brokers, 2)
	wants := []struct {
		key, value string
		d          task.Delivery
	}{
		{"task-3/eu west", string(d1.Document()), d1},
		{"", `{"region": "eu west", "slot": "2026-03-07T09:30:00Z"}`, d2},
	}
	for i, w := range wants {
		r := recs[i]
		if string(r.Key) != w.key || (w.key == "" && r.Key != nil) {
			t.Errorf("record %d key = %q, want %q", i, r.Key, w.key)
		}
		if string(r.Value) != w.value {
			t.Errorf("record %d value = %s, want %s", i, r.Value, w.value)
		}
		h := recordHeaders(r)
		if h["X-Cronsheet-Trigger-Id"] != w.d.TriggerID || h["Idempotency-Key"] != w.d.LedgerKey() {
			t.Errorf("record %d headers = %v, want trigger id %q and idempotency key %q",
				i, h, w.d.TriggerID, w.d.LedgerKey())
		}
	}
}

func TestKafkaErrors(t *testing.T) {
	t.Parallel()

	t.Run("UnknownTopicIsPermanent", func(t *testing.T) {
		t.Parallel()
		k := newKafka(t, setupKafka(t))
		_, err := k.Execute(context.Background(), kafkaDelivery("no.such.topic"))
		if !task.IsPermanent(err) || !errors.Is(err, kerr.UnknownTopicOrPartition) {
			t.Errorf("err = %v, want permanent unknown topic", err)
		}
	})

	t.Run("RecordTooLargeIsPermanent", func(t *testing.T) {
		t.Parallel()
		k := newKafka(t, setupKafka(t, kfake.BrokerConfigs(map[string]string{"message.max.bytes": "4096"})))
		noise := make([]byte, 32<<10) // random: compression cannot shrink it
		if _, err := rand.Read(noise); err != nil {
			t.Fatal(err)
		}
		d := kafkaDelivery(kafkaTopic)
		d.Params["blob"] = hex.EncodeToString(noise)
		d.Target.Kafka.Value = "{{blob}}"
		_, err := k.Execute(context.Background(), d)
		if !task.IsPermanent(err) || !errors.Is(err, kerr.MessageTooLarge) {
			t.Errorf("err = %v, want permanent message too large", err)
		}
	})

	t.Run("TemplateErrorIsPermanent", func(t *testing.T) {
		t.Parallel()
		k := newKafka(t, []string{"127.0.0.1:1"})
		d := kafkaDelivery(kafkaTopic)
		d.Target.Kafka.Key = "{{nope}}"
		_, err := k.Execute(context.Background(), d)
		if !task.IsPermanent(err) || !strings.Contains(err.Error(), "nope") {
			t.Errorf("err = %v, want permanent naming the placeholder", err)
		}
	})

	t.Run("UnreachableBrokerRetriesAtDeadline", func(t *testing.T) {
		t.Parallel()
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		k := newKafka(t, []string{addr})
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err = k.Execute(ctx, kafkaDelivery(kafkaTopic))
		if err == nil || task.IsPermanent(err) || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want retryable deadline exceeded", err)
		}
	})

	t.Run("MissingTarget", func(t *testing.T) {
		t.Parallel()
		k := newKafka(t, []string{"127.0.0.1:1"})
		d := kafkaDelivery(kafkaTopic)
		d.Target.Kafka = nil
		if _, err := k.Execute(context.Background(), d); !task.IsPermanent(err) {
			t.Errorf("err = %v, want permanent", err)
		}
	})
}

func TestNewKafkaConfigErrors(t *testing.T) {
	t.Parallel()
	for _, cfg := range []executors.KafkaConfig{
		{},
		{Brokers: []string{"host:notaport"}},
	} {
		k, err := executors.NewKafka(nil, cfg)
		if err == nil {
			k.Close()
			t.Errorf("NewKafka(%+v) = nil error, want one", cfg)
		}
	}
}
