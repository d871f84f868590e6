// Package arming holds the tasks claimed by this node armed in gocron
// until they fire: one one-time job per due instant (a bucket) fires every
// task due then, each scheduling its following slot before it fires this
// one. Tasks due beyond the arming window are parked (id, version and due
// instant only) and read back as they enter it; those due more than two
// windows ahead are handed back to the store. Armer implements
// patrol.Armer for the publish and reconcile patrols, and its Run loop
// promotes, hands back and sweeps every second.
package arming

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/go-co-op/gocron/v2"
	"github.com/google/uuid"
	"github.com/jonboulle/clockwork"

	"cronsheet/fire"
	"cronsheet/patrol"
	"cronsheet/store"
	"cronsheet/task"
)

// Store is what arming needs from storage beyond the Firer's needs.
type Store interface {
	GetTasks(ctx context.Context, taskIDs []string) ([]*task.Task, error)
	TaskHeads(ctx context.Context, taskIDs []string) ([]store.TaskHead, error)
	LastSlots(ctx context.Context, taskIDs []string) (map[string]time.Time, error)
	UnfinishedRunsOf(ctx context.Context, taskIDs []string) (map[string][]*task.Run, error)
	SetTaskStatus(ctx context.Context, p store.TaskStatusParams) error
	SetTaskStatuses(ctx context.Context, ps []store.TaskStatusParams) error
	ParkTasks(ctx context.Context, owner string, ps []store.ParkParams) ([]string, error)
}

// Armer keeps the tasks armed here in gocron: one one-time job per
// distinct due instant (a bucket), which fires every task due then; ten
// thousand tasks due in the same second are one gocron job. When a bucket
// fires, each of its tasks first schedules its following slot (joining
// that instant's bucket), then fires this one, concurrently, so their
// ledger records share group commits and a slow fire never delays the
// schedule.
//
// A one-time job that has run stays registered in gocron until removed. It
// is not removed as it runs (gocron's WithLimitedRuns removes each job
// inside the burst that fires it, which makes a large burst late): Sweep
// removes run jobs in bulk, outside the burst.
//
// The arming window: only tasks due within window wait in a bucket. A task
// due later is parked: held as its id, version and due instant, without
// its task or parsed schedule, in a queue by due instant; Promote (every
// second) reads the tasks entering the window back from the store in
// batches and puts them in their buckets. A parked task is still armed
// here (its claim is renewed, reconcile sees it), so ownership works as for
// any other; it only costs less memory, and gocron holds no job for it.
//
// A task parked for long, due more than twice the window ahead, is handed
// back to the store (Shed, store.Tasks.ParkTasks) with the instant a
// window before its slot: no node holds it until then (no lease to renew,
// nothing in memory), and the publish patrol, which claims soonest first
// and only tasks whose instant has come, claims it again a window before
// it is due. An edit makes it claimable at once.
type Armer struct {
	logger *slog.Logger
	sched  gocron.Scheduler
	firer  *fire.Firer
	store  Store
	clock  clockwork.Clock // Config.Clock
	now    func() time.Time
	// fireHook, when set, receives each fire's lag (slot → job start).
	fireHook func(slot time.Time, lag time.Duration)
	// armHook, when set, is called after a task is armed.
	armHook func(taskID string)
	ctx     context.Context // the fires' context, cancelled at shutdown
	// window: tasks due later than this from now are parked (0: none is).
	window time.Duration
	// node is this node's id, the owner of its claims (for Shed).
	node string

	mu      sync.Mutex
	gen     uint64
	jobs    map[string]*armedTask
	buckets map[int64]*bucket // by due instant, unix nanoseconds
	parked  parkQueue         // tasks due beyond the window, soonest first
	ran     []uuid.UUID       // one-time jobs that have run, for Sweep
	// flights holds each task's last fire still in flight here, which
	// its next fire waits for (inflight.go).
	flights map[string]*flight
}

// Config is what an Armer is built with.
type Config struct {
	// Node is this node's id, the owner of its claims; Shed hands parked
	// tasks back to the store only when it is set.
	Node string
	// Window is the arming window: tasks due later than this from now are
	// parked (0: none is).
	Window time.Duration
	// StopTimeout bounds Shutdown's wait for the fires gocron is running
	// (0: gocron's default).
	StopTimeout time.Duration
	// OnFire, when set, is called at the start of every scheduled fire
	// with its slot and its lag (slot → fire start).
	OnFire func(slot time.Time, lag time.Duration)
	// OnArm, when set, is called each time a task is armed.
	OnArm func(taskID string)
	// Clock is the time slots come due on: gocron waits on it, and the
	// Armer reads it to plan misfires, to tell a slot due from one ahead
	// and to park and promote (Run's passes still come every second of
	// the host clock). Nil is the host clock. Tests give a
	// clockwork.FakeClock (with the same clock's Now as the Firer's now)
	// to move a node's time across a night in steps.
	Clock clockwork.Clock
}

// New returns an Armer firing through f, over a gocron scheduler of its
// own that Run starts and Shutdown stops. ctx is the fires' context:
// cancel it once the firer has stopped.
func New(ctx context.Context, logger *slog.Logger, cfg Config, f *fire.Firer, st Store) (*Armer, error) {
	clock := cfg.Clock
	if clock == nil {
		clock = clockwork.NewRealClock()
	}
	opts := []gocron.SchedulerOption{gocron.WithLogger(logger.With("component", "gocron")), gocron.WithClock(clock)}
	if cfg.StopTimeout > 0 {
		opts = append(opts, gocron.WithStopTimeout(cfg.StopTimeout))
	}
	sched, err := gocron.NewScheduler(opts...)
	if err != nil {
		return nil, fmt.Errorf("create scheduler: %w", err)
	}
	return &Armer{
		logger:   logger.With("component", "armer"),
		sched:    sched,
		firer:    f,
		store:    st,
		clock:    clock,
		now:      clock.Now,
		ctx:      ctx,
		fireHook: cfg.OnFire,
		armHook:  cfg.OnArm,
		window:   cfg.Window,
		node:     cfg.Node,
		jobs:     map[string]*armedTask{},
		buckets:  map[int64]*bucket{},
		flights:  map[string]*flight{},
	}, nil
}

// Run starts the scheduler and then, every second until ctx ends,
// promotes the parked tasks entering the window, hands back to the store
// those due far beyond it and removes gocron's spent one-time jobs. The
// armed tasks keep firing after Run returns, until Shutdown.
func (a *Armer) Run(ctx context.Context) {
	a.sched.Start()
	ticker := time.NewTicker(time.Second)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
			a.tick(ctx)
		}
	}
}

// tick is one pass of Run: Promote, Shed and Sweep, each store failure
// logged and tried again on the next pass.
func (a *Armer) tick(ctx context.Context) {
	if _, err := a.Promote(ctx); err != nil && ctx.Err() == nil {
		a.logger.Warn("parked tasks stay parked until the store answers", "error", err)
	}
	if _, err := a.Shed(ctx); err != nil && ctx.Err() == nil {
		a.logger.Warn("parked tasks stay armed here until the store answers", "error", err)
	}
	a.Sweep()
}

// Shutdown stops the scheduler: no bucket fires any more, and the fires
// it is running end within the stop timeout. It is safe to call when Run
// never started it.
func (a *Armer) Shutdown() error {
	if err := a.sched.Shutdown(); err != nil {
		return fmt.Errorf("scheduler shutdown: %w", err)
	}
	return nil
}

// Scheduled returns how many jobs gocron holds: one per bucket, plus the
// spent ones Sweep has yet to remove.
func (a *Armer) Scheduled() int { return len(a.sched.Jobs()) }

// Pending is a delayed job armed here waiting for its due instant.
type Pending struct {
	ID    string
	DueAt time.Time
}

// Summary returns how many tasks are armed here, and the delayed jobs
// among them waiting for their instant (in no order).
func (a *Armer) Summary() (armed int, pending []Pending) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for id, e := range a.jobs {
		if !e.dueAt.IsZero() && !e.due.IsZero() {
			pending = append(pending, Pending{ID: id, DueAt: e.dueAt})
		}
	}
	return len(a.jobs), pending
}

var _ patrol.Armer = (*Armer)(nil)

// armedTask is one task armed here.
type armedTask struct {
	id      string     // the task's id
	task    *task.Task // as armed, or as last fired (a.mu); nil while parked
	slots   fire.Slots // zero while parked
	version int64      // the task's version as armed, or as last fired
	gen     uint64
	due     time.Time // the instant it waits for (in a bucket or parked); zero when none
	dueAt   time.Time // a delayed job's due instant, for the status page
	parkIdx int       // its index in Armer.parked; -1 when not parked
}

// newArmedTask returns the entry of t armed with slots under gen.
func newArmedTask(t *task.Task, slots fire.Slots, gen uint64) *armedTask {
	e := &armedTask{id: t.TaskID, task: t, slots: slots, version: t.Version, gen: gen, parkIdx: -1}
	if j := t.Job; j != nil {
		e.dueAt = j.DueAt
	}
	return e
}

// Arm schedules t here, replacing an older arming of the same task: it fires
// the slots missed while no node held the task (per its misfire policy),
// resumes its unfinished runs, and schedules the next slot. A task that is
// not running (stopped, closed) is held without a schedule: it fires only
// by hand (stopped) or not at all (closed), and shows no next fire.
func (a *Armer) Arm(ctx context.Context, t *task.Task) error {
	return a.ArmBatch(ctx, []*task.Task{t})[0]
}

// Disarm removes a task's schedule. Runs of it queued here (overlap:
// queue) end at once when the task was switched off, stopped, closed or
// deleted (fire.Firer.EndQueued); otherwise they wait for their turn.
func (a *Armer) Disarm(taskID string) {
	a.mu.Lock()
	a.removeJobLocked(taskID)
	delete(a.jobs, taskID)
	a.mu.Unlock()
	a.firer.EndQueued(a.ctx, taskID) // outside a.mu: the armer never holds it over the firer's lock
}

// disarmGen disarms taskID when it is still armed under gen (not
// re-armed since).
func (a *Armer) disarmGen(taskID string, gen uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if e := a.jobs[taskID]; e != nil && e.gen == gen {
		a.removeJobLocked(taskID)
		delete(a.jobs, taskID)
	}
}

// removeJobLocked takes taskID out of its bucket or the parked queue
// (a.mu held).
func (a *Armer) removeJobLocked(taskID string) {
	if e := a.jobs[taskID]; e != nil {
		a.leaveBucketLocked(e)
	}
}

// Armed returns the ids of the tasks armed here.
func (a *Armer) Armed() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	ids := make([]string, 0, len(a.jobs))
	for id := range a.jobs {
		ids = append(ids, id)
	}
	return ids
}
