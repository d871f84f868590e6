// Package builtin is the executor of builtin targets: cronsheet acting on
// itself when a task fires — cleaning up old runs, pausing, resuming or
// triggering other tasks ("one task controlling others" of design note
// 001, docs/SEEDS.md).
package builtin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"cronsheet/executors"
	"cronsheet/mapping"
	"cronsheet/store"
	"cronsheet/task"
)

// Store is what the built-in actions need from storage.
type Store interface {
	SetTaskState(ctx context.Context, p store.TaskStateParams) (*task.Task, error)
	CleanupRuns(ctx context.Context, p store.CleanupParams) (int, error)
}

// TriggerFunc fires taskID now with trigger type flow and the given
// one-off params, as fire.Firer.Trigger does.
type TriggerFunc func(ctx context.Context, taskID string, params map[string]string) error

// FlowFuncs start and stop task flows (flows.Engine's Start and
// StopFlow) for start_flow and stop_flow.
type FlowFuncs struct {
	// Start starts flowID for run triggerID of task taskID; a repeated
	// call for the same run returns the execution the first one started
	// (flows.Engine.StartFired).
	Start func(ctx context.Context, flowID, triggerID, taskID string, params map[string]string) (executionID string, err error)
	Stop  func(ctx context.Context, flowID string) (stopped int, err error)
}

// FlowDepthParam is the param a trigger_task run passes to the tasks it
// triggers: how many trigger_task hops led there. A chain deeper than
// MaxFlowDepth (a loop of tasks triggering each other) is refused.
const FlowDepthParam = task.InternalParamPrefix + "flow_depth"

// MaxFlowDepth bounds chains of trigger_task.
const MaxFlowDepth = 8

// cleanupBatch is how many runs one CleanupRuns call deletes.
const cleanupBatch = 1000

// Deps are an Executor's dependencies.
type Deps struct {
	Logger  *slog.Logger // nil discards
	Store   Store
	Trigger TriggerFunc
	// Wake wakes the patrols after a state change, so it hits the armed
	// jobs at once; nil = no-op.
	Wake func()
	Now  func() time.Time // nil = time.Now
	// Flows, when set, serves start_flow and stop_flow; without it they
	// fail permanently.
	Flows *FlowFuncs
}

// Executor runs builtin targets' actions.
type Executor struct {
	logger  *slog.Logger
	store   Store
	trigger TriggerFunc
	wake    func()
	now     func() time.Time
	flows   *FlowFuncs
}

var _ executors.Executor = (*Executor)(nil)

// New returns an Executor. It panics when d.Store or d.Trigger is nil (a
// wiring bug).
func New(d Deps) *Executor {
	if d.Store == nil || d.Trigger == nil {
		panic("builtin: Deps.Store and Deps.Trigger are required")
	}
	e := &Executor{logger: d.Logger, store: d.Store, trigger: d.Trigger, wake: d.Wake, now: d.Now, flows: d.Flows}
	if e.logger == nil {
		e.logger = slog.New(slog.DiscardHandler)
	}
	e.logger = e.logger.With("component", "builtin")
	if e.wake == nil {
		e.wake = func() {}
	}
	if e.now == nil {
		e.now = time.Now
	}
	return e
}

// Execute runs the action of d.Target. A delivery without a builtin target
// is a permanent error; so is a task it names that does not exist.
func (e *Executor) Execute(ctx context.Context, d task.Delivery) (string, error) {
	if d.Target == nil || d.Target.Builtin == nil {
		return "", task.Permanent(fmt.Errorf("delivery %s has no builtin target: %w", d.TriggerID, task.ErrInvalid))
	}
	b := d.Target.Builtin
	switch b.Action {
	case task.BuiltinCleanupRuns:
		return e.cleanup(ctx, b)
	case task.BuiltinPauseTask:
		return e.setState(ctx, b.Tasks, task.StateStopped)
	case task.BuiltinResumeTask:
		return e.setState(ctx, b.Tasks, task.StateRunning)
	case task.BuiltinTriggerTask:
		return e.triggerAll(ctx, d, b.Tasks)
	case task.BuiltinStartFlow:
		return e.startFlows(ctx, d, b.Flows)
	case task.BuiltinStopFlow:
		return e.stopFlows(ctx, b.Flows)
	}
	return "", task.Permanent(fmt.Errorf("unknown builtin action %q: %w", b.Action, task.ErrInvalid))
}

// cleanup deletes finished runs by age and count, batch by batch.
func (e *Executor) cleanup(ctx context.Context, b *task.BuiltinTarget) (string, error) {
	p := store.CleanupParams{KeepPerTask: b.KeepCount, Limit: cleanupBatch}
	if b.KeepAge > 0 {
		p.OlderThan = e.now().Add(-time.Duration(b.KeepAge) * time.Second)
	}
	total := 0
	for {
		n, err := e.store.CleanupRuns(ctx, p)
		total += n
		if err != nil {
			return fmt.Sprintf("deleted %d runs", total), fmt.Errorf("cleanup runs: %w", err)
		}
		if n < p.Limit {
			return fmt.Sprintf("deleted %d runs", total), nil
		}
	}
}

// setState sets each task's state; missing tasks are reported together,
// after the others were set.
func (e *Executor) setState(ctx context.Context, ids []string, state task.State) (string, error) {
	now := e.now()
	var done []string
	var errs []error
	for _, id := range ids {
		_, err := e.store.SetTaskState(ctx, store.TaskStateParams{TaskID: id, State: state, Anchor: mapping.Anchor(now), Now: now})
		if err != nil {
			errs = append(errs, fmt.Errorf("set task %s %s: %w", id, state, err))
			continue
		}
		done = append(done, id)
	}
	if len(done) > 0 {
		e.wake()
	}
	out := fmt.Sprintf("%s: %s", state, strings.Join(done, ", "))
	return out, classify(errs)
}

// triggerAll triggers each task with trigger type flow.
func (e *Executor) triggerAll(ctx context.Context, d task.Delivery, ids []string) (string, error) {
	depth := 0
	if d.TriggerType == task.TriggerFlow {
		depth, _ = strconv.Atoi(d.Params[FlowDepthParam])
	}
	if depth >= MaxFlowDepth {
		return "", task.Permanent(fmt.Errorf("trigger_task chain is %d deep (a loop?); at most %d", depth+1, MaxFlowDepth))
	}
	params := map[string]string{FlowDepthParam: strconv.Itoa(depth + 1)}
	var done []string
	var errs []error
	for _, id := range ids {
		if err := e.trigger(ctx, id, params); err != nil {
			errs = append(errs, fmt.Errorf("trigger task %s: %w", id, err))
			continue
		}
		done = append(done, id)
	}
	return "triggered: " + strings.Join(done, ", "), classify(errs)
}

// startFlows triggers each flow with the fire's params, once per run: a
// re-delivery of the same run (same trigger id) finds the executions the
// first delivery started. The chain depth guard of trigger_task applies
// (a flow whose step starts flows).
func (e *Executor) startFlows(ctx context.Context, d task.Delivery, ids []string) (string, error) {
	if e.flows == nil {
		return "", task.Permanent(errors.New("flows are not available on this server"))
	}
	depth, _ := strconv.Atoi(d.Params[FlowDepthParam])
	if depth >= MaxFlowDepth {
		return "", task.Permanent(fmt.Errorf("start_flow chain is %d deep (a loop?); at most %d", depth+1, MaxFlowDepth))
	}
	params := make(map[string]string, len(d.Params)+1)
	for k, v := range d.Params {
		params[k] = v
	}
	params[FlowDepthParam] = strconv.Itoa(depth + 1)
	var done []string
	var errs []error
	for _, id := range ids {
		x, err := e.flows.Start(ctx, id, d.TriggerID, d.TaskID, params)
		if err != nil {
			errs = append(errs, fmt.Errorf("start flow %s: %w", id, err))
			continue
		}
		done = append(done, id+" ("+x+")")
	}
	return "started: " + strings.Join(done, ", "), classify(errs)
}

// stopFlows stops every running execution of each flow.
func (e *Executor) stopFlows(ctx context.Context, ids []string) (string, error) {
	if e.flows == nil {
		return "", task.Permanent(errors.New("flows are not available on this server"))
	}
	var done []string
	var errs []error
	for _, id := range ids {
		n, err := e.flows.Stop(ctx, id)
		if err != nil {
			errs = append(errs, fmt.Errorf("stop flow %s: %w", id, err))
			continue
		}
		done = append(done, fmt.Sprintf("%s (%d)", id, n))
	}
	return "stopped: " + strings.Join(done, ", "), classify(errs)
}

// classify joins errs; when every one of them is one that retrying cannot
// fix (a missing task, a refused trigger), the result is permanent.
func classify(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	err := errors.Join(errs...)
	for _, e := range errs {
		if !errors.Is(e, task.ErrNotFound) && !errors.Is(e, task.ErrConflict) && !errors.Is(e, task.ErrInvalid) {
			return err
		}
	}
	return task.Permanent(err)
}
