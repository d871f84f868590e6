package jobapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/url"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"cronsheet/api/httpapi/jsontype"
	"cronsheet/mapping/schedule"
	"cronsheet/task"
)

// Request is one job submission. HTTP, WebSocket and Kafka intake all
// decode it with ParseRequest and build it with Build, so every channel
// takes the same bodies and gives the same errors. The poulpe design's body
// (method, delay, name, params, cc, wait) is accepted as it is.
type Request struct {
	// Method is GET, POST, EXEC, MAIL_TO, SMS or KAFKA.
	Method string `json:"method"`
	// Name is what the method acts on: a URL, a command, a recipient, a
	// topic.
	Name string `json:"name"`
	// Params is a text (the poulpe form: a query string for GET, a body
	// for POST, space-separated arguments for EXEC, a JSON text for
	// MAIL_TO, the text of an SMS, a Kafka value) or an object of
	// strings (named params: query parameters, exec argument slots).
	Params json.RawMessage `json:"params,omitempty"`
	// Exactly one of Delay (seconds; 0 = now), At (RFC 3339) and Cron
	// (the schedule language) says when; none means now.
	Delay *float64 `json:"delay,omitempty"`
	At    string   `json:"at,omitempty"`
	Cron  string   `json:"cron,omitempty"`
	// Key is an idempotency and upsert key.
	Key string `json:"key,omitempty"`
	// CC is a concurrency group: the poulpe form "1 3" (a group of that
	// many workers: at most 2 at once here), or {"group": "g", "limit": 2}.
	CC json.RawMessage `json:"cc,omitempty"`
	// MaxRetries defaults to task.DefaultJobRetry.
	MaxRetries *int `json:"max_retries,omitempty"`
	// TTL is the deadline of one attempt, in seconds (default 60).
	TTL *float64 `json:"ttl,omitempty"`
	// Wait, in seconds, makes the submission block for the result.
	Wait *float64 `json:"wait,omitempty"`
	// Overlap is what a cron job's fire does while its previous run is
	// still in progress: allow, skip (the default) or queue.
	Overlap string `json:"overlap,omitempty"`
	// Headers are sent on a GET or POST job's callback, e.g.
	// {"Authorization": "Bearer …"} (task.ValidateJobHeaders). They are
	// write-only: every answer shows their names with "***".
	Headers map[string]string `json:"headers,omitempty"`
}

// MaxRequestBytes bounds one request's JSON; MaxBatch bounds a batch.
const (
	MaxRequestBytes = 256 << 10
	MaxBatch        = 1000
)

// ParseRequest decodes one JSON request strictly: unknown fields, trailing
// data and wrong types are *task.ValidationError naming the field.
func ParseRequest(data []byte) (Request, error) {
	var r Request
	if err := decodeStrict(data, &r); err != nil {
		return Request{}, err
	}
	return r, nil
}

// ParseBatch decodes a batch: a JSON array of requests, or {"jobs": [...]}.
func ParseBatch(data []byte) ([]Request, error) {
	trimmed := bytes.TrimSpace(bytes.TrimPrefix(data, []byte(jsontype.BOM)))
	var raw []json.RawMessage
	if len(trimmed) > 0 && trimmed[0] == '{' {
		var w struct {
			Jobs []json.RawMessage `json:"jobs"`
		}
		if err := decodeStrict(trimmed, &w); err != nil {
			return nil, err
		}
		raw = w.Jobs
	} else if err := decodeStrict(trimmed, &raw); err != nil {
		var ve *task.ValidationError
		if errors.As(err, &ve) && strings.HasPrefix(ve.Field, "[") {
			return nil, task.Invalid("jobs"+ve.Field, "%s", ve.Msg) // as the {"jobs": [...]} form names it
		}
		return nil, err
	}
	if len(raw) == 0 {
		return nil, task.Invalid("jobs", "a batch needs at least one job")
	}
	if len(raw) > MaxBatch {
		return nil, task.Invalid("jobs", "at most %d jobs per batch; got %d", MaxBatch, len(raw))
	}
	out := make([]Request, len(raw))
	for i, r := range raw {
		req, err := ParseRequest(r)
		if err != nil {
			var ve *task.ValidationError
			if errors.As(err, &ve) {
				return nil, task.Invalid(fmt.Sprintf("jobs[%d].%s", i, ve.Field), "%s", ve.Msg)
			}
			return nil, err
		}
		out[i] = req
	}
	return out, nil
}

// decodeStrict decodes one JSON value into v (a pointer), refusing unknown
// fields and trailing data, with errors that name the field. Where a
// number is meant, a text holding one is alike ("60" and 60).
func decodeStrict(data []byte, v any) error {
	if len(data) > MaxRequestBytes {
		return task.Invalid("body", "at most %d bytes", MaxRequestBytes)
	}
	// The text rule of every door (jsontype.Checked): NUL and other
	// control characters nowhere, line breaks only in free text (params),
	// no member named twice; a byte-order mark is skipped.
	data, err := jsontype.Checked(data)
	if te := jsontype.AsText(err); te != nil {
		return task.Invalid(te.Field, "%s", te.Msg)
	}
	// Most bodies decode as they are. One that does holds no text where a
	// number is meant (decoding such a text into a number fails), so
	// jsontype.NumbersFromText would return it unchanged: the value is the
	// same, without NumbersFromText's decode and encode of every body.
	if decodeOnce(data, v) == nil {
		return nil
	}
	reflect.ValueOf(v).Elem().SetZero()
	return decodeOnce(jsontype.NumbersFromText(data, reflect.TypeOf(v)), v)
}

// decodeOnce is decodeStrict of data as it is.
func decodeOnce(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		var se *json.SyntaxError
		switch {
		case errors.As(err, &te):
			return task.Invalid(cmpOr(te.Field, "body"), "%s", jsontype.Message(te))
		case errors.As(err, &se):
			return task.Invalid("body", "not valid JSON at byte %d: %v", se.Offset, se)
		case errors.Is(err, io.EOF):
			return task.Invalid("body", "empty; want a JSON object")
		case strings.HasPrefix(err.Error(), "json: unknown field "):
			return task.Invalid(strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`), "unknown field")
		}
		return task.Invalid("body", "%v", err)
	}
	if dec.More() {
		return task.Invalid("body", "trailing data after the JSON value")
	}
	return nil
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Built is a request made into a job: its task (not yet stored) and how
// long the caller wants to wait for the result.
type Built struct {
	Task *task.Task
	Wait time.Duration
}

// Build validates r and makes its task: a job of scenario task.JobScenario
// with id id, due at now+delay (or at At, or on Cron). Errors are
// *task.ValidationError naming the request's field.
func Build(r Request, id string, now time.Time) (Built, error) {
	j := &task.Job{Method: task.JobMethod(strings.ToUpper(strings.TrimSpace(r.Method))), Name: strings.TrimSpace(r.Name), Key: r.Key}
	if r.Method == "" {
		return Built{}, task.Invalid("method", "required: GET, POST, EXEC, MAIL_TO, SMS or KAFKA")
	}
	body, params, err := readParams(r.Params)
	if err != nil {
		return Built{}, err
	}
	switch m := task.JobMethod(strings.ToUpper(strings.TrimSpace(r.Method))); {
	case params != nil && m == task.JobGET:
		q := url.Values{}
		for k, v := range params {
			q.Set(k, v)
		}
		body = q.Encode()
	case params != nil && m == task.JobEXEC:
		body = "" // named params fill the command's argument slots
	}
	j.Body = body
	j.Headers = maps.Clone(r.Headers)
	if j.CC, j.CCLimit, err = readCC(r.CC); err != nil {
		return Built{}, err
	}
	if err := j.Validate(); err != nil {
		return Built{}, err
	}
	if j.Method == task.JobEXEC && body != "" {
		// The poulpe form: space-separated arguments fill {{arg1}}, {{arg2}}…
		// and {{args}} holds them all, each one argv slot of the command.
		if params == nil {
			params = map[string]string{}
		}
		params["args"] = body
		for i, a := range strings.Fields(body) {
			params["arg"+strconv.Itoa(i+1)] = a
		}
	}
	var text string
	if j.Method == task.JobMailTo || j.Method == task.JobSMS {
		if params, text, err = message(j, params); err != nil {
			return Built{}, err
		}
	}
	if err := task.ValidParams("params", params); err != nil {
		return Built{}, err
	}
	t := &task.Task{
		TaskID: id, Scenario: task.JobScenario, TaskType: j.Method.Kind(), Params: params, TaskPara: text,
		ExecuteType: task.Once, TTL: task.DefaultTTL, MaxRetries: task.DefaultJobRetry,
		Misfire: task.MisfireOnce, State: task.StateRunning, IsEnable: 1, Anchor: now.UTC().Truncate(time.Millisecond),
		Job: j,
	}
	if err := readWhen(r, t, now); err != nil {
		return Built{}, err
	}
	t.Overlap = task.Overlap(r.Overlap)
	if !t.Overlap.Valid() {
		return Built{}, task.Invalid("overlap", "%q is not allow, skip or queue", r.Overlap)
	}
	if r.MaxRetries != nil {
		if *r.MaxRetries < 0 || *r.MaxRetries > task.MaxRetriesCap {
			return Built{}, task.Invalid("max_retries", "must be 0 to %d", task.MaxRetriesCap)
		}
		t.MaxRetries = *r.MaxRetries
	}
	if r.TTL != nil {
		d, err := seconds("ttl", *r.TTL, 0.001, task.MaxTTL.Seconds())
		if err != nil {
			return Built{}, err
		}
		t.TTL = d
	}
	wait, err := readWait(r.Wait)
	if err != nil {
		return Built{}, err
	}
	j.Digest = digest(r, t)
	return Built{Task: t, Wait: wait}, nil
}

// readWait reads a submission's wait (nil: none).
func readWait(v *float64) (time.Duration, error) {
	if v == nil {
		return 0, nil
	}
	return WaitSeconds(*v)
}

// readWhen sets the job's due time or cron schedule.
func readWhen(r Request, t *task.Task, now time.Time) error {
	n := 0
	for _, set := range []bool{r.Delay != nil, r.At != "", r.Cron != ""} {
		if set {
			n++
		}
	}
	if n > 1 {
		return task.Invalid("delay", "give one of delay, at and cron")
	}
	switch {
	case r.Cron != "":
		s, err := schedule.Parse(r.Cron, "UTC")
		if err != nil {
			return task.Invalid("cron", "%v", err)
		}
		if s.IsOnce() {
			return task.Invalid("cron", "%q fires once; use delay or at for a one-off job", r.Cron)
		}
		t.CronPara, t.TZ = s.String(), s.Location().String()
		t.ExecuteType = task.Periodic
		t.Anchor = t.Anchor.Truncate(time.Second).Add(time.Second) // whole seconds, never early
	case r.At != "":
		at, err := time.Parse(time.RFC3339Nano, r.At)
		if err != nil {
			return task.Invalid("at", "must be an RFC 3339 time, e.g. 2026-12-01T15:00:00Z")
		}
		if err := task.CheckInstant("at", at); err != nil {
			return err
		}
		if at.After(now.Add(task.MaxJobDelay * time.Second)) {
			return task.Invalid("at", "at most %d days ahead", task.MaxJobDelay/86400)
		}
		if past := now.Sub(at); past > task.MaxJobPast*time.Second {
			return task.Invalid("at", "%s is %s in the past; give a time at most %d hours ago (it runs at once), "+
				"or leave at out to run now", at.UTC().Format(time.RFC3339Nano), ago(past), task.MaxJobPast/3600)
		}
		// A time just past (a client's clock behind, a request slow to
		// arrive) means now: the job is due at once, not a missed slot.
		t.Job.DueAt = later(at, now).UTC().Truncate(time.Millisecond)
	default:
		delay := 0.0
		if r.Delay != nil {
			delay = *r.Delay
		}
		d, err := seconds("delay", delay, 0, task.MaxJobDelay)
		if err != nil {
			return err
		}
		t.Job.DueAt = now.Add(d).UTC().Truncate(time.Millisecond)
	}
	return nil
}

// WaitSeconds reads a wait of v seconds ("wait" of a submission, ?wait=
// of a read): 0 to task.MaxJobWait, below the HTTP server's write
// timeout so that the answer always gets out. A longer wait is refused
// rather than cut short: the client polls again instead.
func WaitSeconds(v float64) (time.Duration, error) {
	d, err := seconds("wait", v, 0, task.MaxJobWait)
	if err != nil {
		return 0, task.Invalid("wait", "must be 0 to %d seconds (for longer, wait again); got %s",
			task.MaxJobWait, plainNumber(v))
	}
	return d, nil
}

// later returns the later of a and b.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// ago says d, a time in the past, in whole hours or days: "3 hours",
// "20435 days".
func ago(d time.Duration) string {
	if h := int64(d / time.Hour); h < 48 {
		return strconv.FormatInt(h, 10) + " hours"
	}
	return strconv.FormatInt(int64(d/(24*time.Hour)), 10) + " days"
}

// seconds reads a number of seconds within [lo, hi]. The error writes the
// numbers out in full, with the upper bound in days, hours or minutes when
// it is a whole number of them: "must be 0 to 31622400 seconds (366 days);
// got -1".
func seconds(field string, v, lo, hi float64) (time.Duration, error) {
	if math.IsNaN(v) || v < lo || v > hi {
		return 0, task.Invalid(field, "must be %s to %s seconds%s; got %s",
			plainNumber(lo), plainNumber(hi), inUnits(hi), plainNumber(v))
	}
	return time.Duration(v * float64(time.Second)), nil
}

// plainNumber writes v without an exponent: 31622400, 0.001.
func plainNumber(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// inUnits says secs in the largest whole unit, " (366 days)", or "" when
// it is less than a minute or not a whole number of minutes.
func inUnits(secs float64) string {
	for _, u := range []struct {
		secs       float64
		one, other string
	}{{86400, "day", "days"}, {3600, "hour", "hours"}, {60, "minute", "minutes"}} {
		if n := secs / u.secs; n >= 1 && n == math.Trunc(n) {
			name := u.other
			if n == 1 {
				name = u.one
			}
			return fmt.Sprintf(" (%s %s)", plainNumber(n), name)
		}
	}
	return ""
}

// readParams reads params: a text, or an object of strings and scalars
// (numbers and booleans are kept as their JSON text).
func readParams(raw json.RawMessage) (body string, params map[string]string, err error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil, nil
	}
	switch raw[0] {
	case '"':
		if err := json.Unmarshal(raw, &body); err != nil {
			return "", nil, task.Invalid("params", "bad string: %v", err)
		}
		return body, nil, nil
	case '{':
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil {
			return "", nil, task.Invalid("params", "bad object: %v", err)
		}
		params = make(map[string]string, len(obj))
		keys := make([]string, 0, len(obj))
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			v := bytes.TrimSpace(obj[k])
			var s string
			switch {
			case len(v) > 0 && v[0] == '"':
				_ = json.Unmarshal(v, &s)
			case len(v) > 0 && (v[0] == '{' || v[0] == '['):
				return "", nil, task.Invalid("params."+k, "must be a string, number or boolean")
			default:
				s = string(v)
			}
			params[k] = s
		}
		// The object is also the body of a POST or a Kafka value.
		return string(raw), params, nil
	}
	return "", nil, task.Invalid("params", "must be a text or an object")
}

// readCC reads the concurrency group: "1 3" (poulpe: that set of worker
// numbers, so a limit of how many there are) or {"group","limit"}.
func readCC(raw json.RawMessage) (group string, limit int, err error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", 0, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", 0, task.Invalid("cc", "bad string: %v", err)
		}
		workers := strings.Fields(s)
		for _, w := range workers {
			if n, err := strconv.Atoi(w); err != nil || n < 0 {
				return "", 0, task.Invalid("cc", "poulpe form is worker numbers separated by spaces, e.g. \"1 3\"; got %q", task.Truncate(s, 40))
			}
		}
		if len(workers) == 0 {
			return "", 0, nil
		}
		return "workers " + strings.Join(workers, " "), len(workers), nil
	}
	var obj struct {
		Group string `json:"group"`
		Limit int    `json:"limit"`
	}
	if err := decodeStrict(raw, &obj); err != nil {
		var ve *task.ValidationError
		if errors.As(err, &ve) {
			return "", 0, task.Invalid("cc."+ve.Field, "%s", ve.Msg)
		}
		return "", 0, err
	}
	if obj.Group == "" {
		return "", 0, task.Invalid("cc.group", "required")
	}
	if obj.Limit < 1 || obj.Limit > task.MaxJobCCLimit {
		return "", 0, task.Invalid("cc.limit", "must be 1 to %d", task.MaxJobCCLimit)
	}
	return obj.Group, obj.Limit, nil
}

// message reads a MAIL_TO or SMS job: Name is the recipient; Body is the
// text, or for MAIL_TO the JSON {"subject", "body"}. It returns the params
// (with to and title) and the text.
func message(j *task.Job, params map[string]string) (map[string]string, string, error) {
	if params == nil {
		params = map[string]string{}
	}
	params[task.ParamTo] = j.Name
	text := j.Body
	if j.Method == task.JobMailTo {
		if err := task.CheckEmail(j.Name); err != nil {
			return nil, "", task.Invalid("name", "%v", err)
		}
		if strings.HasPrefix(strings.TrimSpace(text), "{") {
			var m struct {
				Subject string `json:"subject"`
				Body    string `json:"body"`
			}
			if err := json.Unmarshal([]byte(text), &m); err != nil {
				var te *json.UnmarshalTypeError
				if errors.As(err, &te) {
					return nil, "", task.Invalid("params", "MAIL_TO params are {\"subject\": …, \"body\": …}: %s %s",
						cmpOr(te.Field, "params"), jsontype.Message(te))
				}
				return nil, "", task.Invalid("params", "MAIL_TO params are {\"subject\": …, \"body\": …}: %v", err)
			}
			params[task.ParamTitle] = m.Subject
			text = m.Body
		}
		return params, text, nil
	}
	if err := task.CheckPhone(j.Name); err != nil {
		return nil, "", task.Invalid("name", "%v", err)
	}
	if text == "" {
		return nil, "", task.Invalid("params", "the SMS text is required")
	}
	return params, text, nil
}
