package task

import "time"

// ExecuteType says how often a task fires.
type ExecuteType string

// The execute types of docs/DESIGN.md.
const (
	// Once fires a single time and then the task is done.
	Once ExecuteType = "once"
	// Periodic fires on every slot of its schedule.
	Periodic ExecuteType = "periodic"
	// UntilSuccess fires on its schedule until one run succeeds.
	UntilSuccess ExecuteType = "run_until_success"
)

// Valid reports whether e is a known execute type.
func (e ExecuteType) Valid() bool {
	return e == Once || e == Periodic || e == UntilSuccess
}

// State is a task's life-cycle state (design note 001, docs/SEEDS.md).
type State string

// Task states.
const (
	// StateRunning fires on schedule and on demand.
	StateRunning State = "running"
	// StateStopped fires only on a manual trigger.
	StateStopped State = "stopped"
	// StateClosed never fires.
	StateClosed State = "closed"
)

// Misfire says what to do with slots missed while no node ran the task.
type Misfire string

// Misfire policies.
const (
	// MisfireSkip drops missed slots.
	MisfireSkip Misfire = "skip"
	// MisfireOnce fires once for all missed slots (the latest one). The default.
	MisfireOnce Misfire = "once"
	// MisfireAll fires every missed slot, up to MaxMisfireSlots.
	MisfireAll Misfire = "all"
)

// MaxMisfireSlots bounds how many missed slots MisfireAll replays.
const MaxMisfireSlots = 100

// Valid reports whether m is a known misfire policy.
func (m Misfire) Valid() bool {
	return m == MisfireSkip || m == MisfireOnce || m == MisfireAll
}

// Overlap says what a scheduled fire does while the task's previous run
// is still being delivered: no pile-up of slow runs (docs/DESIGN.md,
// "Overlap").
type Overlap string

// Overlap policies.
const (
	// OverlapAllow delivers every slot at once, overlapping or not.
	OverlapAllow Overlap = "allow"
	// OverlapSkip records a slot that comes while a run is in progress as
	// skipped, with the reason, and delivers nothing for it. The default
	// for schedules that repeat.
	OverlapSkip Overlap = "skip"
	// OverlapQueue keeps such a slot pending and delivers it when the
	// runs before it are over: one at a time, in slot order.
	OverlapQueue Overlap = "queue"
)

// Valid reports whether o is a known overlap policy ("" included: the
// default).
func (o Overlap) Valid() bool {
	return o == "" || o == OverlapAllow || o == OverlapSkip || o == OverlapQueue
}

// OverlapOf returns t's overlap policy, its default filled in: skip for
// schedules that repeat, allow for a single slot (nothing to overlap).
func OverlapOf(t *Task) Overlap {
	if t.Overlap != "" {
		return t.Overlap
	}
	if t.ExecuteType == Once {
		return OverlapAllow
	}
	return OverlapSkip
}

// Channel is how a memo is delivered; it is the task's TaskType.
type Channel string

// Delivery channels.
const (
	ChannelEmail  Channel = "email"
	ChannelSMS    Channel = "sms"
	ChannelOutbox Channel = "outbox"
)

// Valid reports whether c is a known channel.
func (c Channel) Valid() bool {
	return c == ChannelEmail || c == ChannelSMS || c == ChannelOutbox
}

// Well-known keys of Task.Params.
const (
	ParamTo    = "to"    // recipient: email address or E.164 phone number
	ParamTitle = "title" // subject line
)

// Bounds on task fields.
const (
	MaxParams      = 128
	MaxParamKey    = 128
	MaxParamValue  = 8 << 10
	MaxTaskPara    = 64 << 10
	MaxRetriesCap  = 100
	MaxTTL         = 24 * time.Hour
	DefaultTTL     = 60 * time.Second
	DefaultRetries = 3
)

// Task is the canonical scheduled task (the time_task document), one per row
// or API job. Zero times mean "unset".
type Task struct {
	TaskID      string            `json:"task_id"`
	Scenario    string            `json:"scenario"`
	RowID       string            `json:"row_id,omitempty"`
	TaskType    Channel           `json:"task_type"`
	TaskPara    string            `json:"task_para"`
	Params      map[string]string `json:"params,omitempty"`
	ExecuteType ExecuteType       `json:"execute_type"`
	CronPara    string            `json:"cron_para"`
	TZ          string            `json:"tz,omitempty"`
	StartTime   time.Time         `json:"start_time,omitzero"`
	EndTime     time.Time         `json:"end_time,omitzero"`
	// TTL is the deadline of one attempt.
	TTL        time.Duration `json:"ttl"`
	MaxRetries int           `json:"max_retries"`
	Misfire    Misfire       `json:"misfire"`
	// Overlap is what a scheduled fire does while the previous run is
	// still in progress; "" is the default (OverlapOf).
	Overlap Overlap  `json:"overlap,omitempty"`
	Targets []string `json:"targets,omitempty"`
	// Alert, when set, tells its targets when the task keeps failing.
	Alert *Alert `json:"alert,omitempty"`
	// Job describes a jobs-API task (scenario JobScenario): it fires to
	// the job's inline target. Nil for row tasks.
	Job   *Job  `json:"job,omitempty"`
	State State `json:"state"`
	// Anchor is the instant the current schedule became active: intervals and
	// "in" schedules count from it. It changes only when the schedule does,
	// so every node computes the same slots.
	Anchor time.Time `json:"anchor"`

	IsEnable   int       `json:"is_enable"`
	IsClaimed  int       `json:"is_claimed"`
	ClaimedBy  string    `json:"claimed_by,omitempty"`
	LeaseUntil time.Time `json:"lease_until,omitzero"`
	IsDone     int       `json:"is_done"`
	NextFire   time.Time `json:"next_fire,omitzero"`
	LastFire   time.Time `json:"last_fire,omitzero"`
	LastStatus string    `json:"last_status,omitempty"`
	Version    int64     `json:"version"`
	CreatedAt  time.Time `json:"created_at,omitzero"`
	UpdatedAt  time.Time `json:"updated_at,omitzero"`
	// ArmAt is the instant from which a node must hold the task (the
	// claim's bound, store.ClaimParams.ArmBy); zero means at once. The jobs
	// API stores a far-off delayed job with one a window before its
	// instant, a node hands back a far-off parked task with one
	// (store.Tasks.ParkTasks); a claim and every edit clear it.
	ArmAt time.Time `json:"arm_at,omitzero"`
}

// Row bookkeeping values of is_active.
const (
	RowActive   = 1
	RowInactive = 0
	RowError    = -1
)

// Row is one record of a scenario's source collection. Fields holds what the
// user wrote, under the scenario's own names; the bookkeeping flags sit beside
// it so the user's fields are never rewritten by the system.
type Row struct {
	Scenario  string         `json:"scenario"`
	ID        string         `json:"id"`
	Fields    map[string]any `json:"fields"`
	IsFetched int            `json:"is_fetched"`
	IsActive  int            `json:"is_active"`
	Error     string         `json:"error,omitempty"`
	// Feedback mirrored from the task.
	NextFire   time.Time `json:"next_fire,omitzero"`
	LastFire   time.Time `json:"last_fire,omitzero"`
	LastStatus string    `json:"last_status,omitempty"`
	Version    int64     `json:"version"`
	CreatedAt  time.Time `json:"created_at,omitzero"`
	UpdatedAt  time.Time `json:"updated_at,omitzero"`
}

// SameSchedule reports whether t and o fire at the same slots: same schedule
// text, zone, execute type, window and misfire policy.
func (t *Task) SameSchedule(o *Task) bool {
	return t.CronPara == o.CronPara && t.TZ == o.TZ && t.ExecuteType == o.ExecuteType &&
		t.StartTime.Equal(o.StartTime) && t.EndTime.Equal(o.EndTime) && t.Misfire == o.Misfire
}

// Title is how people name the task: its title param (a row's title
// field), else a job's name as answers show it (Job.ShownName: a URL's
// credentials masked), else "".
func (t *Task) Title() string {
	if s := t.Params[ParamTitle]; s != "" {
		return s
	}
	if t.Job != nil {
		return t.Job.ShownName()
	}
	return ""
}
