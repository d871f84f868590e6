// Package taskdoc holds the part of the stored task document that both
// store drivers encode alike: a job's task.Job, under the same field names
// in SQLite's JSON (time_task.doc) and in MongoDB's BSON (the time_task
// collection's job sub-document).
package taskdoc

import (
	"cronsheet/store"
	"cronsheet/task"
)

// Job is task.Job in a task document, DueAt in unix milliseconds (0 =
// none). Key says what the job was given; the driver's job_keys say who
// holds a key now (ReplaceJob changes both together).
type Job struct {
	Method     task.JobMethod `json:"method" bson:"method"`
	Name       string         `json:"name" bson:"name"`
	Body       string         `json:"body,omitempty" bson:"body,omitempty"`
	Key        string         `json:"key,omitempty" bson:"key,omitempty"`
	CC         string         `json:"cc,omitempty" bson:"cc,omitempty"`
	CCLimit    int            `json:"cc_limit,omitempty" bson:"cc_limit,omitempty"`
	DueAt      int64          `json:"due_at,omitempty" bson:"due_at,omitempty"`
	ReplacedBy string         `json:"replaced_by,omitempty" bson:"replaced_by,omitempty"`
	Digest     string         `json:"digest,omitempty" bson:"digest,omitempty"`
	// Headers are the job's callback headers, values in the clear: the
	// store keeps them; answers mask them (task.Job.Redacted).
	Headers map[string]string `json:"headers,omitempty" bson:"headers,omitempty"`
}

// JobOf returns j's document, nil for nil.
func JobOf(j *task.Job) *Job {
	if j == nil {
		return nil
	}
	return &Job{Method: j.Method, Name: j.Name, Body: j.Body, Key: j.Key, CC: j.CC, CCLimit: j.CCLimit,
		DueAt: store.UnixMS(j.DueAt), ReplacedBy: j.ReplacedBy, Digest: j.Digest, Headers: j.Headers}
}

// Job returns the task.Job d describes, nil for nil.
func (d *Job) Job() *task.Job {
	if d == nil {
		return nil
	}
	return &task.Job{Method: d.Method, Name: d.Name, Body: d.Body, Key: d.Key, CC: d.CC, CCLimit: d.CCLimit,
		DueAt: store.FromUnixMS(d.DueAt), ReplacedBy: d.ReplacedBy, Digest: d.Digest, Headers: d.Headers}
}
