package store

import (
	"context"
	"time"

	"cronsheet/task"
)

// Jobs is what the jobs API needs from storage beyond Store and Control:
// tasks without a row (scenario task.JobScenario, carrying Task.Job), the
// key each job may hold, and each job's transitions.
// store/storetest.RunJobs is its conformance suite.
type Jobs interface {
	// CreateJob stores t, a job (t.Job not nil, t.Scenario ==
	// task.JobScenario, no RowID), as a new task with version 1, unclaimed,
	// created and updated now (set on t). When t.Job.Key is set, the key
	// is taken for t in the same step. A taken task_id, or a key another
	// job holds, is task.ErrConflict (the error says which).
	CreateJob(ctx context.Context, t *task.Task) error
	// JobByKey returns the job holding key, or task.ErrNotFound.
	JobByKey(ctx context.Context, key string) (*task.Task, error)
	// ReplaceJob moves key from job oldID to the new job t (created as by
	// CreateJob, with t.Job.Key == key): oldID loses the key (Job.Key "")
	// and gets Job.ReplacedBy = t.TaskID and state closed, version+1,
	// claim released. It is task.ErrConflict when key is not held by oldID
	// any more (someone else replaced it first); task.ErrNotFound when
	// oldID does not exist. Drivers without transactions order the steps
	// so that a crash leaves the key with exactly one of the two jobs.
	ReplaceJob(ctx context.Context, key, oldID string, t *task.Task) error
	// AddJobEvents appends transitions, each to its job's history.
	AddJobEvents(ctx context.Context, evs []JobEvent) error
	// JobEvents returns a job's transitions, oldest first, at most limit.
	JobEvents(ctx context.Context, jobID string, limit int) ([]JobEvent, error)
}

// JobEvent is one transition of a job: the job's state after it, when and
// why (an attempt's error, "cancelled by the API", …).
type JobEvent struct {
	JobID     string        `json:"job_id"`
	At        time.Time     `json:"at"`
	State     task.JobState `json:"state"`
	TriggerID string        `json:"trigger_id,omitempty"`
	Attempt   int           `json:"attempt,omitempty"`
	Reason    string        `json:"reason,omitempty"`
}

// MaxJobEvents bounds the transitions kept per job read; AddJobEvents
// takes at most MaxStatusBatch events per call.
const MaxJobEvents = 1000

// JobBatcher is implemented by drivers that store many new jobs in one
// step (a batch submission: one commit instead of one each). Each job
// stands on its own, exactly as by CreateJob: errs[i] is CreateJob's error
// for ts[i] (nil when it was stored). A returned error means nothing was
// stored. At most MaxStatusBatch jobs per call.
type JobBatcher interface {
	CreateJobs(ctx context.Context, ts []*task.Task) (errs []error, err error)
}
