package mongo

import (
	"time"

	"cronsheet/store"
	"cronsheet/store/internal/taskdoc"
	"cronsheet/task"
)

// rowDoc is a document of the rows collection.
type rowDoc struct {
	Scenario   string         `bson:"scenario"`
	ID         string         `bson:"id"`
	Fields     map[string]any `bson:"fields"`
	IsFetched  int            `bson:"is_fetched"`
	IsActive   int            `bson:"is_active"`
	Error      string         `bson:"error"`
	NextFire   int64          `bson:"next_fire"`
	LastFire   int64          `bson:"last_fire"`
	LastStatus string         `bson:"last_status"`
	Version    int64          `bson:"version"`
	CreatedAt  int64          `bson:"created_at"`
	UpdatedAt  int64          `bson:"updated_at"`
	// The search keys (rowtable.go); written, never read back.
	Text   []string `bson:"st"`
	Grams  []string `bson:"sg"`
	EGrams []string `bson:"eg"`
}

// withSearchKeys sets d's search keys from its fields and error.
func (d rowDoc) withSearchKeys() rowDoc {
	k := searchKeysOf(d.Fields, d.Error)
	d.Text, d.Grams, d.EGrams = k.text, k.grams, k.egrams
	return d
}

func (d *rowDoc) row() *task.Row {
	return &task.Row{
		Scenario: d.Scenario, ID: d.ID, Fields: plainFields(d.Fields), IsFetched: d.IsFetched, IsActive: d.IsActive,
		Error: d.Error, NextFire: store.FromUnixMS(d.NextFire), LastFire: store.FromUnixMS(d.LastFire), LastStatus: d.LastStatus,
		Version: d.Version, CreatedAt: store.FromUnixMS(d.CreatedAt), UpdatedAt: store.FromUnixMS(d.UpdatedAt),
	}
}

// content is what a user's edit defines of a task (ApplySync writes it);
// claims, leases and fires never rewrite it. TTL is in nanoseconds.
type content struct {
	TaskType    task.Channel      `bson:"task_type"`
	TaskPara    string            `bson:"task_para"`
	Params      map[string]string `bson:"params"`
	ExecuteType task.ExecuteType  `bson:"execute_type"`
	CronPara    string            `bson:"cron_para"`
	TZ          string            `bson:"tz"`
	StartTime   int64             `bson:"start_time"`
	EndTime     int64             `bson:"end_time"`
	TTL         int64             `bson:"ttl"`
	MaxRetries  int               `bson:"max_retries"`
	Misfire     task.Misfire      `bson:"misfire"`
	Overlap     task.Overlap      `bson:"overlap,omitempty"`
	Alert       *alertDoc         `bson:"alert,omitempty"`
	Targets     []string          `bson:"targets"`
	State       task.State        `bson:"state"`
	Anchor      int64             `bson:"anchor"`
}

// contentOf returns t's content with anchor in place of t.Anchor.
func contentOf(t *task.Task, anchor int64) content {
	return content{
		TaskType: t.TaskType, TaskPara: t.TaskPara, Params: t.Params, ExecuteType: t.ExecuteType,
		CronPara: t.CronPara, TZ: t.TZ, StartTime: store.UnixMS(t.StartTime), EndTime: store.UnixMS(t.EndTime),
		TTL: int64(t.TTL), MaxRetries: t.MaxRetries, Misfire: t.Misfire, Overlap: t.Overlap, Alert: alertDocOf(t.Alert), Targets: t.Targets,
		State: t.State, Anchor: anchor,
	}
}

// sameSchedule reports whether c and o fire at the same slots: the
// schedule-relevant fields of store.ApplySyncParams.
func (c *content) sameSchedule(o *content) bool {
	return c.CronPara == o.CronPara && c.TZ == o.TZ && c.ExecuteType == o.ExecuteType &&
		c.StartTime == o.StartTime && c.EndTime == o.EndTime && c.Misfire == o.Misfire
}

// taskDoc is a document of the time_task collection.
type taskDoc struct {
	TaskID   string  `bson:"task_id"`
	Scenario string  `bson:"scenario"`
	RowID    string  `bson:"row_id"`
	Content  content `bson:",inline"`
	// Job is a jobs-API task's task.Job (absent for a row's task). It is
	// not part of content: ApplySync never writes it.
	Job *taskdoc.Job `bson:"job,omitempty"`

	IsEnable   int    `bson:"is_enable"`
	IsClaimed  int    `bson:"is_claimed"`
	ClaimedBy  string `bson:"claimed_by"`
	LeaseUntil int64  `bson:"lease_until"`
	IsDone     int    `bson:"is_done"`
	Deleted    int    `bson:"deleted"`
	NextFire   int64  `bson:"next_fire"`
	LastFire   int64  `bson:"last_fire"`
	LastStatus string `bson:"last_status"`
	Version    int64  `bson:"version"`
	CreatedAt  int64  `bson:"created_at"`
	UpdatedAt  int64  `bson:"updated_at"`
	// ArmAt is when a parked task may be claimed again (Tasks.ParkTasks);
	// 0 for every other task.
	ArmAt int64 `bson:"arm_at"`
}

func (d *taskDoc) task() *task.Task {
	c := &d.Content
	return &task.Task{
		TaskID: d.TaskID, Scenario: d.Scenario, RowID: d.RowID,
		TaskType: c.TaskType, TaskPara: c.TaskPara, Params: c.Params, ExecuteType: c.ExecuteType,
		CronPara: c.CronPara, TZ: c.TZ, StartTime: store.FromUnixMS(c.StartTime), EndTime: store.FromUnixMS(c.EndTime),
		TTL: time.Duration(c.TTL), MaxRetries: c.MaxRetries, Misfire: c.Misfire, Overlap: c.Overlap, Alert: c.Alert.alert(), Targets: c.Targets,
		Job: d.Job.Job(), State: c.State, Anchor: store.FromUnixMS(c.Anchor),
		IsEnable: d.IsEnable, IsClaimed: d.IsClaimed, ClaimedBy: d.ClaimedBy, LeaseUntil: store.FromUnixMS(d.LeaseUntil),
		IsDone: d.IsDone, NextFire: store.FromUnixMS(d.NextFire), LastFire: store.FromUnixMS(d.LastFire), LastStatus: d.LastStatus,
		Version: d.Version, CreatedAt: store.FromUnixMS(d.CreatedAt), UpdatedAt: store.FromUnixMS(d.UpdatedAt),
		ArmAt: store.FromUnixMS(d.ArmAt),
	}
}

// runDoc is a document of the runs collection (the fire ledger).
type runDoc struct {
	TriggerID   string           `bson:"trigger_id"`
	TaskID      string           `bson:"task_id"`
	Slot        int64            `bson:"slot"`
	Target      string           `bson:"target"`
	TriggerType task.TriggerType `bson:"trigger_type"`
	State       task.RunState    `bson:"state"`
	Attempt     int              `bson:"attempt"`
	Node        string           `bson:"node"`
	FiredAt     int64            `bson:"fired_at"`
	FinishedAt  int64            `bson:"finished_at"`
	NextAttempt int64            `bson:"next_attempt"`
	Error       string           `bson:"error"`
	Output      string           `bson:"output"`
	// Params are left out when empty.
	Params   map[string]string `bson:"params,omitempty"`
	Deadline int64             `bson:"deadline"`
	// Fence is the ownership epoch (task.Run.Fence); absent on runs from
	// before it, which fenceIs treats as 0.
	Fence int64 `bson:"fence"`
	// Feedback is left out when empty, never null: $push (AddFeedback)
	// creates a missing array but fails on a null.
	Feedback []feedbackDoc `bson:"feedback,omitempty"`
}

// feedbackDoc is one report in a run's feedback array.
type feedbackDoc struct {
	At       int64  `bson:"at"`
	Status   int    `bson:"status"`
	Message  string `bson:"message"`
	Output   string `bson:"output"`
	Progress bool   `bson:"progress"`
}

func feedbackDocOf(f *task.Feedback) feedbackDoc {
	return feedbackDoc{At: store.UnixMS(f.At), Status: f.Status, Message: f.Message, Output: f.Output, Progress: f.Progress}
}

// feedbackDocsOf returns the documents of fs, nil when there are none.
func feedbackDocsOf(fs []task.Feedback) []feedbackDoc {
	if len(fs) == 0 {
		return nil
	}
	out := make([]feedbackDoc, len(fs))
	for i := range fs {
		out[i] = feedbackDocOf(&fs[i])
	}
	return out
}

func (d *feedbackDoc) feedback() task.Feedback {
	return task.Feedback{At: store.FromUnixMS(d.At), Status: d.Status, Message: d.Message, Output: d.Output, Progress: d.Progress}
}

// runDocOf checks r and returns its document: TriggerID and TaskID are
// required, an empty State is pending, Error and Output are capped at
// task.MaxOutput.
func runDocOf(r *task.Run) (*runDoc, error) {
	if r == nil || r.TriggerID == "" {
		return nil, task.Invalid("trigger_id", "required")
	}
	if r.TaskID == "" {
		return nil, task.Invalid("task_id", "required")
	}
	state := r.State
	if state == "" {
		state = task.RunPending
	}
	return &runDoc{
		TriggerID: r.TriggerID, TaskID: r.TaskID, Slot: store.UnixMS(r.Slot), Target: r.Target,
		TriggerType: r.TriggerType, State: state, Attempt: r.Attempt, Node: r.Node,
		FiredAt: store.UnixMS(r.FiredAt), FinishedAt: store.UnixMS(r.FinishedAt), NextAttempt: store.UnixMS(r.NextAttempt),
		Error: task.Truncate(r.Error, task.MaxOutput), Output: task.Truncate(r.Output, task.MaxOutput),
		Params: nilIfEmpty(r.Params), Deadline: store.UnixMS(r.Deadline), Feedback: feedbackDocsOf(r.Feedback),
		Fence: r.Fence,
	}, nil
}

// nilIfEmpty returns m, or nil when it has no keys.
func nilIfEmpty(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	return m
}

func (d *runDoc) run() *task.Run {
	r := &task.Run{
		TriggerID: d.TriggerID, TaskID: d.TaskID, Slot: store.FromUnixMS(d.Slot), Target: d.Target,
		TriggerType: d.TriggerType, State: d.State, Attempt: d.Attempt, Node: d.Node,
		FiredAt: store.FromUnixMS(d.FiredAt), FinishedAt: store.FromUnixMS(d.FinishedAt), NextAttempt: store.FromUnixMS(d.NextAttempt),
		Error: d.Error, Output: d.Output, Params: d.Params, Deadline: store.FromUnixMS(d.Deadline),
		Fence: d.Fence,
	}
	if len(d.Feedback) > 0 {
		r.Feedback = make([]task.Feedback, len(d.Feedback))
		for i := range d.Feedback {
			r.Feedback[i] = d.Feedback[i].feedback()
		}
	}
	return r
}

// outboxDoc is a document of the outbox collection; _id is the message id.
type outboxDoc struct {
	ID        int64        `bson:"_id"`
	TKey      string       `bson:"tkey"`
	TaskID    string       `bson:"task_id"`
	TriggerID string       `bson:"trigger_id"`
	Channel   task.Channel `bson:"channel"`
	To        string       `bson:"to"`
	Subject   string       `bson:"subject"`
	Body      string       `bson:"body"`
	CreatedAt int64        `bson:"created_at"`
}

func (d *outboxDoc) message() *task.OutboxMessage {
	return &task.OutboxMessage{ID: d.ID, TaskID: d.TaskID, TriggerID: d.TriggerID, Channel: d.Channel,
		To: d.To, Subject: d.Subject, Body: d.Body, CreatedAt: store.FromUnixMS(d.CreatedAt)}
}

// alertDoc is task.Alert in a task document (Every and Absent in
// nanoseconds).
type alertDoc struct {
	Targets []string `bson:"targets"`
	To      string   `bson:"to,omitempty"`
	After   int      `bson:"after,omitempty"`
	Every   int64    `bson:"every,omitempty"`
	Absent  int64    `bson:"absent,omitempty"`
}

func alertDocOf(a *task.Alert) *alertDoc {
	if a == nil {
		return nil
	}
	return &alertDoc{Targets: a.Targets, To: a.To, After: a.After, Every: int64(a.Every), Absent: int64(a.Absent)}
}

func (d *alertDoc) alert() *task.Alert {
	if d == nil {
		return nil
	}
	return &task.Alert{Targets: d.Targets, To: d.To, After: d.After, Every: time.Duration(d.Every), Absent: time.Duration(d.Absent)}
}
