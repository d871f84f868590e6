package sqlite

import (
	"encoding/json"
	"fmt"
	"time"

	"cronsheet/store"
	"cronsheet/store/internal/taskdoc"
	"cronsheet/task"
)

// taskCols are the time_task columns a task is read from.
const taskCols = `task_id, scenario, row_id, doc, is_enable, is_claimed, claimed_by, lease_until,
	is_done, next_fire, last_fire, last_status, version, created_at, updated_at, arm_at`

// taskDoc is the JSON document of time_task.doc: what the user's edit
// defines. The fields that patrols, claims and fires change (flags, lease,
// feedback, version, times) live only in their own columns, so those writes
// never rewrite the document. Times are unix milliseconds; TTL is in
// nanoseconds, as time.Duration.
type taskDoc struct {
	TaskType    task.Channel      `json:"task_type"`
	TaskPara    string            `json:"task_para"`
	Params      map[string]string `json:"params,omitempty"`
	ExecuteType task.ExecuteType  `json:"execute_type"`
	CronPara    string            `json:"cron_para"`
	TZ          string            `json:"tz,omitempty"`
	StartTime   int64             `json:"start_time,omitempty"`
	EndTime     int64             `json:"end_time,omitempty"`
	TTL         time.Duration     `json:"ttl"`
	MaxRetries  int               `json:"max_retries"`
	Misfire     task.Misfire      `json:"misfire"`
	Overlap     task.Overlap      `json:"overlap,omitempty"`
	Alert       *task.Alert       `json:"alert,omitempty"`
	Targets     []string          `json:"targets,omitempty"`
	Job         *taskdoc.Job      `json:"job,omitempty"`
	State       task.State        `json:"state"`
	Anchor      int64             `json:"anchor,omitempty"`
}

// docOf returns t's document; anchor replaces t.Anchor.
func docOf(t *task.Task, anchor int64) taskDoc {
	return taskDoc{
		TaskType:    t.TaskType,
		TaskPara:    t.TaskPara,
		Params:      t.Params,
		ExecuteType: t.ExecuteType,
		CronPara:    t.CronPara,
		TZ:          t.TZ,
		StartTime:   store.UnixMS(t.StartTime),
		EndTime:     store.UnixMS(t.EndTime),
		TTL:         t.TTL,
		MaxRetries:  t.MaxRetries,
		Misfire:     t.Misfire,
		Overlap:     t.Overlap,
		Alert:       t.Alert,
		Targets:     t.Targets,
		Job:         taskdoc.JobOf(t.Job),
		State:       t.State,
		Anchor:      anchor,
	}
}

// sameSchedule reports whether d and o fire at the same slots: the
// schedule-relevant fields of store.ApplySyncParams.
func (d *taskDoc) sameSchedule(o *taskDoc) bool {
	return d.CronPara == o.CronPara && d.TZ == o.TZ && d.ExecuteType == o.ExecuteType &&
		d.StartTime == o.StartTime && d.EndTime == o.EndTime && d.Misfire == o.Misfire
}

func (d *taskDoc) marshal() (string, error) {
	b, err := json.Marshal(d)
	return string(b), err
}

// apply copies d onto t.
func (d *taskDoc) apply(t *task.Task) {
	t.TaskType = d.TaskType
	t.TaskPara = d.TaskPara
	t.Params = d.Params
	t.ExecuteType = d.ExecuteType
	t.CronPara = d.CronPara
	t.TZ = d.TZ
	t.StartTime = store.FromUnixMS(d.StartTime)
	t.EndTime = store.FromUnixMS(d.EndTime)
	t.TTL = d.TTL
	t.MaxRetries = d.MaxRetries
	t.Misfire = d.Misfire
	t.Overlap = d.Overlap
	t.Alert = d.Alert
	t.Targets = d.Targets
	t.Job = d.Job.Job()
	t.State = d.State
	t.Anchor = store.FromUnixMS(d.Anchor)
}

// scanTask reads the taskCols of one row.
func scanTask(sc scanner) (*task.Task, error) {
	var (
		t                                   task.Task
		doc                                 string
		lease, next, last, created, updated int64
		armAt                               int64
	)
	err := sc.Scan(&t.TaskID, &t.Scenario, &t.RowID, &doc, &t.IsEnable, &t.IsClaimed, &t.ClaimedBy,
		&lease, &t.IsDone, &next, &last, &t.LastStatus, &t.Version, &created, &updated, &armAt)
	if err != nil {
		return nil, err
	}
	var d taskDoc
	if err := json.Unmarshal([]byte(doc), &d); err != nil {
		return nil, fmt.Errorf("decode task %s: %w", t.TaskID, err)
	}
	d.apply(&t)
	t.LeaseUntil, t.NextFire, t.LastFire = store.FromUnixMS(lease), store.FromUnixMS(next), store.FromUnixMS(last)
	t.CreatedAt, t.UpdatedAt = store.FromUnixMS(created), store.FromUnixMS(updated)
	t.ArmAt = store.FromUnixMS(armAt)
	return &t, nil
}
