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
	// CreateJobs stores many new jobs in one step (a batch submission:
	// one commit instead of one each). Each job stands on its own, exactly
	// as by CreateJob: errs[i] is CreateJob's error for ts[i] (nil when it
	// was stored). A returned error means no job was stored (a driver
	// without transactions may leave a key claim or an event of a job
	// that does not exist, as after a crash; its doc says which). At most
	// MaxStatusBatch jobs per call.
	//
	// evs is nil, or holds each job's first transition (its "submitted"):
	// evs[i] is appended to ts[i]'s history (as by AddJobEvents, its JobID
	// being ts[i].TaskID whatever evs[i].JobID says) in the same step as
	// ts[i] is stored, and only when it is: the job and its first
	// transition are one write, not a job write and then an event write
	// each waits its turn for.
	CreateJobs(ctx context.Context, ts []*task.Task, evs []JobEvent) (errs []error, err error)
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
	// ListJobs returns up to p.Limit jobs (tasks of scenario
	// task.JobScenario), newest first by (created_at, task_id), after
	// p.After in that order (zero: from the newest). It walks an index:
	// the jobs API lists pending and blocked jobs, which have no run to
	// find them by, with it.
	ListJobs(ctx context.Context, p ListJobsParams) ([]*task.Task, error)
}

// MaxListJobs bounds ListJobsParams.Limit.
const MaxListJobs = 1000

// JobCursor is a position in ListJobs' order: a job's created_at and id.
type JobCursor struct {
	CreatedAt time.Time
	TaskID    string
}

// ListJobsParams are the arguments of Jobs.ListJobs.
type ListJobsParams struct {
	After JobCursor // zero: start at the newest job
	Limit int       // 1 to MaxListJobs
}

// CheckListJobs validates p.
func CheckListJobs(p ListJobsParams) error {
	if p.Limit <= 0 || p.Limit > MaxListJobs {
		return task.Invalid("limit", "must be 1 to %d, got %d", MaxListJobs, p.Limit)
	}
	return nil
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

// CheckCreateJobs validates the arguments of Jobs.CreateJobs as a
// whole: at most MaxStatusBatch jobs, and evs nil or one per job.
func CheckCreateJobs(ts []*task.Task, evs []JobEvent) error {
	if len(ts) > MaxStatusBatch {
		return task.Invalid("jobs", "at most %d per call, got %d", MaxStatusBatch, len(ts))
	}
	if evs != nil && len(evs) != len(ts) {
		return task.Invalid("events", "one per job: %d events for %d jobs", len(evs), len(ts))
	}
	return nil
}
