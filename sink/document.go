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
	if it.flow != nil {
		return json.Marshal(it.flow.document())
	}
	ev := it.ev
	return json.Marshal(Document{Timestamp: ev.At.UTC(), Event: EventType, JobID: ev.JobID, State: ev.State,
		TriggerID: ev.TriggerID, Attempt: ev.Attempt, Reason: ev.Reason})
}

// docID is the event's Elasticsearch _id, "<job_id>-<unix ms>-<n>" with n
// the sink's sequence number: the same on every retry of the event.
func (it item) docID() string {
	if f := it.flow; f != nil {
		return fmt.Sprintf("%s-%s-%d-%d", f.ExecutionID, f.Event, f.StepRun, it.seq)
	}
	return fmt.Sprintf("%s-%d-%d", it.ev.JobID, it.ev.At.UnixMilli(), it.seq)
}

// key is what the event is about: the job, or the flow execution (the
// Kafka record key, so one execution's events keep their order).
func (it item) key() string {
	if it.flow != nil {
		return it.flow.ExecutionID
	}
	return it.ev.JobID
}

// Flow event types: an execution ended, a step run ended.
const (
	EventFlowExecution = "flow.execution"
	EventFlowStep      = "flow.step"
)

// FlowEvent is one event of a flow execution (PublishFlow): it ended
// (Event EventFlowExecution, State its final state) or one of its step
// runs did (EventFlowStep, State the step's outcome, Step and StepRun
// naming it).
type FlowEvent struct {
	At          time.Time
	Event       string
	FlowID      string
	ExecutionID string
	// TriggerID is the run that started the execution, when a fire did.
	TriggerID string
	Step      string
	StepRun   int
	State     string
	Reason    string
}

// FlowDocument is what the sink sends for a FlowEvent.
type FlowDocument struct {
	Timestamp   time.Time `json:"@timestamp"`
	Event       string    `json:"event"`
	FlowID      string    `json:"flow_id"`
	ExecutionID string    `json:"execution_id"`
	TriggerID   string    `json:"trigger_id,omitempty"`
	Step        string    `json:"step,omitempty"`
	StepRun     *int      `json:"step_run,omitempty"`
	State       string    `json:"state"`
	Reason      string    `json:"reason,omitempty"`
}

func (f *FlowEvent) document() FlowDocument {
	d := FlowDocument{Timestamp: f.At.UTC(), Event: f.Event, FlowID: f.FlowID, ExecutionID: f.ExecutionID,
		TriggerID: f.TriggerID, Step: f.Step, State: f.State, Reason: f.Reason}
	if f.Event == EventFlowStep {
		d.StepRun = &f.StepRun
	}
	return d
}
