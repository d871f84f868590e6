package flows

import (
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"sync"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// Scenario is the scenario of the hidden step tasks.
const Scenario = "flows"

// Params every step run's fire carries, naming its execution and step run
// (targets see them too; the engine maps run changes back with them).
const (
	ParamExecution = "flow_execution_id"
	ParamStepRun   = "flow_step_run"
)

// Store is what the engine needs from storage: flows and executions, and
// the ledger's reads.
type Store interface {
	store.Flows
	ListRuns(ctx context.Context, taskID string, beforeSlot time.Time, limit int) ([]*task.Run, error)
	GetRun(ctx context.Context, triggerID string) (*task.Run, error)
	// SetTaskState closes the schedule task of a flow's older version.
	SetTaskState(ctx context.Context, p store.TaskStateParams) (*task.Task, error)
}

// TriggerFunc fires a task once at instant at with one-off params (the
// firer's Trigger with type flow). An instant already fired is
// task.ErrConflict.
type TriggerFunc func(ctx context.Context, taskID string, at time.Time, params map[string]string) ([]*task.Run, error)

// Config tunes an Engine. Zero values take the defaults.
type Config struct {
	// Interval is how often running executions are resumed from the store
	// (default 2s): step runs whose outcome came while no one listened,
	// step timeouts, steps planned but not fired (a crash in between).
	Interval time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Observer hears the ends of executions and step runs (nil: no one).
	Observer Observer
	// Wake wakes the patrols after a schedule task was created or closed,
	// so it is armed or disarmed at once (default a no-op).
	Wake func()
	// CancelAccepted ends an accepted step run of a stopped execution as
	// cancelled with why, through the run's owner
	// (fire.Firer.CancelAccepted: a fenced write, its observers told).
	// Nil leaves such runs to their target's feedback or their timeout.
	CancelAccepted func(ctx context.Context, r *task.Run, why string) error
}

// Observer hears what executions do, for metrics and the event sink. Each
// end is reported once, by the node whose compare-and-set stored it (a
// crash between the store and the report loses the report). Its methods
// must not block.
type Observer interface {
	// StepFinished: step run sr of x got its outcome (interrupted when x
	// was stopped or cut while it was open).
	StepFinished(ctx context.Context, x *task.Execution, sr *task.StepRun)
	// ExecutionFinished: x ended in its final state.
	ExecutionFinished(ctx context.Context, x *task.Execution)
}

// report tells the observer about the step runs of x among open that
// ended, and about x when it ended.
func (e *Engine) report(ctx context.Context, x *task.Execution, open []int) {
	if e.cfg.Observer == nil {
		return
	}
	for _, i := range open {
		if sr := x.StepRuns[i]; !sr.Open() {
			e.cfg.Observer.StepFinished(ctx, x, sr)
		}
	}
	if x.State.Final() {
		e.cfg.Observer.ExecutionFinished(ctx, x)
	}
}

// openRuns returns the indices of x's open step runs.
func openRuns(x *task.Execution) []int {
	var out []int
	for _, sr := range x.StepRuns {
		if sr.Open() {
			out = append(out, sr.Index)
		}
	}
	return out
}

// Engine starts, advances, resumes and stops flow executions.
type Engine struct {
	logger  *slog.Logger
	st      Store
	trigger TriggerFunc
	cfg     Config
	wake    chan string
	// locks serialise the changes of one execution within this process
	// (Start's first advance, OnRun wake-ups, resumption and Stop would
	// otherwise race each other). Across nodes the store's compare-and-set
	// decides; on a store whose compare-and-set is not atomic (FerretDB v1)
	// this lock is what keeps one node from planning a step run twice.
	locks [lockStripes]sync.Mutex
}

// lockStripes is how many locks executions are spread over.
const lockStripes = 64

// lock locks the stripe of execution id and returns its unlock.
func (e *Engine) lock(id string) func() {
	h := fnv.New32a()
	_, _ = h.Write([]byte(id))
	m := &e.locks[h.Sum32()%lockStripes]
	m.Lock()
	return m.Unlock
}

// New returns an engine; Run drives it.
func New(logger *slog.Logger, cfg Config, st Store, trigger TriggerFunc) *Engine {
	cfg.Interval = cmp.Or(cfg.Interval, 2*time.Second)
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Wake == nil {
		cfg.Wake = func() {}
	}
	return &Engine{logger: logger.With("component", "flows"), st: st, trigger: trigger, cfg: cfg,
		wake: make(chan string, 1024)}
}

// Run advances executions woken by OnRun and resumes every running
// execution each Interval (and once at start) until ctx ends.
func (e *Engine) Run(ctx context.Context) {
	ticker := time.NewTicker(e.cfg.Interval)
	defer ticker.Stop()
	e.SyncSchedules(ctx)
	e.ResumeAll(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case id := <-e.wake:
			e.advanceLogged(ctx, id)
		case <-ticker.C:
			e.ResumeAll(ctx)
		}
	}
}

// OnRun hears a stored run change from the firer; a change of a step
// task's run wakes its execution. It never blocks: a full queue leaves the
// execution to the periodic resumption.
func (e *Engine) OnRun(t *task.Task, r task.Run) {
	if t == nil || t.Scenario != Scenario || !(r.State.Final() || r.State == task.RunAccepted) {
		return
	}
	if id := r.Params[ParamExecution]; id != "" {
		select {
		case e.wake <- id:
		default:
		}
	}
}

// ResumeAll advances every running execution and returns how many it read.
func (e *Engine) ResumeAll(ctx context.Context) int {
	execs, err := e.st.RunningExecutions(ctx, resumeBatch)
	if err != nil {
		if ctx.Err() == nil {
			e.logger.ErrorContext(ctx, "list running executions", "error", err)
		}
		return 0
	}
	for _, x := range execs {
		e.advanceLogged(ctx, x.ID)
	}
	return len(execs)
}

// resumeBatch bounds the executions one resumption pass reads.
const resumeBatch = 500

func (e *Engine) advanceLogged(ctx context.Context, id string) {
	if _, err := e.Advance(ctx, id); err != nil && ctx.Err() == nil {
		e.logger.ErrorContext(ctx, "advance execution", "execution_id", id, "error", err)
	}
}

// Start triggers flow flowID with params: a new execution whose start step
// is planned, then fired. A flow without a start step is task.ErrConflict;
// a missing flow task.ErrNotFound.
func (e *Engine) Start(ctx context.Context, flowID string, params map[string]string) (*task.Execution, error) {
	return e.start(ctx, flowID, newID(), "", params)
}

// StartFired starts flow flowID for a fire: run triggerID of task taskID
// (a task targeting "flow:<id>", a start_flow target, or the flow's
// schedule task). The execution's id is derived from the trigger id and
// the flow, so a re-delivery of the same run (after a crash, a retry)
// returns the execution the first delivery started instead of starting a
// second one. A fire of a schedule task the flow no longer has (an older
// version's) closes that task and is refused as permanent.
func (e *Engine) StartFired(ctx context.Context, flowID, triggerID, taskID string, params map[string]string) (*task.Execution, error) {
	if triggerID == "" {
		return nil, fmt.Errorf("start flow %s: %w", flowID, task.Invalid("trigger_id", "required"))
	}
	if err := e.checkScheduleTask(ctx, flowID, taskID); err != nil {
		return nil, err
	}
	return e.start(ctx, flowID, FiredExecutionID(flowID, triggerID), triggerID, params)
}

// FiredExecutionID is the id of the execution run triggerID starts of
// flow flowID.
func FiredExecutionID(flowID, triggerID string) string {
	sum := sha256.Sum256([]byte(flowID + "\x00" + triggerID))
	return hex.EncodeToString(sum[:12])
}

func (e *Engine) start(ctx context.Context, flowID, id, triggerID string, params map[string]string) (*task.Execution, error) {
	if err := task.ValidParams("params", params); err != nil {
		return nil, err
	}
	if triggerID != "" {
		// A repeated fire: the execution exists already.
		switch x, err := e.st.GetExecution(ctx, id); {
		case err == nil:
			return e.Advance(ctx, x.ID)
		case !errors.Is(err, task.ErrNotFound):
			return nil, fmt.Errorf("start flow %s: %w", flowID, err)
		}
	}
	f, err := e.st.GetFlow(ctx, flowID)
	if err != nil {
		return nil, fmt.Errorf("start flow %s: %w", flowID, err)
	}
	if f.Start == "" {
		return nil, fmt.Errorf("flow %s has no start step and cannot be triggered: %w", flowID, task.ErrConflict)
	}
	now := e.cfg.Now().Truncate(time.Millisecond)
	x := &task.Execution{ID: id, FlowID: f.ID, TriggerID: triggerID, Flow: f, State: task.ExecRunning, Params: params, StartedAt: now}
	e.plan(x, f.Step(f.Start), -1, "", "", now)
	switch err := e.st.CreateExecution(ctx, x); {
	case triggerID != "" && errors.Is(err, task.ErrConflict):
		// Another delivery of the same run started it meanwhile.
		return e.Advance(ctx, x.ID)
	case err != nil:
		return nil, fmt.Errorf("start flow %s: %w", flowID, err)
	}
	e.logger.InfoContext(ctx, "flow execution started", "flow_id", flowID, "execution_id", x.ID, "trigger_id", triggerID)
	return e.Advance(ctx, x.ID)
}

// Stop interrupts a running execution: it is recorded interrupted at once,
// the deliveries in progress end by themselves, and its step runs'
// accepted runs are cancelled, so late feedback for them is refused. A
// finished execution is task.ErrConflict.
func (e *Engine) Stop(ctx context.Context, id string) (*task.Execution, error) {
	defer e.lock(id)()
	for range maxTries {
		x, err := e.st.GetExecution(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("stop execution %s: %w", id, err)
		}
		if x.State.Final() {
			return nil, fmt.Errorf("execution %s is %s already: %w", id, x.State, task.ErrConflict)
		}
		open := openRuns(x)
		e.finish(x, task.ExecInterrupted, "stopped", e.cfg.Now())
		switch err := e.st.UpdateExecution(ctx, x); {
		case errors.Is(err, task.ErrConflict):
			continue
		case err != nil:
			return nil, fmt.Errorf("stop execution %s: %w", id, err)
		}
		e.report(ctx, x, open)
		e.cancelAccepted(ctx, x)
		e.logger.InfoContext(ctx, "flow execution stopped", "execution_id", id)
		return x, nil
	}
	return nil, fmt.Errorf("stop execution %s: %w: too many concurrent changes", id, task.ErrConflict)
}

// maxTries bounds how often a change of an execution is retried after
// losing a compare-and-set to another node.
const maxTries = 20

// cancelAccepted ends the accepted runs of x's open step runs as
// cancelled through Config.CancelAccepted (a fenced write: a run that
// ended or moved meanwhile is left).
func (e *Engine) cancelAccepted(ctx context.Context, x *task.Execution) {
	if e.cfg.CancelAccepted == nil {
		return
	}
	for _, sr := range x.StepRuns {
		if sr.Outcome != task.OutcomeInterrupted {
			continue
		}
		runs, err := e.ledgerRuns(ctx, x, sr)
		if err != nil {
			e.logger.ErrorContext(ctx, "read step runs to cancel", "execution_id", x.ID, "error", err)
			continue
		}
		for _, r := range runs {
			if r.State != task.RunAccepted {
				continue
			}
			if err := e.cfg.CancelAccepted(ctx, r, "flow execution stopped"); err != nil {
				e.logger.WarnContext(ctx, "cancel accepted step run", "trigger_id", r.TriggerID, "error", err)
			}
		}
	}
}

func newID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// StopFlow stops every running execution of flow flowID (at most
// resumeBatch of them per call) and returns how many it stopped. A missing
// flow is task.ErrNotFound.
func (e *Engine) StopFlow(ctx context.Context, flowID string) (int, error) {
	if _, err := e.st.GetFlow(ctx, flowID); err != nil {
		return 0, fmt.Errorf("stop flow %s: %w", flowID, err)
	}
	execs, err := e.st.ListExecutions(ctx, flowID, resumeBatch)
	if err != nil {
		return 0, fmt.Errorf("stop flow %s: %w", flowID, err)
	}
	n := 0
	for _, x := range execs {
		if x.State.Final() {
			continue
		}
		switch _, err := e.Stop(ctx, x.ID); {
		case err == nil:
			n++
		case !errors.Is(err, task.ErrConflict): // finished meanwhile: fine
			return n, err
		}
	}
	return n, nil
}
