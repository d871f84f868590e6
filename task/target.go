package task

import (
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// More delivery channels: the kinds a Target can have besides email and
// SMS. A task without targets delivers through its own TaskType channel
// (email, sms or outbox); a task with targets delivers to each of them
// through the executor of the target's kind.
const (
	ChannelHTTP    Channel = "http"
	ChannelExec    Channel = "exec"
	ChannelKafka   Channel = "kafka"
	ChannelBuiltin Channel = "builtin"
)

// ValidKind reports whether c is a kind a Target may have.
func (c Channel) ValidKind() bool {
	switch c {
	case ChannelEmail, ChannelSMS, ChannelHTTP, ChannelExec, ChannelKafka, ChannelBuiltin:
		return true
	}
	return false
}

// TargetState is a target's state (design note 001, docs/SEEDS.md).
type TargetState string

// Target states.
const (
	// TargetPreset refuses every trigger: a target being set up.
	TargetPreset TargetState = "preset"
	// TargetRunning accepts every trigger.
	TargetRunning TargetState = "running"
	// TargetPaused refuses scheduled fires and accepts manual ones.
	TargetPaused TargetState = "paused"
)

// Valid reports whether s is a known target state.
func (s TargetState) Valid() bool {
	return s == TargetPreset || s == TargetRunning || s == TargetPaused
}

// Valid reports whether s is a known task state.
func (s State) Valid() bool {
	return s == StateRunning || s == StateStopped || s == StateClosed
}

// Scheduled reports whether the trigger came from the schedule (a slot or a
// missed slot) rather than from a person or a program.
func (tt TriggerType) Scheduled() bool {
	return tt == TriggerSchedule || tt == TriggerMisfire
}

// Admit decides whether a trigger of type tt, of a task in state ts, reaches
// a target in state gs. It returns "" when it does, else the reason it is
// rejected, as recorded on the run. The task's state is checked first:
//
//	task running: every trigger;  stopped: not scheduled ones;  closed: none.
//	target running: every trigger; paused: not scheduled ones; preset: none.
func Admit(ts State, gs TargetState, tt TriggerType) (reason string) {
	switch {
	case ts == StateClosed:
		return "task is closed"
	case ts == StateStopped && tt.Scheduled():
		return "task is stopped: it fires only by hand"
	case ts != StateRunning && ts != StateStopped:
		return fmt.Sprintf("task state %q is unknown", ts)
	case gs == TargetPreset:
		return "target is preset: it accepts no trigger yet"
	case gs == TargetPaused && tt.Scheduled():
		return "target is paused: it accepts manual triggers only"
	case gs != TargetRunning && gs != TargetPaused:
		return fmt.Sprintf("target state %q is unknown", gs)
	}
	return ""
}

// BuiltinAction is what a builtin target does.
type BuiltinAction string

// Built-in actions.
const (
	// BuiltinCleanupRuns deletes finished runs by age and by count per task.
	BuiltinCleanupRuns BuiltinAction = "cleanup_runs"
	// BuiltinPauseTask sets the listed tasks to stopped.
	BuiltinPauseTask BuiltinAction = "pause_task"
	// BuiltinResumeTask sets the listed tasks to running.
	BuiltinResumeTask BuiltinAction = "resume_task"
	// BuiltinTriggerTask triggers the listed tasks (trigger type flow).
	BuiltinTriggerTask BuiltinAction = "trigger_task"
	// BuiltinStartFlow triggers the listed flows (a new execution each,
	// with the fire's params).
	BuiltinStartFlow BuiltinAction = "start_flow"
	// BuiltinStopFlow stops every running execution of the listed flows.
	BuiltinStopFlow BuiltinAction = "stop_flow"
)

// Valid reports whether a is a known action.
func (a BuiltinAction) Valid() bool {
	switch a {
	case BuiltinCleanupRuns, BuiltinPauseTask, BuiltinResumeTask, BuiltinTriggerTask, BuiltinStartFlow, BuiltinStopFlow:
		return true
	}
	return false
}

// Bounds on target fields.
const (
	MaxTargetID          = 64
	MaxTargetName        = 200
	MaxTargetsPerTask    = 16
	MaxHeaders           = 32
	MaxTemplate          = 16 << 10
	MaxURL               = 2048
	MaxFeedbackTimeout   = 7 * 24 * 3600 // seconds
	MaxHTTPTimeout       = 3600          // seconds
	MaxBuiltinTasks      = 100
	MaxCleanupKeepCount  = 1_000_000
	MaxCleanupKeepAge    = 10 * 365 * 24 * 3600 // seconds
	DefaultHTTPTimeoutS  = 30
	DefaultFeedbackLimit = 50 // feedback reports kept per run
)

// Target is where a task's fires go (design note 001, docs/SEEDS.md): an
// HTTP endpoint, an allow-listed command, a Kafka topic, an email or SMS
// channel, or a built-in action. A task binds to several targets and a
// target serves several tasks.
type Target struct {
	ID    string      `json:"id"`
	Name  string      `json:"name,omitempty"`
	Kind  Channel     `json:"kind"`
	State TargetState `json:"state"`
	// FeedbackTimeout, in seconds, makes runs that this target accepted wait
	// for its feedback (POST /api/v1/runs/{trigger_id}/feedback): they stay
	// accepted until a final report arrives, or become timeout when none has
	// by then. Zero means the target's answer is final: accepted is done.
	FeedbackTimeout int `json:"feedback_timeout,omitempty"`

	HTTP    *HTTPTarget    `json:"http,omitempty"`
	Exec    *ExecTarget    `json:"exec,omitempty"`
	Kafka   *KafkaTarget   `json:"kafka,omitempty"`
	Builtin *BuiltinTarget `json:"builtin,omitempty"`
	// Labels are free key/value pairs for the people and tools that manage
	// the target (cronsheet apply marks its targets with managed_by); the
	// engine never reads them. See ValidateLabels for their bounds.
	Labels map[string]string `json:"labels,omitempty"`
	// Probe, for an HTTP target, asks for a periodic probe of it; its
	// answers go to the target's health (TargetHealth).
	Probe *TargetProbe `json:"probe,omitempty"`

	Version   int64     `json:"version"`
	CreatedAt time.Time `json:"created_at,omitzero"`
	UpdatedAt time.Time `json:"updated_at,omitzero"`
}

// HTTPTarget is an HTTP callback. URL, header values and Body are templates
// (see Expand); without a Body a POST sends the default JSON document of
// the trigger and a GET sends the params as query parameters.
type HTTPTarget struct {
	Method  string            `json:"method"` // GET or POST
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers,omitempty"`
	Body    string            `json:"body,omitempty"`
	// Raw sends URL and Body as they are, without templates (jobs' targets:
	// their text is the caller's, braces included).
	Raw bool `json:"raw,omitempty"`
	// Timeout in seconds for one request (default 30); the task's ttl
	// bounds it too.
	Timeout int `json:"timeout,omitempty"`
}

// ExecTarget runs a command that the config lists by name; its argv, with
// the slots params may fill, is declared there, never here.
type ExecTarget struct {
	Command string `json:"command"`
}

// KafkaTarget produces one record per trigger. Key and Value are templates;
// without a Value the record is the default JSON document of the trigger.
type KafkaTarget struct {
	Topic string `json:"topic"`
	Key   string `json:"key,omitempty"`
	Value string `json:"value,omitempty"`
	// Raw sends Key and Value as they are, without templates.
	Raw bool `json:"raw,omitempty"`
}

// BuiltinTarget is an action of cronsheet itself.
type BuiltinTarget struct {
	Action BuiltinAction `json:"action"`
	// Tasks are the task ids that pause_task, resume_task and trigger_task
	// act on.
	Tasks []string `json:"tasks,omitempty"`
	// Flows are the flow ids that start_flow and stop_flow act on.
	Flows []string `json:"flows,omitempty"`
	// KeepAge (seconds) and KeepCount bound what cleanup_runs keeps: finished
	// runs older than KeepAge go, and beyond the newest KeepCount of each
	// task. Zero disables that rule; unfinished runs are never deleted.
	KeepAge   int `json:"keep_age,omitempty"`
	KeepCount int `json:"keep_count,omitempty"`
}

var targetIDRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// ValidTargetID checks a target id: letters, digits, '_', '.', '-', at most
// MaxTargetID bytes, and not a channel name (those name a task's own
// channel in the ledger).
func ValidTargetID(id string) error {
	switch {
	case id == "":
		return Invalid("id", "required")
	case len(id) > MaxTargetID:
		return Invalid("id", "at most %d characters", MaxTargetID)
	case !targetIDRe.MatchString(id):
		return Invalid("id", "use letters, digits, '_', '.' and '-', starting with a letter or digit")
	case Channel(id).Valid() || Channel(id).ValidKind():
		return Invalid("id", "%q is reserved (a channel name)", id)
	}
	return nil
}

// Validate checks t and returns the first problem as a *ValidationError.
// It does not check what depends on configuration (exec command names,
// callback host lists): the services that know the config do.
func (t *Target) Validate() error {
	if err := ValidTargetID(t.ID); err != nil {
		return err
	}
	if len(t.Name) > MaxTargetName {
		return Invalid("name", "at most %d characters", MaxTargetName)
	}
	if err := ValidateLabels(t.Labels); err != nil {
		return err
	}
	if !t.Kind.ValidKind() {
		return Invalid("kind", "must be one of email, sms, http, exec, kafka, builtin; got %q", t.Kind)
	}
	if !t.State.Valid() {
		return Invalid("state", "must be preset, running or paused; got %q", t.State)
	}
	if t.FeedbackTimeout < 0 || t.FeedbackTimeout > MaxFeedbackTimeout {
		return Invalid("feedback_timeout", "must be 0 to %d seconds", MaxFeedbackTimeout)
	}
	want := map[Channel]bool{ChannelHTTP: t.HTTP != nil, ChannelExec: t.Exec != nil,
		ChannelKafka: t.Kafka != nil, ChannelBuiltin: t.Builtin != nil}
	for kind, set := range want {
		switch {
		case kind == t.Kind && !set:
			return Invalid(string(kind), "required for a target of kind %s", kind)
		case kind != t.Kind && set:
			return Invalid(string(kind), "only allowed for a target of kind %s", kind)
		}
	}
	if t.Probe != nil {
		if err := t.validateProbe(); err != nil {
			return err
		}
	}
	switch t.Kind {
	case ChannelHTTP:
		return t.HTTP.validate()
	case ChannelExec:
		if t.Exec.Command == "" {
			return Invalid("exec.command", "required: the name of a command listed in config")
		}
	case ChannelKafka:
		return t.Kafka.validate()
	case ChannelBuiltin:
		return t.Builtin.validate()
	}
	return nil
}

func (h *HTTPTarget) validate() error {
	if h.Method != "GET" && h.Method != "POST" {
		return Invalid("http.method", "must be GET or POST; got %q", h.Method)
	}
	if h.URL == "" {
		return Invalid("http.url", "required")
	}
	if len(h.URL) > MaxURL {
		return Invalid("http.url", "at most %d characters", MaxURL)
	}
	if err := CheckTemplate(h.URL); err != nil {
		return Invalid("http.url", "%v", err)
	}
	// The scheme and host are fixed: params may fill only path and query.
	head, templated := h.URL, false
	if i := strings.Index(head, "{{"); i >= 0 {
		head, templated = head[:i], true
	}
	u, err := url.Parse(head)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return Invalid("http.url", "must start with http:// or https:// and a host, with no template before the path")
	}
	if templated && u.Path == "" && u.RawQuery == "" && !strings.HasSuffix(head, "?") {
		return Invalid("http.url", "a template may only follow the host's '/'")
	}
	if len(h.Headers) > MaxHeaders {
		return Invalid("http.headers", "at most %d headers", MaxHeaders)
	}
	for k, v := range h.Headers {
		if k == "" || len(k) > MaxParamKey || strings.ContainsAny(k, " :\r\n") {
			return Invalid("http.headers", "bad header name %q", k)
		}
		if len(v) > MaxParamValue || strings.ContainsAny(v, "\r\n") {
			return Invalid("http.headers."+k, "at most %d bytes, no line breaks", MaxParamValue)
		}
		if err := CheckTemplate(v); err != nil {
			return Invalid("http.headers."+k, "%v", err)
		}
	}
	if len(h.Body) > MaxTemplate {
		return Invalid("http.body", "at most %d bytes", MaxTemplate)
	}
	if err := CheckTemplate(h.Body); err != nil {
		return Invalid("http.body", "%v", err)
	}
	if h.Body != "" && h.Method == "GET" {
		return Invalid("http.body", "a GET has no body")
	}
	if h.Timeout < 0 || h.Timeout > MaxHTTPTimeout {
		return Invalid("http.timeout", "must be 0 to %d seconds", MaxHTTPTimeout)
	}
	return nil
}

func (k *KafkaTarget) validate() error {
	if k.Topic == "" || len(k.Topic) > 249 || strings.ContainsFunc(k.Topic, func(r rune) bool {
		return !(r == '.' || r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) {
		return Invalid("kafka.topic", "required: 1 to 249 of letters, digits, '.', '_' and '-'")
	}
	for field, s := range map[string]string{"kafka.key": k.Key, "kafka.value": k.Value} {
		if len(s) > MaxTemplate {
			return Invalid(field, "at most %d bytes", MaxTemplate)
		}
		if err := CheckTemplate(s); err != nil {
			return Invalid(field, "%v", err)
		}
	}
	return nil
}

func (b *BuiltinTarget) validate() error {
	if !b.Action.Valid() {
		return Invalid("builtin.action", "must be cleanup_runs, pause_task, resume_task, trigger_task, start_flow or stop_flow; got %q", b.Action)
	}
	if b.Action == BuiltinStartFlow || b.Action == BuiltinStopFlow {
		return b.validateFlows()
	}
	if len(b.Flows) > 0 {
		return Invalid("builtin.flows", "flows belong to start_flow and stop_flow")
	}
	if len(b.Tasks) > MaxBuiltinTasks {
		return Invalid("builtin.tasks", "at most %d tasks", MaxBuiltinTasks)
	}
	for _, id := range b.Tasks {
		if id == "" || len(id) > 200 {
			return Invalid("builtin.tasks", "task ids are 1 to 200 characters")
		}
	}
	switch b.Action {
	case BuiltinCleanupRuns:
		if b.KeepAge < 0 || b.KeepAge > MaxCleanupKeepAge {
			return Invalid("builtin.keep_age", "must be 0 to %d seconds", MaxCleanupKeepAge)
		}
		if b.KeepCount < 0 || b.KeepCount > MaxCleanupKeepCount {
			return Invalid("builtin.keep_count", "must be 0 to %d", MaxCleanupKeepCount)
		}
		if b.KeepAge == 0 && b.KeepCount == 0 {
			return Invalid("builtin", "cleanup_runs needs keep_age or keep_count")
		}
		if len(b.Tasks) > 0 {
			return Invalid("builtin.tasks", "cleanup_runs acts on every task; leave tasks empty")
		}
	default:
		if len(b.Tasks) == 0 {
			return Invalid("builtin.tasks", "%s needs at least one task id", b.Action)
		}
		if b.KeepAge != 0 || b.KeepCount != 0 {
			return Invalid("builtin", "keep_age and keep_count belong to cleanup_runs")
		}
	}
	return nil
}

// ValidParams checks a params map against the bounds: at most MaxParams
// keys, keys 1..MaxParamKey bytes, values at most MaxParamValue bytes, no
// NUL in a key or a value, and the params that become mail headers
// (ParamTo, ParamTitle: To and Subject) one line each, since a line
// break would start another header. field names the map in the error
// ("params").
func ValidParams(field string, p map[string]string) error {
	if len(p) > MaxParams {
		return Invalid(field, "at most %d keys; got %d", MaxParams, len(p))
	}
	for k, v := range p {
		if k == "" || len(k) > MaxParamKey {
			return Invalid(field, "keys are 1 to %d bytes; got %q", MaxParamKey, Truncate(k, 40))
		}
		if strings.ContainsRune(k, 0) {
			return Invalid(field, "key %q holds a NUL character", Truncate(k, 40))
		}
		if len(v) > MaxParamValue {
			return Invalid(field+"."+k, "at most %d bytes", MaxParamValue)
		}
		if strings.ContainsRune(v, 0) {
			return Invalid(field+"."+k, "holds a NUL character (\\0); remove it")
		}
		if (k == ParamTo || k == ParamTitle) && strings.ContainsAny(v, "\r\n") {
			return Invalid(field+"."+k, "must be a single line (it becomes a mail header)")
		}
	}
	return nil
}

// validateFlows checks a start_flow or stop_flow action.
func (b *BuiltinTarget) validateFlows() error {
	switch {
	case len(b.Flows) == 0:
		return Invalid("builtin.flows", "%s needs at least one flow id", b.Action)
	case len(b.Flows) > MaxBuiltinTasks:
		return Invalid("builtin.flows", "at most %d flows", MaxBuiltinTasks)
	case len(b.Tasks) > 0:
		return Invalid("builtin.tasks", "%s acts on flows; leave tasks empty", b.Action)
	case b.KeepAge != 0 || b.KeepCount != 0:
		return Invalid("builtin", "keep_age and keep_count belong to cleanup_runs")
	}
	for _, id := range b.Flows {
		if err := ValidTargetID(id); err != nil {
			return Invalid("builtin.flows", "%q: %s", Truncate(id, 40), err.(*ValidationError).Msg)
		}
	}
	return nil
}
