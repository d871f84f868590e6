package task

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"cronsheet/mapping/schedule"
)

// Outcome is how a flow step ended; it picks the step's edges.
type Outcome string

// Step outcomes.
const (
	OutcomeSuccess Outcome = "success"
	OutcomeFailure Outcome = "failure"
	OutcomeTimeout Outcome = "timeout"
	// OutcomeInterrupted marks a step run that was open when its
	// execution was stopped or cut; no edge takes it.
	OutcomeInterrupted Outcome = "interrupted"
)

// Outcomes lists every outcome, in the order edges are shown.
var Outcomes = []Outcome{OutcomeSuccess, OutcomeFailure, OutcomeTimeout}

// Valid reports whether o is a known outcome.
func (o Outcome) Valid() bool { return slices.Contains(Outcomes, o) }

// ResultMode says how a step's targets' runs make its result.
type ResultMode string

// Result modes.
const (
	// ResultAll: the step succeeds when every target's run succeeded.
	ResultAll ResultMode = "all"
	// ResultAny: the step succeeds when one target's run succeeded.
	ResultAny ResultMode = "any"
)

// ExecState is the state of a flow execution.
type ExecState string

// Execution states: running, then one final state.
const (
	ExecRunning     ExecState = "running"
	ExecSuccess     ExecState = "success"
	ExecFailure     ExecState = "failure"
	ExecTimeout     ExecState = "timeout"
	ExecInterrupted ExecState = "interrupted"
)

// Final reports whether the execution is over.
func (s ExecState) Final() bool { return s != ExecRunning && s != "" }

// Bounds on flows.
const (
	MaxFlowSteps       = 100
	MaxStepTargets     = 20
	MaxStepEdges       = 20 // next steps per outcome
	MaxFlowDescription = 1000
	DefaultMaxDepth    = 32 // step runs per execution
	MaxMaxDepth        = 10000
	MaxStepTimeout     = 7 * 24 * 3600 // seconds
	DefaultStepTimeout = 300           // seconds
	MaxPrevOutput      = 1 << 10       // bytes of {{prev.output}}
)

// Flow is a graph of steps joined by their outcomes (the task flows of
// design note 001, docs/SEEDS.md). Each trigger makes an Execution.
type Flow struct {
	ID          string `json:"id"`
	Description string `json:"description,omitempty"`
	// Start is the step an execution begins with; a flow without one
	// cannot be triggered.
	Start string  `json:"start"`
	Steps []*Step `json:"steps"`
	// MaxDepth bounds the step runs of one execution; 0 means
	// DefaultMaxDepth. A flow whose start reaches a cycle must declare it.
	MaxDepth int `json:"max_depth,omitempty"`
	// Schedule, when set, triggers the flow on it: the schedule language
	// of rows ("every 1h", "daily 02:00", "cron 0 0 9 * * 1-5", … with an
	// optional "tz ZONE" suffix), read in zone TZ (default UTC). It is
	// kept as written; a hidden task fires it (flows.ScheduleTaskID).
	Schedule string `json:"schedule,omitempty"`
	TZ       string `json:"tz,omitempty"`
	// Labels are free key/value pairs for the people and tools that manage
	// the flow (cronsheet apply marks its flows with managed_by); the
	// engine never reads them. See ValidateLabels for their bounds.
	Labels map[string]string `json:"labels,omitempty"`
	// State is idle, or running while an execution of the flow is
	// unfinished. The API fills it in when it reads the flow; it is never
	// stored.
	State     FlowState `json:"state,omitempty"`
	Version   int64     `json:"version"`
	CreatedAt time.Time `json:"created_at,omitzero"`
	UpdatedAt time.Time `json:"updated_at,omitzero"`
}

// Step is one node of a flow: a task variant delivered to its targets.
type Step struct {
	ID      string            `json:"id"`
	Targets []string          `json:"targets"`
	Params  map[string]string `json:"params,omitempty"`
	// Result is all (default) or any.
	Result ResultMode `json:"result,omitempty"`
	// Timeout, in seconds, is how long the step waits for a complete
	// result before its outcome is timeout; 0 means DefaultStepTimeout.
	Timeout int `json:"timeout,omitempty"`
	// On maps an outcome to the next steps; no entry ends the execution.
	On map[Outcome][]string `json:"on,omitempty"`
}

// ResultMode returns the step's result mode, all by default.
func (s *Step) ResultMode() ResultMode {
	if s.Result == "" {
		return ResultAll
	}
	return s.Result
}

// TimeoutDuration returns the step's timeout, DefaultStepTimeout when 0.
func (s *Step) TimeoutDuration() time.Duration {
	if s.Timeout == 0 {
		return DefaultStepTimeout * time.Second
	}
	return time.Duration(s.Timeout) * time.Second
}

// Step returns the step with id, or nil.
func (f *Flow) Step(id string) *Step {
	for _, s := range f.Steps {
		if s.ID == id {
			return s
		}
	}
	return nil
}

// Depth returns the flow's bound on step runs per execution.
func (f *Flow) Depth() int {
	if f.MaxDepth == 0 {
		return DefaultMaxDepth
	}
	return f.MaxDepth
}

// Validate checks f and returns the first problem as a *ValidationError
// naming the field (steps[i].on.success[j], …). A cycle reachable from the
// start is refused unless max_depth is declared.
func (f *Flow) Validate() error {
	if err := ValidTargetID(f.ID); err != nil {
		return err
	}
	if len(f.Description) > MaxFlowDescription {
		return Invalid("description", "at most %d characters", MaxFlowDescription)
	}
	if err := ValidateLabels(f.Labels); err != nil {
		return err
	}
	if f.MaxDepth < 0 || f.MaxDepth > MaxMaxDepth {
		return Invalid("max_depth", "must be 1 to %d (0 means %d)", MaxMaxDepth, DefaultMaxDepth)
	}
	if len(f.Steps) == 0 {
		return Invalid("steps", "at least one step")
	}
	if len(f.Steps) > MaxFlowSteps {
		return Invalid("steps", "at most %d steps", MaxFlowSteps)
	}
	seen := make(map[string]bool, len(f.Steps))
	for i, s := range f.Steps {
		if s == nil {
			return Invalid(fmt.Sprintf("steps[%d]", i), "required")
		}
		if err := ValidTargetID(s.ID); err != nil {
			return Invalid(fmt.Sprintf("steps[%d].id", i), "%s", err.(*ValidationError).Msg)
		}
		if seen[s.ID] {
			return Invalid(fmt.Sprintf("steps[%d].id", i), "%q is used by another step", s.ID)
		}
		seen[s.ID] = true
	}
	for i, s := range f.Steps {
		if err := s.validate(fmt.Sprintf("steps[%d]", i), seen); err != nil {
			return err
		}
	}
	if err := f.validSchedule(); err != nil {
		return err
	}
	if f.Start != "" && !seen[f.Start] {
		return Invalid("start", "no step %q", f.Start)
	}
	if f.Start != "" && f.MaxDepth == 0 {
		if cyc := f.cycleFrom(f.Start); cyc != nil {
			return Invalid("max_depth", "required: steps %s form a cycle reachable from the start", strings.Join(cyc, " → "))
		}
	}
	return nil
}

// MaxFlowSchedule bounds a flow's schedule text.
const MaxFlowSchedule = 200

// ParseSchedule parses the flow's schedule in its zone (UTC when TZ is
// empty; a "tz" suffix in the text wins). A flow without a schedule gives
// nil, nil. Errors are *ValidationError naming schedule or tz.
func (f *Flow) ParseSchedule() (*schedule.Schedule, error) {
	text := strings.TrimSpace(f.Schedule)
	if text == "" {
		if f.TZ != "" {
			return nil, Invalid("tz", "belongs to a schedule; the flow has none")
		}
		return nil, nil
	}
	if len(f.Schedule) > MaxFlowSchedule {
		return nil, Invalid("schedule", "at most %d bytes", MaxFlowSchedule)
	}
	tz := f.TZ
	if tz == "" {
		tz = "UTC"
	}
	if _, err := time.LoadLocation(tz); err != nil || len(tz) > 64 || tz == "Local" {
		return nil, Invalid("tz", "unknown time zone %q", Truncate(tz, 64))
	}
	sched, err := schedule.Parse(text, tz)
	if err != nil {
		return nil, Invalid("schedule", "%q: %s", Truncate(text, 80), err)
	}
	return sched, nil
}

// validSchedule checks the schedule; a one-off one ("at …") must lie
// ahead.
func (f *Flow) validSchedule() error {
	sched, err := f.ParseSchedule()
	if err != nil || sched == nil {
		return err
	}
	now := time.Now()
	if sched.IsOnce() && sched.Next(now, now).IsZero() {
		return Invalid("schedule", "%q is in the past", Truncate(f.Schedule, 80))
	}
	return nil
}

func (s *Step) validate(field string, steps map[string]bool) error {
	if len(s.Targets) == 0 {
		return Invalid(field+".targets", "at least one target")
	}
	if len(s.Targets) > MaxStepTargets {
		return Invalid(field+".targets", "at most %d targets", MaxStepTargets)
	}
	for j, tg := range s.Targets {
		if err := ValidTargetID(tg); err != nil {
			return Invalid(fmt.Sprintf("%s.targets[%d]", field, j), "%s", err.(*ValidationError).Msg)
		}
	}
	if err := ValidParams(field+".params", s.Params); err != nil {
		return err
	}
	if s.Result != "" && s.Result != ResultAll && s.Result != ResultAny {
		return Invalid(field+".result", "must be all or any; got %q", s.Result)
	}
	if s.Timeout < 0 || s.Timeout > MaxStepTimeout {
		return Invalid(field+".timeout", "must be 0 to %d seconds", MaxStepTimeout)
	}
	for o, next := range s.On {
		if !o.Valid() {
			return Invalid(field+".on", "outcome must be success, failure or timeout; got %q", o)
		}
		if len(next) > MaxStepEdges {
			return Invalid(fmt.Sprintf("%s.on.%s", field, o), "at most %d next steps", MaxStepEdges)
		}
		for j, id := range next {
			if !steps[id] {
				return Invalid(fmt.Sprintf("%s.on.%s[%d]", field, o, j), "no step %q", id)
			}
		}
	}
	return nil
}

// cycleFrom returns the steps of a cycle reachable from start, or nil.
func (f *Flow) cycleFrom(start string) []string {
	const (
		white = iota
		grey
		black
	)
	color := map[string]int{}
	var path []string
	var visit func(id string) []string
	visit = func(id string) []string {
		color[id] = grey
		path = append(path, id)
		for _, o := range Outcomes {
			for _, next := range f.Step(id).On[o] {
				switch color[next] {
				case grey:
					i := slices.Index(path, next)
					return append(slices.Clone(path[i:]), next)
				case white:
					if c := visit(next); c != nil {
						return c
					}
				}
			}
		}
		path = path[:len(path)-1]
		color[id] = black
		return nil
	}
	return visit(start)
}

// Execution is one run of a flow, triggered once. Its record says what is
// next, so any node can resume it after a crash.
type Execution struct {
	ID     string `json:"id"`
	FlowID string `json:"flow_id"`
	// TriggerID is the run that started the execution when a fire did
	// (a task targeting "flow:<id>", a start_flow target, the flow's
	// schedule); the execution's id is derived from it, so a re-delivery
	// of that run finds this execution instead of starting another.
	TriggerID string `json:"trigger_id,omitempty"`
	// Flow is the flow as it was when triggered: later edits do not change
	// a running execution.
	Flow   *Flow             `json:"flow"`
	State  ExecState         `json:"state"`
	Reason string            `json:"reason,omitempty"`
	Params map[string]string `json:"params,omitempty"`
	// Result is the output of the step that ended the execution.
	Result     string     `json:"result,omitempty"`
	StepRuns   []*StepRun `json:"step_runs"`
	StartedAt  time.Time  `json:"started_at"`
	FinishedAt time.Time  `json:"finished_at,omitzero"`
	Version    int64      `json:"version"`
}

// StepRun is one run of a step within an execution.
type StepRun struct {
	// Index is the position in Execution.StepRuns.
	Index int    `json:"index"`
	Step  string `json:"step"`
	// Prev is the index of the step run whose outcome led here (-1 for the
	// start).
	Prev int `json:"prev"`
	// Slot is the ledger instant of this step run's fire: fixed when the
	// step run is planned, so a repeated trigger is a no-op.
	Slot      time.Time         `json:"slot"`
	Deadline  time.Time         `json:"deadline"`
	Params    map[string]string `json:"params,omitempty"`
	Triggered bool              `json:"triggered,omitempty"`
	// Runs are the targets' runs as last seen.
	Runs       []StepTargetRun `json:"runs,omitempty"`
	Outcome    Outcome         `json:"outcome,omitempty"`
	Output     string          `json:"output,omitempty"`
	FinishedAt time.Time       `json:"finished_at,omitzero"`
}

// StepTargetRun is one target's run of a step run.
type StepTargetRun struct {
	Target    string   `json:"target"`
	TriggerID string   `json:"trigger_id"`
	State     RunState `json:"state"`
	Output    string   `json:"output,omitempty"`
	Error     string   `json:"error,omitempty"`
}

// Open reports whether the step run still waits for its outcome.
func (r *StepRun) Open() bool { return r.Outcome == "" }

// StepOutcome decides a step's outcome from its targets' runs under mode:
// "" while undecided. all: success when every target's run is done,
// failure as soon as one is final and not done (timeout when that run
// timed out). any: success as soon as one run is done, failure when every
// run is final and none is done (timeout when one timed out).
func StepOutcome(mode ResultMode, targets []string, runs []StepTargetRun) Outcome {
	byTarget := make(map[string]StepTargetRun, len(runs))
	for _, r := range runs {
		byTarget[r.Target] = r
	}
	done, final, timedOut := 0, 0, false
	for _, tg := range targets {
		r, ok := byTarget[tg]
		if !ok || !r.State.Final() {
			continue
		}
		final++
		switch r.State {
		case RunDone:
			done++
		case RunTimeout:
			timedOut = true
		}
	}
	fail := OutcomeFailure
	if timedOut {
		fail = OutcomeTimeout
	}
	switch {
	case mode == ResultAny && done > 0:
		return OutcomeSuccess
	case mode == ResultAny && final == len(targets):
		return fail
	case mode != ResultAny && done == len(targets):
		return OutcomeSuccess
	case mode != ResultAny && final > done:
		return fail
	}
	return ""
}

// ExecStateOf is the final execution state a step's outcome gives.
func ExecStateOf(o Outcome) ExecState {
	switch o {
	case OutcomeSuccess:
		return ExecSuccess
	case OutcomeTimeout:
		return ExecTimeout
	}
	return ExecFailure
}

// RenderStepParams fills a step's params: {{params.KEY}} from the trigger's
// params, {{prev.status}} and {{prev.output}} (capped at MaxPrevOutput)
// from the previous step run; the trigger's params pass through under their
// own keys unless the step sets them.
func RenderStepParams(step map[string]string, trigger map[string]string, prevStatus Outcome, prevOutput string) map[string]string {
	out := make(map[string]string, len(step)+len(trigger))
	for k, v := range trigger {
		out[k] = v
	}
	pairs := []string{"{{prev.status}}", string(prevStatus), "{{prev.output}}", Truncate(prevOutput, MaxPrevOutput)}
	for k, v := range trigger {
		pairs = append(pairs, "{{params."+k+"}}", v)
	}
	r := strings.NewReplacer(pairs...)
	for k, v := range step {
		out[k] = Truncate(r.Replace(v), MaxParamValue)
	}
	return out
}

// NextSlot returns the instant for a new step run of x: now to the
// millisecond, after every slot x planned before (two step runs of one
// execution never share an instant).
func (x *Execution) NextSlot(now time.Time) time.Time {
	slot := now.Truncate(time.Millisecond)
	for _, sr := range x.StepRuns {
		if !slot.After(sr.Slot) {
			slot = sr.Slot.Add(time.Millisecond)
		}
	}
	return slot
}
