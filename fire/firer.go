package fire

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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
	AddFeedback(ctx context.Context, p store.FeedbackParams) (*task.Run, error)
	ExpireAccepted(ctx context.Context, now time.Time, limit int, status func(*task.Run) store.TaskStatusParams) ([]*task.Run, error)
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
	// OnRun, when set, is called once after each change of a run's state
	// is stored (a fire or trigger recorded, an attempt failed, the target
	// accepted, the run finished by its target's answer, its final report,
	// a timeout or a cancel) with the task as fired (as read, for a change
	// that is not a delivery's), the target delivered to (nil for the
	// task's own channel, or when the change is not a delivery's: a
	// report, a timeout, a cancel, an orphan's end) and the run as stored.
	// It is called from delivery goroutines and API handlers and must not
	// block.
	OnRun func(t *task.Task, tg *task.Target, r task.Run)
	// OnFire, when set, is called once for each run a fire records (a
	// slot's, a trigger's, an alert's), just before OnRun is told of it,
	// with the same arguments; OnRun is then told of its later changes
	// only. It must not block either.
	OnFire func(t *task.Task, tg *task.Target, r task.Run)
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
	// that the store fails (default 1m) when no delivered call waits on
	// it: an attempt's record before its call, a cancel. A write still
	// failing then is left to the rescuer: the run stays unfinished, owned
	// here, and no call was made under it. The outcome of a delivered call
	// (accepted, done, dead, failed) is retried until it is stored, or
	// until Shutdown's deadline (see whileAlive).
	PersistFor time.Duration
	// Gate, when set, is waited on before each attempt, before a delivery
	// slot is taken (flow control: concurrency groups, host rate limits).
	// It returns the release to call when the attempt is over; an error
	// (ctx ended) ends the delivery, leaving the run for resumption.
	Gate func(ctx context.Context, t *task.Task, tg *task.Target) (release func(), err error)
	// Standing, when set, says whether this process may still deliver
	// under its node id (nil: it may). It is asked after the wait for a
	// delivery slot, which comes after the Gate and may be long: a process
	// that lost its node id meanwhile makes no call, and the run stays
	// unfinished for the id's new process.
	Standing func(ctx context.Context) error
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
	runs   *groupCommit[runWrite, runWritten]               // records and finished runs together; nil: rec and fin
	slots  chan struct{}                                    // delivery slots (Config.MaxDeliveries)
	health *healthBook                                      // nil: the store keeps no target health

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
	// answering holds the trigger ids whose call is in flight here, each
	// with a final report that ended the run meanwhile (answer.go).
	answering map[string]*heldReport
	closed    bool
}

// queuedRun is a run recorded pending under the queue overlap policy,
// waiting for the task's deliveries in progress to end.
type queuedRun struct {
	t      *task.Task
	target *task.Target
	run    *task.Run
}

// New returns a Firer. now may be nil (time.Now). When st is also a
// HealthStore, the outcome of every delivery attempt at a stored target
// is recorded in the target's health.
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
	f := &Firer{
		logger:     logger.With("component", "fire"),
		cfg:        cfg,
		store:      st,
		execs:      execs,
		now:        now,
		rec:        newRecorder(st, cfg.StoreTimeout),
		fin:        newFinisher(st, cfg.StoreTimeout),
		runs:       newRunWriter(st, cfg.StoreTimeout),
		slots:      make(chan struct{}, cfg.MaxDeliveries),
		workCtx:    workCtx,
		cancelWork: cancel,
		inflight:   map[string]bool{},
		active:     map[string]int{},
		counted:    map[string]bool{},
		queued:     map[string][][]queuedRun{},
		waiting:    map[string]bool{},
		recording:  map[string]bool{},
		answering:  map[string]*heldReport{},
		started:    now(),
	}
	if hs, ok := st.(HealthStore); ok {
		f.health = &healthBook{logger: f.logger, store: hs, timeout: cfg.StoreTimeout, wg: &f.wg,
			pending: map[string]*store.TargetOutcome{}}
	}
	return f
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
	began := f.now()
	results, recorded := f.record(recs)
	defer recorded()
	f.resolveUnknown(recs, results)
	slow := f.now().Sub(began) > slowRecord
	for i := range ps {
		if pr := &preps[i]; pr.routes != nil {
			out[i] = f.deliverRecorded(pr, results[pr.from:pr.from+len(pr.routes)], slow)
		}
	}
	return out
}

// slowRecord is how long a fire's ledger record may take before its runs,
// recorded, read their task again before the call (deliverRechecked): a
// record retried after store errors, or held by a busy store, can end
// after the task was switched off, stopped, closed or deleted, and a
// client told so must not see the call come in later.
const slowRecord = 100 * time.Millisecond

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
	overlap := OverlapOf(t, p.Trigger)
	if overlap != task.OverlapAllow && f.busy(t.TaskID) && f.unfinishedInLedger(ctx, t.TaskID) {
		holdForOverlap(routes, overlap, f.queueFull(t.TaskID, p.Trigger), f.now())
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
// overlap), and the answer is Fire's. After a slow record (slowRecord)
// each run reads its task again before its call.
func (f *Firer) deliverRecorded(pr *firePrep, results []store.FireResult, slow bool) Result {
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
			f.observeFire(t, routes[i].target, routes[i].run)
			switch routes[i].run.State {
			case task.RunRunning:
				if slow {
					f.deliverRechecked(t, routes[i].target, routes[i].run)
				} else {
					f.deliverAsync(t, routes[i].target, routes[i].run, true)
				}
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
