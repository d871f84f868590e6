package task

import "time"

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
	Node        string      `json:"node,omitempty"`
	FiredAt     time.Time   `json:"fired_at,omitzero"`
	FinishedAt  time.Time   `json:"finished_at,omitzero"`
	NextAttempt time.Time   `json:"next_attempt,omitzero"`
	Error       string      `json:"error,omitempty"`
	Output      string      `json:"output,omitempty"`
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
	Params    map[string]string
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
