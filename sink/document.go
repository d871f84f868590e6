package sink

import (
	"encoding/json"
	"fmt"
	"time"

	"cronsheet/sink/index"
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
	switch {
	case it.flow != nil:
		return json.Marshal(it.flow.document())
	case it.run != nil:
		return json.Marshal(it.run.document())
	}
	ev := it.ev
	return json.Marshal(Document{Timestamp: ev.At.UTC(), Event: EventType, JobID: ev.JobID, State: ev.State,
		TriggerID: ev.TriggerID, Attempt: ev.Attempt, Reason: ev.Reason})
}

// docID is the event's Elasticsearch _id, "<job_id>-<unix ms>-<n>" with n
// the sink's sequence number: the same on every retry of the event.
func (it item) docID() string {
	switch {
	case it.flow != nil:
		return fmt.Sprintf("%s-%s-%d-%d", it.flow.ExecutionID, it.flow.Event, it.flow.StepRun, it.seq)
	case it.run != nil:
		return fmt.Sprintf("%s-%s-%d", it.run.TriggerID, it.run.Event, it.seq)
	}
	return fmt.Sprintf("%s-%d-%d", it.ev.JobID, it.ev.At.UnixMilli(), it.seq)
}

// key is what the event is about: the job, the flow execution or the task
// (the Kafka record key, so the events of one job, execution or task keep
// their order).
func (it item) key() string {
	switch {
	case it.flow != nil:
		return it.flow.ExecutionID
	case it.run != nil:
		return it.run.TaskID
	}
	return it.ev.JobID
}

// service and at name the event's index (index.Template.Expand).
func (it item) service() string {
	switch {
	case it.flow != nil:
		return index.ServiceFlows
	case it.run != nil:
		return index.ServiceTasks
	}
	return index.ServiceJobs
}

func (it item) at() time.Time {
	switch {
	case it.flow != nil:
		return it.flow.At
	case it.run != nil:
		return it.run.At
	}
	return it.ev.At
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

// Task run event types: a run was fired (its ledger record written), a
// run's outcome is final.
const (
	EventRunFired = "task.run.fired"
	EventRunFinal = "task.run.final"
)

// RunEvent is one event of a task's run (PublishRun): it was fired (Event
// EventRunFired, State as recorded: running, pending behind the overlap
// policy, or already final when the fire was refused) or it ended
// (EventRunFinal, State final, Duration from fire to end).
type RunEvent struct {
	At          time.Time
	Event       string
	TaskID      string
	Title       string // the task's title param, when it has one
	TriggerID   string
	TriggerType string
	Slot        time.Time
	Target      string
	State       string
	Attempt     int
	Error       string
	Duration    time.Duration
	Node        string
}

// RunDocument is what the sink sends for a RunEvent. DurationMS is set on
// final events only.
type RunDocument struct {
	Timestamp   time.Time `json:"@timestamp"`
	Event       string    `json:"event"`
	TaskID      string    `json:"task_id"`
	Title       string    `json:"title,omitempty"`
	TriggerID   string    `json:"trigger_id"`
	TriggerType string    `json:"trigger_type"`
	Slot        time.Time `json:"slot"`
	Target      string    `json:"target"`
	State       string    `json:"state"`
	Attempt     int       `json:"attempt"`
	Error       string    `json:"error,omitempty"`
	DurationMS  *int64    `json:"duration_ms,omitempty"`
	Node        string    `json:"node,omitempty"`
}

func (r *RunEvent) document() RunDocument {
	d := RunDocument{Timestamp: r.At.UTC(), Event: r.Event, TaskID: r.TaskID, Title: r.Title, TriggerID: r.TriggerID,
		TriggerType: r.TriggerType, Slot: r.Slot.UTC(), Target: r.Target, State: r.State, Attempt: r.Attempt,
		Error: r.Error, Node: r.Node}
	if r.Event == EventRunFinal {
		ms := r.Duration.Milliseconds()
		d.DurationMS = &ms
	}
	return d
}
