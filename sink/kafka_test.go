package sink_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"cronsheet/sink"
	"cronsheet/store"
	"cronsheet/task"
)

const topic = "cronsheet.job-events"

func TestKafka(t *testing.T) {
	t.Parallel()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(1, topic))
	if err != nil {
		t.Fatalf("kfake: %v", err)
	}
	t.Cleanup(c.Close)
	brokers := c.ListenAddrs()
	s, err := sink.NewKafka(nil, sink.KafkaConfig{Brokers: brokers, Topic: topic, Queue: fastRetry})
	if err != nil {
		t.Fatalf("NewKafka: %v", err)
	}
	evs := []store.JobEvent{
		{JobID: "job-1", At: at, State: task.JobRunning, TriggerID: "tr_1", Attempt: 1},
		{JobID: "job-2", At: at, State: task.JobDead, TriggerID: "tr_2", Attempt: 3, Reason: "dead: 500"},
		{JobID: "job-1", At: at.Add(time.Second), State: task.JobDone, TriggerID: "tr_1", Attempt: 1},
	}
	s.Publish(evs)
	closeSink(t, s)

	recs := consume(t, brokers, len(evs))
	for i, ev := range evs {
		r := recs[i]
		if string(r.Key) != ev.JobID {
			t.Errorf("record %d key = %q, want %q", i, r.Key, ev.JobID)
		}
		var doc sink.Document
		if err := json.Unmarshal(r.Value, &doc); err != nil {
			t.Fatalf("record %d value is not JSON: %s", i, r.Value)
		}
		want := sink.Document{Timestamp: ev.At.UTC(), Event: sink.EventType, JobID: ev.JobID, State: ev.State,
			TriggerID: ev.TriggerID, Attempt: ev.Attempt, Reason: ev.Reason}
		if !doc.Timestamp.Equal(want.Timestamp) || doc.Timestamp.Location() != time.UTC {
			t.Errorf("record %d @timestamp = %v, want %v", i, doc.Timestamp, want.Timestamp)
		}
		doc.Timestamp = want.Timestamp
		if doc != want {
			t.Errorf("record %d = %+v, want %+v", i, doc, want)
		}
	}
	if d := s.Dropped(); d != 0 {
		t.Errorf("Dropped = %d, want 0", d)
	}
}

func TestNewKafkaValidates(t *testing.T) {
	t.Parallel()
	for _, cfg := range []sink.KafkaConfig{{Topic: topic}, {Brokers: []string{"127.0.0.1:9092"}}} {
		if s, err := sink.NewKafka(nil, cfg); err == nil {
			_ = s.Close(context.Background())
			t.Errorf("NewKafka(%+v) = nil error", cfg)
		}
	}
}

// consume reads want records of topic from the start.
func consume(t *testing.T, brokers []string, want int) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic),
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
