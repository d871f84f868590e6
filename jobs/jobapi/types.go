package jobapi

import (
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// View is a job as the API shows it.
type View struct {
	ID     string         `json:"id"`
	State  task.JobState  `json:"state"`
	Method task.JobMethod `json:"method"`
	Name   string         `json:"name"`
	Key    string         `json:"key,omitempty"`
	// Params is the job's params as text (task.Job.Body): the query
	// string, request body, mail JSON, SMS text or record value.
	Params  string `json:"params,omitempty"`
	CC      string `json:"cc,omitempty"`
	CCLimit int    `json:"cc_limit,omitempty"`
	// Headers are the job's header names, each value "***" (write-only).
	Headers    map[string]string `json:"headers,omitempty"`
	DueAt      time.Time         `json:"due_at,omitzero"`
	Cron       string            `json:"cron,omitempty"`
	NextFire   time.Time         `json:"next_fire,omitzero"`
	MaxRetries int               `json:"max_retries"`
	TTL        float64           `json:"ttl"`
	ReplacedBy string            `json:"replaced_by,omitempty"`
	Attempts   int               `json:"attempts"`
	Result     string            `json:"result,omitempty"`
	Error      string            `json:"error,omitempty"`
	Run        *task.Run         `json:"run,omitempty"` // the newest run
	Runs       []*task.Run       `json:"runs,omitempty"`
	Events     []store.JobEvent  `json:"events,omitempty"`
	CreatedAt  time.Time         `json:"created_at,omitzero"`
	// Created is false when a submission found the job its key names
	// (idempotent repeat).
	Created bool `json:"created"`
	// Replaced, in the answer of an upsert by key, is the job that held
	// the key before (the key existed); empty when the upsert created it.
	Replaced string `json:"replaced,omitempty"`
}

// BatchResult is one job's answer in a batch: its view, or why it was
// refused.
type BatchResult struct {
	View *View
	Err  error
}

// BackfillRequest chooses jobs to re-run: the given ids and the jobs of
// Runs, or the newest dead (or cancelled) jobs, at most Limit.
type BackfillRequest struct {
	IDs []string `json:"ids,omitempty"`
	// Runs names, per job id, the run a backfill of that job retries: the
	// trigger id of the job's newest run as the client read it (its
	// "run"). The job is re-run only while that run is still its newest,
	// so every request naming the same run gets the one re-run. A job
	// named here need not be in IDs.
	Runs  map[string]string `json:"runs,omitempty"`
	State task.JobState     `json:"state,omitempty"` // dead (default) or cancelled, when IDs is empty
	// Method and Name (a substring) narrow the jobs chosen by State.
	Method task.JobMethod `json:"method,omitempty"`
	Name   string         `json:"name,omitempty"`
	Limit  int            `json:"limit,omitempty"` // default and maximum 1000
}

// BackfillAnswer lists the jobs a backfill will re-run and those refused.
type BackfillAnswer struct {
	Accepted []string          `json:"accepted"`
	Refused  map[string]string `json:"refused,omitempty"`
	// Rate is how many are triggered per second.
	Rate float64 `json:"rate"`
}

// MaxBackfill bounds one backfill.
const MaxBackfill = 1000

// ListQuery chooses jobs by state (dead letters: State dead), newest
// first.
type ListQuery struct {
	State task.JobState
	// Method and Name (a substring of the job's name) narrow the list;
	// empty matches all.
	Method task.JobMethod
	Name   string
	// Q (any case) is a substring of the job's name or of its key; empty
	// matches all. The jobs page's search box sends it.
	Q string
	// Cursor is where the previous page ended, as List returned it: a
	// run's (fired_at, trigger_id) for the states read from the ledger, a
	// job's (created_at, id) for pending and blocked.
	Cursor store.RunCursor
	Limit  int
}
