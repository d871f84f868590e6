package fire

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"cronsheet/executors"
	"cronsheet/internal/timeid"
	"cronsheet/store"
	"cronsheet/task"
)

// Store is what a Firer needs from storage.
type Store interface {
	GetTask(ctx context.Context, taskID string) (*task.Task, error)
	OverdueTasks(ctx context.Context, before time.Time, limit int) ([]*task.Task, error)
	RecordFires(ctx context.Context, recs []store.FireRecord) ([]store.FireResult, error)
	FinishRun(ctx context.Context, r *task.Run, status store.TaskStatusParams) error
	UpdateRun(ctx context.Context, r *task.Run) error
	UnfinishedRuns(ctx context.Context, taskID string) ([]*task.Run, error)
	TakeOverRun(ctx context.Context, p store.TakeOverParams) (*task.Run, error)
	StrandedRuns(ctx context.Context, p store.StrandedParams) ([]*task.Run, error)
	GetTarget(ctx context.Context, id string) (*task.Target, error)
	GetRun(ctx context.Context, triggerID string) (*task.Run, error)
	ListRuns(ctx context.Context, taskID string, beforeSlot time.Time, limit int) ([]*task.Run, error)
	AcceptRun(ctx context.Context, r *task.Run, status store.TaskStatusParams) (bool, error)
}

// Executors finds the executor of a channel.
type Executors interface {
	Get(ch task.Channel) (executors.Executor, error)
}

// Config tunes a Firer. Zero values take the defaults.
type Config struct {
	// Node is this node's id, compared with the task's claimed_by.
	Node string
	// Instance names this process among the node id's (its registry
	// incarnation); deliveries carry it.
	Instance string
	// BackoffBase is the delay before the first retry (default 1s); each
	// further retry doubles it, with ±20% jitter.
	BackoffBase time.Duration
	// BackoffMax caps one retry delay (default 5m).
	BackoffMax time.Duration
	// StoreTimeout bounds each store call (default 5s).
	StoreTimeout time.Duration
	// MaxDeliveries bounds the attempts in progress at once (default 64);
	// more runs wait for a slot. A burst of fires then spends the CPU on
	// firing on time rather than on thousands of deliveries at once.
	MaxDeliveries int
	// OnRun, when set, is called after each change of a run is stored (a
	// fire or trigger recorded, an attempt failed, the target accepted, the
	// run finished) with the task as fired, the target delivered to (nil
	// for the task's own channel, or when the change is not a delivery's:
	// a cancel, an orphan's end) and the run as stored. It is called from
	// delivery goroutines and must not block.
	OnRun func(t *task.Task, tg *task.Target, r task.Run)
	// Peers, when set, says which nodes are alive now and which stopped
	// beating but may still run (Peers). A run owned by a node among
	// neither is orphaned (its node is gone): Resume and Rescue take it
	// over at once; a quiet node's run only once no attempt of it can be
	// in flight. The view must have been read at or after notBefore (the
	// zero time: any recent one will do). Nil means only this node is
	// alive.
	Peers func(ctx context.Context, notBefore time.Time) (Peers, error)
	// RescueGrace is how long past its deadline an unfinished run of a
	// live node waits before Rescue takes it over (default 5m): its owner
	// lost it (a write that never got through), or is stuck.
	RescueGrace time.Duration
	// PersistFor bounds how long a delivery keeps retrying a run write
	// that the store refuses (default 1m). A write still failing then is
	// left to the rescuer: the run stays unfinished, owned here.
	PersistFor time.Duration
	// Gate, when set, is waited on before each attempt, before a delivery
	// slot is taken (flow control: concurrency groups, host rate limits).
	// It returns the release to call when the attempt is over; an error
	// (ctx ended) ends the delivery, leaving the run for resumption.
	Gate func(ctx context.Context, t *task.Task, tg *task.Target) (release func(), err error)
}

// Outcome says what Fire did with a slot.
type Outcome int

// Fire outcomes.
const (
	// Fired means the ledger record was inserted and delivery started.
	Fired Outcome = iota
	// Duplicate means the slot was already in the ledger: nothing was sent.
	Duplicate
	// Stale means the task changed, was disabled, finished, or is no longer
	// claimed by this node: the caller should disarm it.
	Stale
)

// Firer fires slots and delivers their runs. Deliveries run in their own
// goroutines; Shutdown waits for them.
type Firer struct {
	logger *slog.Logger
	cfg    Config
	store  Store
	execs  Executors
	now    func() time.Time
	rec    *groupCommit[store.FireRecord, store.FireResult] // ledger records
	fin    *groupCommit[store.FireRecord, error]            // finished runs; nil: one by one
	slots  chan struct{}                                    // delivery slots (Config.MaxDeliveries)

	workCtx    context.Context
	cancelWork context.CancelFunc
	wg         sync.WaitGroup

	// started is when this Firer was made: runs owned by this node id
	// and fired before it belong to an earlier process, and are orphans.
	started time.Time

	mu       sync.Mutex
	inflight map[string]bool          // trigger ids being delivered here
	active   map[string]int           // deliveries in progress here, per task
	counted  map[string]bool          // trigger ids counted in active
	queued   map[string][][]queuedRun // per task, slots waiting (overlap: queue), oldest first
	waiting  map[string]bool          // trigger ids in queued
	// recording holds the trigger ids of runs being recorded here and not
	// yet reserved or queued: from before their ledger write until this
	// process has taken them in hand, so that a Resume that reads them in
	// between (a task armed while it is triggered) leaves them alone.
	recording map[string]bool
	closed    bool
}

// queuedRun is a run recorded pending under the queue overlap policy,
// waiting for the task's deliveries in progress to end.
type queuedRun struct {
	t      *task.Task
	target *task.Target
	run    *task.Run
}

// New returns a Firer. now may be nil (time.Now).
func New(logger *slog.Logger, cfg Config, st Store, execs Executors, now func() time.Time) *Firer {
	cfg.BackoffBase = cmpOr(cfg.BackoffBase, time.Second)
	cfg.BackoffMax = cmpOr(cfg.BackoffMax, 5*time.Minute)
	cfg.StoreTimeout = cmpOr(cfg.StoreTimeout, 5*time.Second)
	cfg.RescueGrace = cmpOr(cfg.RescueGrace, 5*time.Minute)
	cfg.PersistFor = cmpOr(cfg.PersistFor, time.Minute)
	if cfg.MaxDeliveries <= 0 {
		cfg.MaxDeliveries = 64
	}
	if now == nil {
		now = time.Now
	}
	workCtx, cancel := context.WithCancel(context.Background())
	return &Firer{
		logger:     logger.With("component", "fire"),
		cfg:        cfg,
		store:      st,
		execs:      execs,
		now:        now,
		rec:        newRecorder(st, cfg.StoreTimeout),
		fin:        newFinisher(st, cfg.StoreTimeout),
		slots:      make(chan struct{}, cfg.MaxDeliveries),
		workCtx:    workCtx,
		cancelWork: cancel,
		inflight:   map[string]bool{},
		active:     map[string]int{},
		counted:    map[string]bool{},
		queued:     map[string][][]queuedRun{},
		waiting:    map[string]bool{},
		recording:  map[string]bool{},
		started:    now(),
	}
}

func cmpOr(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// Params name one slot to fire.
type Params struct {
	// Armed is the task as this node armed it. A newer version with the same
	// schedule fires with its new content; a different schedule is Stale.
	Armed   *task.Task
	Slot    time.Time
	Trigger task.TriggerType
	// NextFire is the slot after this one (zero when none), shown on the row.
	NextFire time.Time
	// Preread says the caller has just read the task (one read for many
	// tasks due together): Read is it as read, nil when it no longer
	// exists, and Fire does not read it again.
	Preread bool
	Read    *task.Task
}

// Fire fires one slot: ownership check, ledger insert, then delivery in the
// background. It returns the task as read, for the caller's bookkeeping.
// After Shutdown it fires nothing and returns an error wrapping
// context.Canceled.
func (f *Firer) Fire(ctx context.Context, p Params) (Outcome, *task.Task, error) {
	r := f.FireAll(ctx, []Params{p})[0]
	return r.Outcome, r.Task, r.Err
}

// Result is FireAll's answer for one slot: what Fire returns.
type Result struct {
	Outcome Outcome
	Task    *task.Task
	Err     error
}

// FireAll fires each of ps as Fire does (ps name distinct tasks, such as
// the tasks due at one instant), checking them all, then handing all
// their ledger records to the group commit at once, then starting their
// deliveries: out[i] is Fire's answer for ps[i]. A bucket of tasks due
// together is a few calls of FireAll, not one goroutine and one
// submission per task.
func (f *Firer) FireAll(ctx context.Context, ps []Params) []Result {
	out := make([]Result, len(ps))
	f.mu.Lock()
	closed := f.closed
	f.mu.Unlock()
	if closed {
		for i, p := range ps {
			out[i].Err = fmt.Errorf("fire %s at %s: firer is shut down: %w",
				p.Armed.TaskID, p.Slot.Format(time.RFC3339Nano), context.Canceled)
		}
		return out
	}
	// The checks share one StoreTimeout: a store that does not answer
	// fails the remaining checks at once, not each after a timeout of its
	// own one after another.
	cctx, cancel := context.WithTimeout(ctx, f.cfg.StoreTimeout)
	defer cancel()
	preps := make([]firePrep, len(ps))
	var recs []store.FireRecord
	for i, p := range ps {
		var ok bool
		preps[i], out[i], ok = f.prepare(cctx, p)
		if ok {
			preps[i].from = len(recs)
			recs = append(recs, recordsOf(preps[i].routes, preps[i].status)...)
		}
	}
	if len(recs) == 0 {
		return out
	}
	results, recorded := f.record(recs)
	defer recorded()
	for i := range ps {
		if pr := &preps[i]; pr.routes != nil {
			out[i] = f.deliverRecorded(pr, results[pr.from:pr.from+len(pr.routes)])
		}
	}
	return out
}

// firePrep is one slot of FireAll that passed its checks: the task as
// read, where its runs go, the status its records carry, and where its
// records start among the call's.
type firePrep struct {
	p      Params
	t      *task.Task
	routes []route
	status store.TaskStatusParams
	from   int
}

// prepare checks p's task (read unless p.Preread) and works out its runs.
// ok false: the slot ends here, with answer as Fire's.
func (f *Firer) prepare(ctx context.Context, p Params) (pr firePrep, answer Result, ok bool) {
	t, err := p.Read, error(nil)
	if !p.Preread {
		t, err = f.getTask(ctx, p.Armed.TaskID)
	}
	if t == nil && err == nil || errors.Is(err, task.ErrNotFound) {
		return pr, Result{Outcome: Stale}, false
	}
	if err != nil {
		return pr, Result{Err: err}, false
	}
	if t.IsEnable != 1 || t.IsDone == 1 || t.ClaimedBy != f.cfg.Node || t.State != task.StateRunning ||
		(t.Version != p.Armed.Version && !t.SameSchedule(p.Armed)) {
		return pr, Result{Outcome: Stale, Task: t}, false
	}
	routes, err := f.routes(ctx, t, p.Slot, p.Trigger, nil)
	if err != nil {
		return pr, Result{Task: t, Err: err}, false
	}
	overlap := task.OverlapOf(t)
	if overlap != task.OverlapAllow && f.busy(t.TaskID) && f.unfinishedInLedger(ctx, t.TaskID) {
		holdForOverlap(routes, overlap, f.now())
	}
	// The ledger records and the row's feedback are written together, in a
	// transaction shared with the fires that are due at the same time (a
	// delayed job's feedback at its end instead: statusAtEnd).
	status := firedStatus(routes, store.TaskStatusParams{TaskID: t.TaskID, LastFire: p.Slot, NextFire: p.NextFire, SetNextFire: true})
	if statusAtEnd(t, p.Trigger) && p.NextFire.IsZero() && allRunning(routes) {
		status = store.TaskStatusParams{TaskID: t.TaskID} // sets nothing: only checks that the task exists
	}
	return firePrep{p: p, t: t, routes: routes, status: status}, Result{}, true
}

// statusAtEnd reports whether t's feedback (last_fire, next_fire,
// last_status) for a run of trigger is written only when the run ends,
// not also when it fires: so for a delayed job, which has one slot, no
// row to mirror onto and no absence watch. The API shows a job's state
// from its runs, so the task's feedback between the fire and the end
// shows nothing a reader needs; writing it once instead of twice spares
// the store a task write per job (docs/BENCHMARKS.md, "Drain: a delayed
// job's task written once"). The fire record then only checks that the
// task still exists; finish and accept write the slot as last_fire.
func statusAtEnd(t *task.Task, trigger task.TriggerType) bool {
	return t.Job != nil && t.ExecuteType == task.Once && t.RowID == "" && trigger.Scheduled() &&
		(t.Alert == nil || t.Alert.Absent == 0)
}

// allRunning reports whether every run of routes is to be delivered now
// (none skipped or queued by the overlap policy).
func allRunning(routes []route) bool {
	return !slices.ContainsFunc(routes, func(r route) bool { return r.run.State != task.RunRunning })
}

// deliverRecorded handles the ledger's results for pr's records: each run it
// inserted is announced and delivered (or queued behind its task's
// overlap), and the answer is Fire's.
func (f *Firer) deliverRecorded(pr *firePrep, results []store.FireResult) Result {
	t, routes := pr.t, pr.routes
	fired := false
	var waiting []queuedRun
	for i, res := range results {
		switch {
		case errors.Is(res.Err, task.ErrNotFound):
			return Result{Outcome: Stale, Task: t} // deleted meanwhile
		case res.Err != nil:
			return Result{Task: t, Err: fmt.Errorf("record fire of %s at %s: %w", t.TaskID, pr.p.Slot.Format(time.RFC3339Nano), res.Err)}
		case res.Inserted:
			fired = true
			f.notify(t, routes[i].target, routes[i].run)
			switch routes[i].run.State {
			case task.RunRunning:
				f.deliverAsync(t, routes[i].target, routes[i].run, true)
			case task.RunPending:
				waiting = append(waiting, queuedRun{t: t, target: routes[i].target, run: routes[i].run})
			}
		}
	}
	if len(waiting) > 0 {
		f.enqueue(waiting)
	}
	if !fired {
		return Result{Outcome: Duplicate, Task: t}
	}
	return Result{Outcome: Fired, Task: t}
}

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
		f.finish(ctx, t, nil, taken, task.RunDead, fmt.Sprintf("target %q not found", taken.Target))
		f.release(r)
		return true, nil
	}
	if err != nil {
		f.release(r) // still ours (fenced); the rescuer tries again
		return false, err
	}
	f.logger.InfoContext(ctx, "run taken over", "task_id", t.TaskID, "trigger_id", taken.TriggerID,
		"from_node", r.Node, "fence", taken.Fence, "state", r.State, "deadline", r.Deadline, "why", why)
	// The stored attempt was cut short (running, pending) or failed and
	// awaits its retry (failed): either way it counts, and the next one
	// is attempt+1. deliver honours the stored next_attempt.
	taken.Attempt++
	taken.State = task.RunRunning
	f.start(t, tg, taken, false)
	return true, nil
}

// takeOver bumps r's fence with this node as owner. It returns nil, nil
// when r finished or someone else took it meanwhile.
func (f *Firer) takeOver(ctx context.Context, r *task.Run) (*task.Run, error) {
	sctx, cancel := context.WithTimeout(ctx, f.cfg.StoreTimeout)
	defer cancel()
	taken, err := f.store.TakeOverRun(sctx, store.TakeOverParams{TriggerID: r.TriggerID, Fence: r.Fence,
		Deadline: r.Deadline, Node: f.cfg.Node})
	if errors.Is(err, task.ErrFenced) || errors.Is(err, task.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return taken, nil
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
	f.finish(ctx, &task.Task{TaskID: r.TaskID}, nil, taken, task.RunCancelled, why)
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

// deliverAsync starts delivering run to tg (nil: the task's own channel)
// unless this process already is. stored says the run is in the ledger as
// it is (a fresh fire).
func (f *Firer) deliverAsync(t *task.Task, tg *task.Target, run *task.Run, stored bool) bool {
	if !f.reserve(run) {
		return false
	}
	f.start(t, tg, run, stored)
	return true
}

// reserve marks a run as being delivered by this process; false when it
// already is, or the Firer is shut down. Every reserve is matched by one
// release (start does it when the delivery ends).
func (f *Firer) reserve(r *task.Run) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed || f.inflight[r.TriggerID] {
		return false
	}
	f.inflight[r.TriggerID] = true
	if overlaps(r) {
		f.active[r.TaskID]++
		f.counted[r.TriggerID] = true
	}
	f.wg.Add(1)
	return true
}

// reserveIdle is reserve for a run read from the store: false also when
// this process is recording the run or holds it queued.
func (f *Firer) reserveIdle(r *task.Run) bool {
	f.mu.Lock()
	busy := f.recording[r.TriggerID] || f.waiting[r.TriggerID]
	f.mu.Unlock()
	// Not racy: a run leaves recording only once it is reserved or queued.
	return !busy && f.reserve(r)
}

// record writes recs through the group commit with their runs marked as
// being recorded here; call done once each inserted run is reserved
// (deliverAsync) or queued.
func (f *Firer) record(recs []store.FireRecord) (results []store.FireResult, done func()) {
	f.mu.Lock()
	for _, rec := range recs {
		f.recording[rec.Run.TriggerID] = true
	}
	f.mu.Unlock()
	return f.rec.submit(recs...), func() {
		f.mu.Lock()
		for _, rec := range recs {
			delete(f.recording, rec.Run.TriggerID)
		}
		f.mu.Unlock()
	}
}

// release ends a reservation. The last delivery of a task to end starts
// the task's oldest queued slot (overlap: queue).
func (f *Firer) release(r *task.Run) {
	f.mu.Lock()
	delete(f.inflight, r.TriggerID)
	f.mu.Unlock()
	f.deactivate(r)
	f.wg.Done()
}

// deactivate stops counting r as a delivery in progress of its task for
// the overlap policy, once: as soon as its outcome is stored (finish), or
// when its delivery ends. The work after the outcome (callbacks, alerts)
// then no longer makes the task's next slot look overlapping. The last
// one of a task starts its oldest queued slot (overlap: queue).
func (f *Firer) deactivate(r *task.Run) {
	f.mu.Lock()
	var next []queuedRun
	if f.counted[r.TriggerID] {
		delete(f.counted, r.TriggerID)
		if f.active[r.TaskID]--; f.active[r.TaskID] <= 0 {
			delete(f.active, r.TaskID)
			next = f.popQueuedLocked(r.TaskID)
		}
	}
	f.mu.Unlock()
	for _, q := range next {
		f.deliverAsync(q.t, q.target, q.run, false)
	}
}

// overlaps reports whether r counts as a delivery of its task for the
// overlap policy: an alert about the task does not.
func overlaps(r *task.Run) bool { return r.TriggerType != task.TriggerAlert }

// unfinishedInLedger reports whether the ledger holds an unfinished run of
// taskID (not an alert): the check behind busy, since a delivery here is
// still counted for a moment after its outcome is stored. A read error
// counts as unfinished (the overlap policy then applies, as before).
func (f *Firer) unfinishedInLedger(ctx context.Context, taskID string) bool {
	sctx, cancel := context.WithTimeout(ctx, f.cfg.StoreTimeout)
	defer cancel()
	runs, err := f.store.UnfinishedRuns(sctx, taskID)
	if err != nil {
		return true
	}
	for _, r := range runs {
		if overlaps(r) {
			return true
		}
	}
	return false
}

// busy reports whether taskID has deliveries in progress here, or slots
// waiting for them.
// Busy reports whether a run of taskID is being delivered or queued here.
func (f *Firer) Busy(taskID string) bool { return f.busy(taskID) }

func (f *Firer) busy(taskID string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.active[taskID] > 0 || len(f.queued[taskID]) > 0
}

// enqueue queues one slot's runs (overlap: queue) behind the task's
// deliveries in progress, or starts them when those ended meanwhile.
func (f *Firer) enqueue(slot []queuedRun) {
	id := slot[0].run.TaskID
	f.mu.Lock()
	f.queued[id] = append(f.queued[id], slot)
	for _, q := range slot {
		f.waiting[q.run.TriggerID] = true
	}
	var next []queuedRun
	if f.active[id] == 0 {
		next = f.popQueuedLocked(id)
	}
	f.mu.Unlock()
	for _, q := range next {
		f.deliverAsync(q.t, q.target, q.run, false)
	}
}

// popQueuedLocked takes the oldest queued slot of taskID (f.mu held).
func (f *Firer) popQueuedLocked(taskID string) []queuedRun {
	q := f.queued[taskID]
	if len(q) == 0 {
		return nil
	}
	next := q[0]
	for _, r := range next {
		delete(f.waiting, r.run.TriggerID)
	}
	if len(q) == 1 {
		delete(f.queued, taskID)
	} else {
		f.queued[taskID] = q[1:]
	}
	return next
}

// holdForOverlap applies a busy task's overlap policy to the runs of a
// scheduled fire about to be recorded: skip ends each run that would be
// delivered as skipped, with the reason; queue records it pending, to be
// delivered after the runs before it.
func holdForOverlap(routes []route, policy task.Overlap, now time.Time) {
	for _, r := range routes {
		if r.run.State != task.RunRunning {
			continue
		}
		switch policy {
		case task.OverlapSkip:
			r.run.State, r.run.Attempt, r.run.FinishedAt = task.RunSkipped, 0, now
			r.run.Error = "the previous run was still in progress (overlap: skip)"
			r.run.Deadline = time.Time{}
		case task.OverlapQueue:
			r.run.State, r.run.Deadline = task.RunPending, time.Time{}
		}
	}
}

// start delivers a reserved run in its own goroutine and releases it at
// the end.
func (f *Firer) start(t *task.Task, tg *task.Target, run *task.Run, stored bool) {
	go func() {
		defer f.release(run)
		f.deliver(f.workCtx, t, tg, run, stored)
	}()
}

// Shutdown stops accepting deliveries and waits for running ones until ctx
// ends; then it cancels them (they stay unfinished in the ledger and are
// resumed by whichever node arms the task next). Safe to call twice.
func (f *Firer) Shutdown(ctx context.Context) error {
	f.mu.Lock()
	f.closed = true
	f.mu.Unlock()
	done := make(chan struct{})
	go func() { f.wg.Wait(); close(done) }()
	select {
	case <-done:
		f.cancelWork()
		return nil
	case <-ctx.Done():
		f.cancelWork()
		<-done
		return ctx.Err()
	}
}

func (f *Firer) getTask(ctx context.Context, id string) (*task.Task, error) {
	sctx, cancel := context.WithTimeout(ctx, f.cfg.StoreTimeout)
	defer cancel()
	return f.store.GetTask(sctx, id)
}

// backoff returns the delay before retry number attempt (1-based).
func (f *Firer) backoff(attempt int) time.Duration {
	d := f.cfg.BackoffBase
	for i := 1; i < attempt && d < f.cfg.BackoffMax; i++ {
		d *= 2
	}
	d = min(d, f.cfg.BackoffMax)
	jitter := 0.8 + 0.4*rand.Float64()
	return time.Duration(float64(d) * jitter)
}

// NewTriggerID returns a new trigger id: "tr_" and 20 digits and
// lower-case letters, the first nine the time it was made (ids sort by it,
// so the runs table's index on them grows at its end; see package timeid),
// the other eleven random.
func NewTriggerID() string {
	return timeid.New("tr_", timeid.Base36, 20, time.Now())
}

// notify reports a stored change of run to Config.OnRun.
func (f *Firer) notify(t *task.Task, tg *task.Target, run *task.Run) {
	if f.cfg.OnRun != nil {
		f.cfg.OnRun(t, tg, *run)
	}
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
	f.finish(ctx, t, nil, taken, task.RunCancelled, why)
	sctx, cancel = context.WithTimeout(ctx, f.cfg.StoreTimeout)
	defer cancel()
	return f.store.GetRun(sctx, triggerID)
}
