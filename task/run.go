package task

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// RunState is the state of one fire in the ledger.
type RunState string

// Run states.
const (
	RunPending   RunState = "pending"
	RunRunning   RunState = "running"
	RunDone      RunState = "done"
	RunFailed    RunState = "failed" // an attempt failed; a retry follows
	RunDead      RunState = "dead"   // retries exhausted or a permanent error
	RunRejected  RunState = "rejected"
	RunTimeout   RunState = "timeout"
	RunCancelled RunState = "cancelled"
	RunSkipped   RunState = "skipped" // the task was disabled or changed before delivery
	// RunAccepted: the target took the trigger and the run waits for its
	// feedback (or its deadline, then RunTimeout). Not final, and not
	// resumed either: the target has the work.
	RunAccepted RunState = "accepted"
)

// Final reports whether no further attempt of the run will happen.
func (s RunState) Final() bool {
	switch s {
	case RunDone, RunDead, RunRejected, RunTimeout, RunCancelled, RunSkipped:
		return true
	}
	return false
}

// TriggerType says what caused a fire.
type TriggerType string

// Trigger types.
const (
	TriggerSchedule TriggerType = "schedule"
	TriggerMisfire  TriggerType = "misfire"
	TriggerManual   TriggerType = "manual"
	TriggerBackfill TriggerType = "backfill"
	TriggerAPI      TriggerType = "api"
	TriggerFlow     TriggerType = "flow"
)

// MaxOutput caps Run.Output and Run.Error.
const MaxOutput = 4 << 10

// Run is one record of the fire ledger, unique on (TaskID, Slot, Target).
type Run struct {
	TriggerID   string      `json:"trigger_id"`
	TaskID      string      `json:"task_id"`
	Slot        time.Time   `json:"slot"`
	Target      string      `json:"target"`
	TriggerType TriggerType `json:"trigger_type"`
	State       RunState    `json:"state"`
	Attempt     int         `json:"attempt"`
	// Node is the node that owns the run: the only one allowed to deliver
	// it and to record its attempts and outcome.
	Node string `json:"node,omitempty"`
	// Fence is the ownership epoch: 1 when fired, bumped each time another
	// delivery takes the run over. Every write of a deliverer is
	// conditional on the fence it holds, so a deliverer that lost the run
	// cannot record over the new owner.
	Fence       int64     `json:"fence,omitempty"`
	FiredAt     time.Time `json:"fired_at,omitzero"`
	FinishedAt  time.Time `json:"finished_at,omitzero"`
	NextAttempt time.Time `json:"next_attempt,omitzero"`
	Error       string    `json:"error,omitempty"`
	Output      string    `json:"output,omitempty"`
	// Params are one-off params given with a manual trigger; they override
	// the task's params for this run only.
	Params map[string]string `json:"params,omitempty"`
	// Deadline is when an accepted run without final feedback times out;
	// for a running or failed run, when its attempt in progress (or its
	// retry) should be over: a run unfinished well past it is stranded and
	// the rescuer takes it over.
	Deadline time.Time `json:"deadline,omitzero"`
	// Feedback holds the target's reports, oldest first (at most
	// MaxFeedback).
	Feedback []Feedback `json:"feedback,omitempty"`
}

// Feedback is one report of a target about a run it accepted
// (POST /api/v1/runs/{trigger_id}/feedback).
type Feedback struct {
	At time.Time `json:"at"`
	// Status 0 is success; anything else is a failure code of the target's.
	Status  int    `json:"status"`
	Message string `json:"message,omitempty"`
	Output  string `json:"output,omitempty"`
	// Progress marks a report that is not final: the run stays accepted.
	Progress bool `json:"progress,omitempty"`
}

// Bounds on feedback.
const (
	MaxFeedback        = 50 // reports kept per run
	MaxFeedbackMessage = 1 << 10
)

// Validate checks a report's sizes.
func (f *Feedback) Validate() error {
	if len(f.Message) > MaxFeedbackMessage {
		return Invalid("message", "at most %d bytes", MaxFeedbackMessage)
	}
	if len(f.Output) > MaxOutput {
		return Invalid("output", "at most %d bytes", MaxOutput)
	}
	return nil
}

// Outcome is the final state a final report gives its run, and the run's
// error: done for status 0; dead otherwise, with the report's message or,
// without one, the status it reported.
func (f *Feedback) Outcome() (RunState, string) {
	if f.Status == 0 {
		return RunDone, ""
	}
	if f.Message != "" {
		return RunDead, f.Message
	}
	return RunDead, fmt.Sprintf("target reported status %d", f.Status)
}

// OutboxMessage is a delivery kept instead of sent, for channels in outbox
// mode and for the outbox channel itself.
type OutboxMessage struct {
	ID        int64     `json:"id"`
	TaskID    string    `json:"task_id"`
	TriggerID string    `json:"trigger_id"`
	Channel   Channel   `json:"channel"`
	To        string    `json:"to"`
	Subject   string    `json:"subject"`
	Body      string    `json:"body"`
	CreatedAt time.Time `json:"created_at"`
}

// Delivery is what an executor sends for one attempt of one run.
type Delivery struct {
	TaskID    string
	TriggerID string
	Slot      time.Time
	Attempt   int
	Channel   Channel
	To        string
	Subject   string
	Body      string
	// Params are the task's params with the run's one-off params over them.
	Params map[string]string
	// TriggerType is what caused the run.
	TriggerType TriggerType
	// Target is the target delivered to; nil for a task's own channel.
	Target *Target
	// LedgerTarget is the run's target in the ledger when it differs from
	// Target's id: an alert run's "alert:<id>" or "absent:<id>".
	LedgerTarget string
	// Node and Instance name the node delivering it and that node's
	// process (its registry incarnation), so a receiver can tell who sent
	// a repeat.
	Node, Instance string
}

// LedgerKey names the run this delivery is for by the fire ledger's key,
// `<task_id>:<slot unix ms>:<target>` (the target's id, the channel for
// a task's own channel, or an alert run's "alert:<id>"/"absent:<id>"): the same for every attempt and every node, and
// different for each target of one slot, so a receiver can drop repeats
// without dropping another target's delivery. It is what the
// Idempotency-Key header and the document's idempotency_key carry.
func (d *Delivery) LedgerKey() string {
	target := string(d.Channel)
	switch {
	case d.LedgerTarget != "":
		target = d.LedgerTarget
	case d.Target != nil:
		target = d.Target.ID
	}
	return fmt.Sprintf("%s:%d:%s", d.TaskID, d.Slot.UnixMilli(), target)
}

// Vars returns the template variables of d: its params, then the trigger's
// own variables (which win over params of the same name).
func (d *Delivery) Vars() map[string]string {
	v := make(map[string]string, len(d.Params)+6)
	for k, x := range d.Params {
		v[k] = x
	}
	v["trigger_id"] = d.TriggerID
	v["task_id"] = d.TaskID
	v["slot"] = d.Slot.UTC().Format(time.RFC3339Nano)
	v["attempt"] = strconv.Itoa(d.Attempt)
	v["trigger_type"] = string(d.TriggerType)
	v["target"] = ""
	if d.Target != nil {
		v["target"] = d.Target.ID
	}
	return v
}

// Document returns the default JSON body of d (an HTTP POST without a body
// template, a Kafka record without a value template).
func (d *Delivery) Document() []byte {
	doc := struct {
		TriggerID      string            `json:"trigger_id"`
		TaskID         string            `json:"task_id"`
		Target         string            `json:"target,omitempty"`
		Slot           time.Time         `json:"slot"`
		Attempt        int               `json:"attempt"`
		TriggerType    TriggerType       `json:"trigger_type,omitempty"`
		IdempotencyKey string            `json:"idempotency_key"`
		Params         map[string]string `json:"params,omitempty"`
	}{d.TriggerID, d.TaskID, "", d.Slot.UTC(), d.Attempt, d.TriggerType, d.LedgerKey(), d.Params}
	if d.Target != nil {
		doc.Target = d.Target.ID
	}
	b, _ := json.Marshal(doc) // strings, ints and a time: cannot fail
	return b
}

// Truncate cuts s to at most n bytes, marking the cut.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "…[truncated]"
	if n <= len(mark) {
		return s[:n]
	}
	return s[:n-len(mark)] + mark
}
