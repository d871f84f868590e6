package fire

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// Resume continues the unfinished runs of t (after a restart or a
// takeover) that nobody else is delivering: runs of this node id that
// this process is not delivering (an earlier process fired them), runs of
// nodes that are gone, and runs stuck well past their deadline. Each is
// taken over (its fence bumped) before it is delivered again, so a
// deliverer that still holds it cannot record over it. Runs that a live
// node is delivering are left to it. It returns how many runs of t are
// unfinished from its schedule (scheduled or misfire runs), resumed or
// not: the task is not done while any is.
func (f *Firer) Resume(ctx context.Context, t *task.Task) (int, error) {
	sctx, cancel := context.WithTimeout(ctx, f.cfg.StoreTimeout)
	runs, err := f.store.UnfinishedRuns(sctx, t.TaskID)
	cancel()
	if err != nil {
		return 0, fmt.Errorf("list unfinished runs of %s: %w", t.TaskID, err)
	}
	return f.ResumeRuns(ctx, t, runs, time.Now())
}

// ResumeRuns is Resume with t's unfinished runs already read (by the
// armer, for a batch of tasks at once) by readAt, on this process's wall
// clock: a node they name that a cached view does not know is looked up
// again in a view read after readAt (one read serves the whole batch).
func (f *Firer) ResumeRuns(ctx context.Context, t *task.Task, runs []*task.Run, readAt time.Time) (int, error) {
	scheduled := 0
	for _, r := range runs {
		if r.TriggerType.Scheduled() {
			scheduled++
		}
	}
	if len(runs) == 0 {
		return 0, nil
	}
	j, err := f.newJudge(ctx, readAt)
	if err != nil {
		return scheduled, err
	}
	for _, r := range runs {
		why, err := j.why(ctx, r)
		if err != nil {
			return scheduled, err
		}
		if why == "" {
			continue
		}
		if _, err := f.rescue(ctx, t, r, why); err != nil {
			return scheduled, err
		}
	}
	return scheduled, nil
}

// Rescue finds runs that nobody delivers (store.Ledger.StrandedRuns: their
// owner is gone, an earlier process of this node fired them, or they are
// stuck well past their deadline), takes each over and delivers it again;
// runs of deleted tasks end cancelled. It returns how many runs it took.
func (f *Firer) Rescue(ctx context.Context, limit int) (int, error) {
	peers, err := f.peers(ctx, time.Time{})
	if err != nil {
		return 0, err
	}
	sctx, cancel := context.WithTimeout(ctx, f.cfg.StoreTimeout)
	runs, err := f.store.StrandedRuns(sctx, store.StrandedParams{
		Live: slices.Collect(maps.Keys(peers.live)), Quiet: slices.Collect(maps.Keys(peers.quiet)),
		QuietBefore: f.now().Add(-InFlightMargin), Self: f.cfg.Node, SelfSince: f.started,
		DeadlineBefore: f.now().Add(-f.cfg.RescueGrace), Limit: limit,
	})
	cancel()
	if err != nil {
		return 0, fmt.Errorf("find stranded runs: %w", err)
	}
	j := &judge{f: f, view: peers, readAt: time.Now()}
	n := 0
	for _, r := range runs {
		why, err := j.why(ctx, r)
		if err != nil {
			return n, err
		}
		if why == "" {
			continue // the store judged on the view before the query; the next pass judges again
		}
		t, err := f.getTask(ctx, r.TaskID)
		if errors.Is(err, task.ErrNotFound) {
			if f.cancelOrphan(ctx, r, "task deleted while the run was unfinished") {
				n++
			}
			continue
		}
		if err != nil {
			return n, fmt.Errorf("rescue run %s: %w", r.TriggerID, err)
		}
		ok, err := f.rescue(ctx, t, r, why)
		if err != nil {
			return n, err
		}
		if ok {
			n++
		}
	}
	if n > 0 {
		f.logger.InfoContext(ctx, "rescued stranded runs", "runs", n)
	}
	return n, nil
}

// orphaned says why r, unfinished, is nobody's to deliver ("" when it is
// someone's): it is this node id's but not this process's (checked again
// under the inflight lock); its node is gone; its node is quiet and no
// attempt of r can be in flight (r is not running, or its deadline passed
// InFlightMargin ago); or it is stuck well past its deadline.
func (f *Firer) orphaned(r *task.Run, p peerSets) string {
	now := f.now()
	switch {
	case r.Node == f.cfg.Node:
		return "this node's, not in flight here"
	case p.quiet[r.Node]:
		if r.State != task.RunRunning {
			return "its node stopped beating; the run is not in flight"
		}
		if r.Deadline.Before(now.Add(-InFlightMargin)) {
			return "its node stopped beating and the run's attempt is past its deadline"
		}
		return "" // an attempt may be in flight: taking it now could deliver it twice
	case !p.live[r.Node]:
		return whyGone
	case !r.Deadline.IsZero() && r.Deadline.Before(now.Add(-f.cfg.RescueGrace)):
		return "stuck past its deadline"
	}
	return ""
}

// whyGone is orphaned's judgement of a run whose node is neither alive
// nor quiet.
const whyGone = "its node is gone"

// judge judges runs read at or before readAt (orphaned). A node the view
// knows neither as alive nor as quiet may have registered after a cached
// view was read (at a start, nodes register one after another), so such
// a judgement is made again, once, on a view read after readAt: only a
// node absent from that one (it left the registry) or known to have
// exited is gone.
type judge struct {
	f      *Firer
	view   peerSets
	readAt time.Time
	fresh  bool
}

// newJudge judges runs read at or before readAt, starting from the
// Firer's recent view of the nodes.
func (f *Firer) newJudge(ctx context.Context, readAt time.Time) (*judge, error) {
	view, err := f.peers(ctx, time.Time{})
	if err != nil {
		return nil, err
	}
	return &judge{f: f, view: view, readAt: readAt}, nil
}

// why is orphaned's judgement of r, confirmed on a fresh view when it
// says r's node is gone.
func (j *judge) why(ctx context.Context, r *task.Run) (string, error) {
	why := j.f.orphaned(r, j.view)
	if why != whyGone || j.fresh {
		return why, nil
	}
	view, err := j.f.peers(ctx, j.readAt)
	if err != nil {
		return "", err
	}
	j.view, j.fresh = view, true
	return j.f.orphaned(r, view), nil
}

// InFlightMargin is how long past its deadline a running run of a quiet
// node (one that stopped beating but may still run) is left before it is
// taken over. An attempt ends by its run's deadline (the ttl) plus the
// wait for a delivery slot that does not re-assert the run (under
// longWait), the time a call takes to notice its context ended, and the
// skew between the nodes' clocks; this covers them.
const InFlightMargin = 5 * time.Second

// rescue takes r over (bumping its fence) and delivers it again. It
// reports false when this process is delivering it already or someone
// else took it first.
func (f *Firer) rescue(ctx context.Context, t *task.Task, r *task.Run, why string) (bool, error) {
	if !f.reserveIdle(r) {
		return false, nil // delivered, queued or being recorded here already
	}
	taken, err := f.takeOver(ctx, r)
	if err != nil || taken == nil {
		f.release(r)
		return false, err
	}
	tg, err := f.resumeTarget(ctx, t, taken)
	if errors.Is(err, task.ErrNotFound) {
		_ = f.finish(ctx, t, nil, taken, task.RunDead, fmt.Sprintf("target %q not found", taken.Target)) // logged
		f.release(r)
		return true, nil
	}
	if err != nil {
		f.release(r) // still ours (fenced); the rescuer tries again
		return false, err
	}
	f.logger.InfoContext(ctx, "run taken over", "task_id", t.TaskID, "trigger_id", taken.TriggerID,
		"from_node", r.Node, "fence", taken.Fence, "state", r.State, "deadline", r.Deadline, "why", why)
	if taken.State == task.RunPending {
		// Queued and never attempted: it keeps its attempt count and
		// waits for its turn behind the task's deliveries here, which
		// checks the task again (startQueued).
		f.queueReserved(queuedRun{t: t, target: tg, run: taken})
		return true, nil
	}
	// The stored attempt was cut short (running) or failed and awaits its
	// retry (failed): either way it counts, and the next one is
	// attempt+1. deliver honours the stored next_attempt.
	taken.Attempt++
	taken.State = task.RunRunning
	f.start(t, tg, taken, false)
	return true, nil
}

// cancelOrphan takes over an unfinished run whose task is gone and ends it
// cancelled with why. It reports whether it did.
func (f *Firer) cancelOrphan(ctx context.Context, r *task.Run, why string) bool {
	if !f.reserve(r) {
		return false
	}
	defer f.release(r)
	taken, err := f.takeOver(ctx, r)
	if err != nil || taken == nil {
		return false
	}
	// The task is gone: finish records the run alone (as CancelRun does).
	_ = f.finish(ctx, &task.Task{TaskID: r.TaskID}, nil, taken, task.RunCancelled, why) // logged
	return true
}

// Peers is the node registry's view of the nodes sharing the store
// (Config.Peers). A node in neither list is gone: it deregistered, or it
// is known to have exited.
type Peers struct {
	// Live are the nodes that beat within the lease.
	Live []string
	// Quiet are the nodes that stopped beating but may still run (a
	// process on another host, or a stalled one on this host): what they
	// have in flight may still reach its target.
	Quiet []string
}

// peerSets is Peers as sets, with this node always live.
type peerSets struct{ live, quiet map[string]bool }

// peers reads Config.Peers (a view read at or after notBefore) as sets.
func (f *Firer) peers(ctx context.Context, notBefore time.Time) (peerSets, error) {
	p := peerSets{live: map[string]bool{f.cfg.Node: true}, quiet: map[string]bool{}}
	if f.cfg.Peers == nil {
		return p, nil
	}
	got, err := f.cfg.Peers(ctx, notBefore)
	if err != nil {
		return p, fmt.Errorf("list live nodes: %w", err)
	}
	for _, id := range got.Live {
		p.live[id] = true
	}
	for _, id := range got.Quiet {
		if !p.live[id] {
			p.quiet[id] = true
		}
	}
	return p, nil
}

// CancelRun ends an unfinished run (pending, running, failed) as
// cancelled with why, whoever holds it: it takes the run over (bumping
// its fence, so a delivery still holding it is refused its next write and
// makes no further attempt) and records it cancelled. A finished or
// accepted run is task.ErrConflict (an accepted run waits for its
// target's feedback until its deadline); an unknown one task.ErrNotFound.
// It returns the run as stored.
func (f *Firer) CancelRun(ctx context.Context, triggerID, why string) (*task.Run, error) {
	sctx, cancel := context.WithTimeout(ctx, f.cfg.StoreTimeout)
	r, err := f.store.GetRun(sctx, triggerID)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("cancel run %s: %w", triggerID, err)
	}
	if r.State.Final() || r.State == task.RunAccepted {
		return nil, fmt.Errorf("cancel run %s: it is %s: %w", triggerID, r.State, task.ErrConflict)
	}
	taken, err := f.takeOver(ctx, r)
	if err != nil {
		return nil, fmt.Errorf("cancel run %s: %w", triggerID, err)
	}
	if taken == nil {
		return nil, fmt.Errorf("cancel run %s: it finished or moved meanwhile, try again: %w", triggerID, task.ErrConflict)
	}
	t, err := f.getTask(ctx, r.TaskID)
	if errors.Is(err, task.ErrNotFound) {
		t, err = &task.Task{TaskID: r.TaskID}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("cancel run %s: %w", triggerID, err)
	}
	_ = f.finish(ctx, t, nil, taken, task.RunCancelled, why) // logged; the answer is the run as stored
	sctx, cancel = context.WithTimeout(ctx, f.cfg.StoreTimeout)
	defer cancel()
	return f.store.GetRun(sctx, triggerID)
}
