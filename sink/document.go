package sink

import (
	"encoding/json"
	"fmt"
	"time"

	"cronsheet/task"
)

// EventType is the "event" field of every document.
const EventType = "job.transition"

// Document is what the sink sends for one transition: the store.JobEvent's
// fields, "@timestamp" (its At, UTC, RFC 3339 with nanoseconds) for
// Elasticsearch and Kibana, and "event" = EventType.
type Document struct {
	Timestamp time.Time     `json:"@timestamp"`
	Event     string        `json:"event"`
	JobID     string        `json:"job_id"`
	State     task.JobState `json:"state"`
	TriggerID string        `json:"trigger_id,omitempty"`
	Attempt   int           `json:"attempt"`
	Reason    string        `json:"reason,omitempty"`
}

func (it item) document() ([]byte, error) {
	ev := it.ev
	return json.Marshal(Document{Timestamp: ev.At.UTC(), Event: EventType, JobID: ev.JobID, State: ev.State,
		TriggerID: ev.TriggerID, Attempt: ev.Attempt, Reason: ev.Reason})
}

// docID is the event's Elasticsearch _id, "<job_id>-<unix ms>-<n>" with n
// the sink's sequence number: the same on every retry of the event.
func (it item) docID() string {
	return fmt.Sprintf("%s-%d-%d", it.ev.JobID, it.ev.At.UnixMilli(), it.seq)
}
