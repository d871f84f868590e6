package task

import (
	"fmt"
	"maps"
	"net/url"
	"strings"
	"time"
)

// JobScenario is the scenario of tasks made through the jobs API: they
// have no row; their delivery is described by Task.Job.
const JobScenario = "jobs"

// JobMethod says what a job does when it fires (the poulpe design's
// methods, plus SMS and KAFKA).
type JobMethod string

// Job methods.
const (
	JobGET    JobMethod = "GET"     // Name is the URL; Body is the query string
	JobPOST   JobMethod = "POST"    // Name is the URL; Body is the request body
	JobEXEC   JobMethod = "EXEC"    // Name is a command listed in config exec.commands
	JobMailTo JobMethod = "MAIL_TO" // Name is the recipient; Body is JSON {"subject","body"}
	JobSMS    JobMethod = "SMS"     // Name is the E.164 number; Body is the text
	JobKafka  JobMethod = "KAFKA"   // Name is the topic; Body is the record value
)

// Kind returns the target kind (channel) that delivers m, or "" when m is
// unknown.
func (m JobMethod) Kind() Channel {
	switch m {
	case JobGET, JobPOST:
		return ChannelHTTP
	case JobEXEC:
		return ChannelExec
	case JobMailTo:
		return ChannelEmail
	case JobSMS:
		return ChannelSMS
	case JobKafka:
		return ChannelKafka
	}
	return ""
}

// JobState is a job's life-cycle state, derived from its task and its
// runs (see DeriveJobState).
type JobState string

// Job states (design notes 002 and 001, docs/SEEDS.md).
const (
	JobPending     JobState = "pending"     // waiting for its instant (or a worker)
	JobRunning     JobState = "running"     // an attempt is under way (or accepted, awaiting feedback)
	JobFailed      JobState = "failed"      // an attempt failed; a retry follows
	JobDone        JobState = "done"        // it succeeded
	JobDead        JobState = "dead"        // retries exhausted, or failed for good
	JobCancelled   JobState = "cancelled"   // cancelled before it fired (or replaced)
	JobBlocked     JobState = "blocked"     // never runs while blocked
	JobBackfilling JobState = "backfilling" // a backfill run is under way
)

// Final reports whether the job will not change again by itself.
func (s JobState) Final() bool {
	return s == JobDone || s == JobDead || s == JobCancelled
}

// Bounds on jobs.
const (
	MaxJobName      = 2048
	MaxJobBody      = 64 << 10
	MaxJobKey       = 200
	MaxJobCC        = 100 // concurrency group name length
	MaxJobCCLimit   = 1000
	MaxJobDelay     = 366 * 24 * 3600 // seconds
	MaxJobWait      = 50              // seconds a request may block; the HTTP write timeout derives from it
	MaxJobPast      = 24 * 3600       // seconds an "at" may lie in the past (it then runs at once)
	DefaultJobRetry = 5
)

// Job describes what a jobs-API task does (Task.Job). The task carries the
// rest: schedule (DueAt for a delayed job, CronPara for a cron job), params,
// ttl and max_retries.
type Job struct {
	Method JobMethod `json:"method"`
	Name   string    `json:"name"`
	// Body is the job's params as text (the poulpe form): a query string,
	// a request body, the mail's JSON, the SMS text, the record value.
	Body string `json:"body,omitempty"`
	// Key is the job's idempotency and upsert key ("" = none); at most one
	// job holds a key at a time.
	Key string `json:"key,omitempty"`
	// CC names the job's concurrency group; CCLimit is how many of that
	// group's jobs may run at once (0 = no limit).
	CC      string `json:"cc,omitempty"`
	CCLimit int    `json:"cc_limit,omitempty"`
	// DueAt is when a delayed job fires (millisecond precision); zero for a
	// cron job.
	DueAt time.Time `json:"due_at,omitzero"`
	// ReplacedBy is the id of the job that replaced this one (PUT by key).
	ReplacedBy string `json:"replaced_by,omitempty"`
	// Digest identifies the request that made the job (jobapi.Build): a
	// repeat under the job's key is the same job only with the same
	// digest. "" = not known (taken as the same). It covers the headers'
	// values, so answers leave it out (Redacted).
	Digest string `json:"digest,omitempty"`
	// Headers are sent on a GET or POST job's callback
	// (ValidateJobHeaders). They are write-only: answers show their names
	// only (Redacted, RedactedHeaders).
	Headers map[string]string `json:"headers,omitempty"`
}

// JobTargetID is the ledger target of a job's runs.
const JobTargetID = "job"

// Target returns the inline target that delivers j (state running).
func (j *Job) Target() *Target {
	t := &Target{ID: JobTargetID, Kind: j.Method.Kind(), State: TargetRunning}
	switch j.Method {
	case JobGET:
		u := j.Name
		if j.Body != "" {
			sep := "?"
			if strings.Contains(u, "?") {
				sep = "&"
			}
			u += sep + strings.TrimPrefix(j.Body, "?")
		}
		t.HTTP = &HTTPTarget{Method: "GET", URL: u, Raw: true, Headers: maps.Clone(j.Headers)}
	case JobPOST:
		t.HTTP = &HTTPTarget{Method: "POST", URL: j.Name, Body: j.Body, Raw: true, Headers: maps.Clone(j.Headers)}
	case JobEXEC:
		t.Exec = &ExecTarget{Command: j.Name}
	case JobKafka:
		t.Kafka = &KafkaTarget{Topic: j.Name, Value: j.Body, Raw: true}
	}
	return t
}

// Validate checks j's own fields (not what depends on config, such as
// whether an EXEC command is listed or a callback host allowed).
func (j *Job) Validate() error {
	if j.Method.Kind() == "" {
		return Invalid("method", "must be GET, POST, EXEC, MAIL_TO, SMS or KAFKA; got %q", Truncate(string(j.Method), 40))
	}
	if j.Name == "" {
		return Invalid("name", "required (%s)", j.nameMeaning())
	}
	if len(j.Name) > MaxJobName {
		return Invalid("name", "at most %d bytes", MaxJobName)
	}
	if len(j.Body) > MaxJobBody {
		return Invalid("params", "at most %d bytes", MaxJobBody)
	}
	switch j.Method {
	case JobGET, JobPOST:
		u, err := url.Parse(j.Name)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return Invalid("name", "must be an http:// or https:// URL for %s", j.Method)
		}
		if j.Method == JobGET {
			if _, err := url.ParseQuery(strings.TrimPrefix(j.Body, "?")); err != nil {
				return Invalid("params", "must be a query string for GET: %v", err)
			}
		}
	case JobKafka:
		if err := (&KafkaTarget{Topic: j.Name}).validate(); err != nil {
			return Invalid("name", "must be a topic: 1 to 249 of letters, digits, '.', '_' and '-'")
		}
	}
	if j.Key != "" {
		if err := CheckKey("key", j.Key, MaxJobKey); err != nil {
			return err
		}
	}
	if len(j.CC) > MaxJobCC {
		return Invalid("cc", "at most %d bytes", MaxJobCC)
	}
	if j.CCLimit < 0 || j.CCLimit > MaxJobCCLimit {
		return Invalid("cc", "limit must be 0 to %d", MaxJobCCLimit)
	}
	return ValidateJobHeaders(j.Method, j.Headers)
}

func (j *Job) nameMeaning() string {
	switch j.Method {
	case JobGET, JobPOST:
		return "the URL"
	case JobEXEC:
		return "a command listed in config exec.commands"
	case JobMailTo:
		return "the recipient's address"
	case JobSMS:
		return "the recipient's E.164 number"
	case JobKafka:
		return "the topic"
	}
	return "what the method acts on"
}

// DeriveJobState returns the state of a job from its task and its newest
// run (nil when it has none).
func DeriveJobState(t *Task, latest *Run) JobState {
	switch {
	case t.State == StateClosed:
		// Cancelled before it fired, or a cron job stopped for good; a
		// delayed job replaced after it fired keeps its outcome.
		if latest == nil || latest.State == RunCancelled || t.CronPara != "" {
			return JobCancelled
		}
	case t.State == StateStopped && (latest == nil || latest.State.Final()):
		return JobBlocked
	}
	if latest == nil {
		return JobPending
	}
	switch latest.State {
	case RunPending, RunRunning, RunAccepted:
		if latest.TriggerType == TriggerBackfill {
			return JobBackfilling
		}
		return JobRunning
	case RunFailed:
		return JobFailed
	case RunDone:
		if t.IsDone == 1 || t.CronPara == "" {
			return JobDone
		}
		return JobPending // a cron job waits for its next fire
	case RunCancelled:
		return JobCancelled
	case RunDead, RunRejected, RunTimeout, RunSkipped:
		if t.IsDone == 1 || t.CronPara == "" {
			return JobDead
		}
		return JobPending
	}
	return JobPending
}

// String describes j briefly, for logs.
func (j *Job) String() string { return fmt.Sprintf("%s %s", j.Method, Truncate(j.Name, 80)) }
