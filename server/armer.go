package server

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-co-op/gocron/v2"
	"github.com/google/uuid"

	"cronsheet/fire"
	"cronsheet/mapping"
	"cronsheet/patrol"
	"cronsheet/store"
	"cronsheet/task"
)

// armStore is what arming needs from storage beyond the Firer's needs.
type armStore interface {
	GetTasks(ctx context.Context, taskIDs []string) ([]*task.Task, error)
	TaskHeads(ctx context.Context, taskIDs []string) ([]store.TaskHead, error)
	LastSlots(ctx context.Context, taskIDs []string) (map[string]time.Time, error)
	UnfinishedRunsOf(ctx context.Context, taskIDs []string) (map[string][]*task.Run, error)
	SetTaskStatus(ctx context.Context, p store.TaskStatusParams) error
	SetTaskStatuses(ctx context.Context, ps []store.TaskStatusParams) error
	ParkTasks(ctx context.Context, owner string, ps []store.ParkParams) ([]string, error)
}

// armer keeps the tasks armed here in gocron: one one-time job per
// distinct due instant (a bucket), which fires every task due then; ten
// thousand tasks due in the same second are one gocron job. When a bucket
// fires, each of its tasks first schedules its following slot (joining
// that instant's bucket), then fires this one, concurrently, so their
// ledger records share group commits and a slow fire never delays the
// schedule.
//
// A one-time job that has run stays registered in gocron until removed. It
// is not removed as it runs (gocron's WithLimitedRuns tripled the lag of a
// 10k-job burst): Sweep removes run jobs in bulk, outside the burst.
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
type armer struct {
	logger *slog.Logger
	sched  gocron.Scheduler
	firer  *fire.Firer
	store  armStore
	now    func() time.Time
	// fireHook, when set, receives each fire's lag (slot → job start).
	fireHook func(slot time.Time, lag time.Duration)
	// armHook, when set, is called after a task is armed.
	armHook func(taskID string)
	ctx     context.Context // cancelled at shutdown
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
}

var _ patrol.Armer = (*armer)(nil)

// armedTask is one task armed here.
type armedTask struct {
	id      string     // the task's id
	task    *task.Task // as armed, or as last fired (a.mu); nil while parked
	slots   fire.Slots // zero while parked
	version int64      // the task's version as armed, or as last fired
	gen     uint64
	due     time.Time // the instant it waits for (in a bucket or parked); zero when none
	dueAt   time.Time // a delayed job's due instant, for the status page
	parkIdx int       // its index in armer.parked; -1 when not parked
}

// newArmedTask returns the entry of t armed with slots under gen.
func newArmedTask(t *task.Task, slots fire.Slots, gen uint64) *armedTask {
	e := &armedTask{id: t.TaskID, task: t, slots: slots, version: t.Version, gen: gen, parkIdx: -1}
	if j := t.Job; j != nil {
		e.dueAt = j.DueAt
	}
	return e
}

// bucket is the tasks due at one instant, and the gocron job that fires
// them (uuid.Nil while it is being created).
type bucket struct {
	at    time.Time
	job   uuid.UUID
	tasks map[string]*armedTask
}

func newArmer(ctx context.Context, logger *slog.Logger, sched gocron.Scheduler, f *fire.Firer, st armStore) *armer {
	return &armer{
		logger:  logger.With("component", "armer"),
		sched:   sched,
		firer:   f,
		store:   st,
		now:     time.Now,
		ctx:     ctx,
		jobs:    map[string]*armedTask{},
		buckets: map[int64]*bucket{},
	}
}

// Arm schedules t here, replacing an older arming of the same task: it fires
// the slots missed while no node held the task (per its misfire policy),
// resumes its unfinished runs, and schedules the next slot. A task that is
// not running (stopped, closed) is held without a schedule: it fires only
// by hand (stopped) or not at all (closed), and shows no next fire.
func (a *armer) Arm(ctx context.Context, t *task.Task) error {
	return a.ArmBatch(ctx, []*task.Task{t})[0]
}

// ArmBatch arms each of ts as Arm does, with the store work of the batch
// shared: one read of the ledger's last slots, one of the unfinished runs,
// and one transaction of the tasks' statuses (falling back to one per task
// when a task of the batch is gone). It returns one error per task, nil for a
// task armed.
func (a *armer) ArmBatch(ctx context.Context, ts []*task.Task) []error {
	errs := make([]error, len(ts))
	if len(ts) == 0 {
		return errs
	}
	ids := make([]string, len(ts))
	for i, t := range ts {
		ids[i] = t.TaskID
	}
	fail := func(err error) []error {
		for i := range errs {
			errs[i] = err
		}
		return errs
	}
	lasts, err := a.store.LastSlots(ctx, ids)
	if err != nil {
		return fail(fmt.Errorf("last slots: %w", err))
	}
	unfinished, err := a.store.UnfinishedRunsOf(ctx, ids)
	if err != nil {
		return fail(fmt.Errorf("unfinished runs: %w", err))
	}
	read := time.Now() // when the runs were read, for ResumeRuns' view of the nodes

	steps := make([]armStep, len(ts))
	var statuses []store.TaskStatusParams
	var of []int // of[k]: the task of statuses[k]
	for i, t := range ts {
		steps[i], errs[i] = a.prepare(ctx, t, lasts[t.TaskID], unfinished[t.TaskID], read)
		if errs[i] == nil {
			statuses = append(statuses, steps[i].status)
			of = append(of, i)
		}
	}
	statusErrs := make([]error, len(statuses))
	// In transactions of armStatusChunk: a claimed batch of thousands in
	// one transaction held the store's one writer for seconds (at 1M
	// pending jobs, past the store timeout), and the fires and outcomes
	// due meanwhile waited behind it.
	for start := 0; start < len(statuses); start += armStatusChunk {
		chunk := statuses[start:min(start+armStatusChunk, len(statuses))]
		switch err := a.store.SetTaskStatuses(ctx, chunk); {
		case errors.Is(err, task.ErrNotFound):
			// A task of the chunk was deleted meanwhile: each on its own,
			// so the others still arm.
			for k, p := range chunk {
				statusErrs[start+k] = a.store.SetTaskStatus(ctx, p)
			}
		case err != nil:
			// The store is out or slow: one write per task would only add
			// to its load. None of the chunk is armed; reconcile releases
			// them, publish retries.
			for k := range chunk {
				statusErrs[start+k] = err
			}
		}
	}
	// The slots missed while no node held a task fire once its status is
	// stored: each task's in order, the tasks concurrently (so their
	// ledger records share group commits; one after another, a batch of
	// jobs armed after their time took a commit each, and the patrol pass
	// fell further behind the jobs it claimed next).
	var missedFires sync.WaitGroup
	defer missedFires.Wait()
	for k, i := range of {
		st := steps[i]
		if statusErrs[k] != nil {
			// Not armed after all (an entry without a gocron job would
			// look armed to reconcile and never fire): reconcile releases
			// the claim and publish arms it again.
			if st.entry != nil {
				a.disarmGen(ts[i].TaskID, st.entry.gen)
			}
			errs[i] = statusErrs[k]
			continue
		}
		if len(st.missed) > 0 {
			missedFires.Go(func() {
				for _, m := range st.missed {
					a.fire(st.entry, m.slot, st.missedType, m.next)
				}
			})
		}
		if st.next.IsZero() {
			continue
		}
		if err := a.schedule(st.entry, st.next); err != nil {
			// Not armed after all: reconcile releases the claim, publish retries.
			a.disarmGen(ts[i].TaskID, st.entry.gen)
			errs[i] = err
			continue
		}
		if a.armHook != nil {
			a.armHook(ts[i].TaskID)
		}
	}
	return errs
}

// armStatusChunk bounds the statuses of one arming transaction.
const armStatusChunk = 500

// armStep is what arming one task leaves to do once the batch's
// statuses are stored: its status, the missed slots to fire (in order,
// as missedType) and the slot to schedule (zero: none).
type armStep struct {
	status     store.TaskStatusParams
	entry      *armedTask
	missed     []missedFire
	missedType task.TriggerType
	next       time.Time
}

// missedFire is one missed slot to fire, and the next fire it reports.
type missedFire struct{ slot, next time.Time }

// prepare arms t in memory, with last (its ledger's last scheduled slot)
// and unfinished (its unfinished runs, read by runsRead) read for the
// batch: it registers t's entry and resumes its runs, and returns the
// status to store, and the missed slots to fire and the next slot to
// schedule once it is stored.
func (a *armer) prepare(ctx context.Context, t *task.Task, last time.Time, unfinished []*task.Run, runsRead time.Time) (armStep, error) {
	sched, err := mapping.Schedule(t)
	if errors.Is(err, task.ErrInvalid) {
		// It can never be armed (a row's mapping refuses such schedules;
		// this one came from elsewhere): held here without a schedule and
		// flagged once, rather than refused, released and claimed again
		// on every pass. An edit re-arms it.
		a.logger.ErrorContext(ctx, "task cannot be scheduled; held without a schedule until edited",
			"task_id", t.TaskID, "error", err)
		a.mu.Lock()
		a.gen++
		a.removeJobLocked(t.TaskID)
		a.jobs[t.TaskID] = newArmedTask(t, fire.Slots{}, a.gen)
		a.mu.Unlock()
		return armStep{status: store.TaskStatusParams{TaskID: t.TaskID, LastStatus: "unschedulable", SetNextFire: true}}, nil
	}
	if err != nil {
		return armStep{}, fmt.Errorf("parse schedule of %s: %w", t.TaskID, err)
	}
	slots := fire.NewSlots(t, sched)
	plan := fire.MakePlan(slots, t.Misfire, last, a.now())
	pending, err := a.firer.ResumeRuns(ctx, t, unfinished, runsRead)
	if err != nil {
		return armStep{}, err
	}

	a.mu.Lock()
	a.gen++
	e := newArmedTask(t, slots, a.gen)
	a.removeJobLocked(t.TaskID)
	a.jobs[t.TaskID] = e
	a.mu.Unlock()

	if t.State != task.StateRunning {
		// Stopped or closed: held here, its unfinished runs resumed, but
		// no slot fires. A state change releases the claim, so it comes
		// back through Arm under its new state at once.
		return armStep{status: store.TaskStatusParams{TaskID: t.TaskID, SetNextFire: true}, entry: e}, nil
	}
	if plan.Skipped > 0 {
		a.logger.InfoContext(ctx, "missed slots skipped", "task_id", t.TaskID, "skipped", plan.Skipped, "policy", t.Misfire)
	}
	if !last.IsZero() && (len(plan.Missed) > 0 || plan.Skipped > 0) {
		// Slots were missed while no node held the task: the first of
		// them is late whatever the misfire policy does with it now.
		if _, err := a.firer.AlertAbsent(ctx, t, slots.Next(last)); err != nil {
			a.logger.WarnContext(ctx, "absence alert", "task_id", t.TaskID, "error", err)
		}
	}
	// A delayed job's one instant is its schedule, however late it is
	// armed (submitted with no delay, unblocked after its time).
	step := armStep{entry: e, missedType: task.TriggerMisfire}
	if t.Job != nil && t.CronPara == "" {
		step.missedType = task.TriggerSchedule
	}
	for i, slot := range plan.Missed {
		next := plan.Next
		if i+1 < len(plan.Missed) {
			next = plan.Missed[i+1]
		}
		step.missed = append(step.missed, missedFire{slot: slot, next: next})
	}
	if plan.Next.IsZero() {
		// The schedule has no slot left. The task is done when its last
		// run is final: now, when no run is unfinished; else the Firer
		// marks it done as that run finishes (usesUpSchedule), and the
		// task stays armed here, without a job, until then.
		done := len(plan.Missed) == 0 && pending == 0
		step.status = store.TaskStatusParams{TaskID: t.TaskID, Done: done, SetNextFire: true}
		return step, nil
	}
	step.status = store.TaskStatusParams{TaskID: t.TaskID, NextFire: plan.Next, SetNextFire: true}
	step.next = plan.Next
	return step, nil
}

// schedule puts e in the bucket of slot, creating the bucket's gocron
// job when it is the first task due then; a slot beyond the window parks
// e instead.
func (a *armer) schedule(e *armedTask, slot time.Time) error {
	key := slot.UnixNano()
	a.mu.Lock()
	if cur := a.jobs[e.id]; cur != e {
		a.mu.Unlock()
		return nil // disarmed or re-armed meanwhile
	}
	a.leaveBucketLocked(e)
	if a.window > 0 && slot.Sub(a.now()) > a.window {
		e.due = slot
		e.task, e.slots = nil, fire.Slots{} // read again when promoted
		heap.Push(&a.parked, e)
		a.mu.Unlock()
		return nil
	}
	b := a.buckets[key]
	fresh := b == nil
	if fresh {
		b = &bucket{at: slot, tasks: map[string]*armedTask{}}
		a.buckets[key] = b
	}
	b.tasks[e.id] = e
	e.due = slot
	a.mu.Unlock()
	if !fresh {
		return nil
	}
	start := gocron.OneTimeJobStartDateTime(slot)
	if !slot.After(a.now()) {
		start = gocron.OneTimeJobStartImmediately()
	}
	job, err := a.sched.NewJob(
		gocron.OneTimeJob(start),
		gocron.NewTask(a.onFire, key),
		gocron.WithName(slot.UTC().Format(time.RFC3339Nano)),
	)
	a.mu.Lock()
	defer a.mu.Unlock()
	if err != nil {
		// Nobody will fire this bucket: its tasks are not armed after all
		// (reconcile releases their claims and publish retries).
		if a.buckets[key] == b {
			delete(a.buckets, key)
		}
		for id, t := range b.tasks {
			if a.jobs[id] == t {
				delete(a.jobs, id)
			}
			t.due = time.Time{}
		}
		return fmt.Errorf("schedule %s at %s: %w", e.id, slot, err)
	}
	if a.buckets[key] != b || len(b.tasks) == 0 {
		_ = a.sched.RemoveJob(job.ID()) // emptied meanwhile: it must not run
		if a.buckets[key] == b {
			delete(a.buckets, key)
		}
		return nil
	}
	b.job = job.ID()
	return nil
}

// leaveBucketLocked takes e out of the bucket it waits in, removing the
// bucket's job when it was the last task due then, or out of the parked
// queue (a.mu held).
func (a *armer) leaveBucketLocked(e *armedTask) {
	if e.parkIdx >= 0 {
		heap.Remove(&a.parked, e.parkIdx)
		e.due = time.Time{}
		return
	}
	if e.due.IsZero() {
		return
	}
	key := e.due.UnixNano()
	e.due = time.Time{}
	b := a.buckets[key]
	if b == nil || b.tasks[e.id] != e {
		return
	}
	delete(b.tasks, e.id)
	if len(b.tasks) == 0 {
		delete(a.buckets, key)
		if b.job != uuid.Nil {
			_ = a.sched.RemoveJob(b.job)
		}
	}
}

// onFire is the gocron task of one instant: it fires every task due then.
func (a *armer) onFire(key int64) {
	slot := time.Unix(0, key)
	if d := slot.Sub(a.now()); d > 0 {
		time.Sleep(d) // a fire is never early
	}
	a.mu.Lock()
	b := a.buckets[key]
	if b == nil {
		a.mu.Unlock()
		return
	}
	delete(a.buckets, key)
	if b.job != uuid.Nil {
		a.ran = append(a.ran, b.job)
	}
	due := make([]*armedTask, 0, len(b.tasks))
	armed := make(map[string]*task.Task, len(b.tasks))
	for id, e := range b.tasks {
		if a.jobs[id] == e && e.due.UnixNano() == key {
			e.due = time.Time{}
			due = append(due, e)
			armed[id] = e.task
		}
	}
	a.mu.Unlock()
	// In id order: job and trigger ids grow with time (package timeid),
	// so the runs, job events and statuses the fires write go to the ends
	// of their indexes, a few pages per group commit, rather than in
	// random order all over them.
	slices.SortFunc(due, func(x, y *armedTask) int { return strings.Compare(x.id, y.id) })
	// The fires of each chunk start as soon as its tasks are read; the
	// next chunk is read while they run. A chunk's fires go in groups of
	// fireGroup, each group one FireAll on one goroutine (its ledger
	// records one submission to the group commit), not a goroutine each:
	// thousands of runnable fire goroutines took the cores from the loop
	// that starts them and from the next chunk's read.
	var wg sync.WaitGroup
	for start := 0; start < len(due); start += store.MaxStatusBatch {
		chunk := due[start:min(start+store.MaxStatusBatch, len(due))]
		read := a.readTasks(chunk, armed)
		var group []*armedTask
		var ps []fire.Params
		flush := func() {
			if len(group) == 0 {
				return
			}
			g, gps := group, ps
			group, ps = nil, nil
			wg.Go(func() {
				for i, res := range a.firer.FireAll(a.ctx, gps) {
					a.settle(g[i], gps[i], res)
				}
			})
		}
		for _, e := range chunk {
			p := a.fireParams(e, slot, armed, read)
			if !groupable(p) {
				wg.Go(func() { a.fireWith(e, p) })
				continue
			}
			group, ps = append(group, e), append(ps, p)
			if len(group) == fireGroup {
				flush()
			}
		}
		flush()
	}
	wg.Wait()
}

// fireGroup is how many tasks of a bucket one FireAll fires.
const fireGroup = 100

// groupable reports whether p's fire may share a FireAll: its task was
// read with the bucket and has no targets, so checking it reads nothing
// more from the store (one that does fires on its own goroutine, its
// reads not queued behind the others').
func groupable(p fire.Params) bool {
	return p.Preread && p.Read != nil && len(p.Read.Targets) == 0
}

// fireParams is the fire of e's slot of a bucket (its tasks read as read,
// nil when that read failed), after arming e's next slot; it marks the
// fire's start for the fire hook.
func (a *armer) fireParams(e *armedTask, slot time.Time, armed map[string]*task.Task, read *bucketRead) fire.Params {
	if a.fireHook != nil {
		a.fireHook(slot, a.now().Sub(slot))
	}
	var next time.Time
	if !e.slots.Once() {
		next = e.slots.Next(slot)
	}
	if !next.IsZero() {
		if err := a.schedule(e, next); err != nil {
			// Not armed any more: reconcile releases the claim and
			// publish arms it again (the slot, if missed, is a
			// misfire then).
			a.logger.Error("schedule next slot", "task_id", e.id, "error", err)
			a.disarmGen(e.id, e.gen)
		}
	}
	p := fire.Params{Armed: armed[e.id], Slot: slot, Trigger: task.TriggerSchedule, NextFire: next}
	if read != nil && !read.moved[e.id] {
		p.Preread, p.Read = true, read.tasks[e.id] // nil: deleted, the fire is stale
	}
	return p
}

// readTasks reads the tasks of a chunk of a bucket (at most
// store.MaxStatusBatch) in one go (nil when the read failed, or for a
// single task: each fire then reads its own task, and reports the store's
// error itself). It reads only their heads: a task still of the version
// it was armed at has the content armed holds, so the heads (claim, done,
// fire status) are set over a copy of that; a task whose version moved is
// marked so, and its fire reads it whole.
func (a *armer) readTasks(chunk []*armedTask, armed map[string]*task.Task) *bucketRead {
	if len(chunk) < 2 {
		return nil
	}
	ids := make([]string, len(chunk))
	for i, e := range chunk {
		ids[i] = e.id
	}
	ctx, cancel := context.WithTimeout(a.ctx, 10*time.Second)
	heads, err := a.store.TaskHeads(ctx, ids)
	cancel()
	if err != nil {
		return nil
	}
	out := &bucketRead{tasks: make(map[string]*task.Task, len(chunk)), moved: map[string]bool{}}
	for _, h := range heads {
		if t := h.Apply(armed[h.TaskID]); t != nil {
			out.tasks[h.TaskID] = t
		} else {
			out.moved[h.TaskID] = true
		}
	}
	return out
}

// bucketRead is what readTasks read of a bucket's tasks.
type bucketRead struct {
	tasks map[string]*task.Task // current, with the content of the armed copy
	moved map[string]bool       // tasks whose version moved since they were armed
}

// fire fires one slot of e and handles the outcome.
func (a *armer) fire(e *armedTask, slot time.Time, trigger task.TriggerType, next time.Time) {
	a.mu.Lock()
	armed := e.task
	a.mu.Unlock()
	a.fireWith(e, fire.Params{Armed: armed, Slot: slot, Trigger: trigger, NextFire: next})
}

// fireWith fires p for e and handles the outcome.
func (a *armer) fireWith(e *armedTask, p fire.Params) {
	a.settle(e, p, a.firer.FireAll(a.ctx, []fire.Params{p})[0])
}

// settle handles the outcome of e's fire p.
func (a *armer) settle(e *armedTask, p fire.Params, res fire.Result) {
	slot, outcome, t, err := p.Slot, res.Outcome, res.Task, res.Err
	switch {
	case errors.Is(err, context.Canceled):
	case err != nil:
		// The store could not take the fire (an outage): the slot is in
		// no ledger. Disarm the task: reconcile releases its claim and
		// publish arms it again once the store answers, and arming fires
		// the slots missed since the ledger's last one by the task's
		// misfire policy, exactly as after a restart. Nothing is dropped
		// silently: each missed slot ends in the ledger or is counted as
		// skipped by the policy.
		a.logger.Error("fire failed; the task is re-armed and its missed slots follow its misfire policy",
			"task_id", e.id, "slot", slot, "error", err)
		a.disarmGen(e.id, e.gen)
	case outcome == fire.Stale:
		a.disarmGen(e.id, e.gen)
	case outcome == fire.Duplicate:
		a.logger.Debug("slot already fired", "task_id", e.id, "slot", slot)
	case t.Version != p.Armed.Version:
		a.mu.Lock()
		if e.version < t.Version {
			e.version = t.Version // same schedule, new content
			if e.task != nil {
				e.task = t
			}
		}
		a.mu.Unlock()
	}
}

// Disarm removes a task's schedule.
func (a *armer) Disarm(taskID string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.removeJobLocked(taskID)
	delete(a.jobs, taskID)
}

func (a *armer) disarmGen(taskID string, gen uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if e := a.jobs[taskID]; e != nil && e.gen == gen {
		a.removeJobLocked(taskID)
		delete(a.jobs, taskID)
	}
}

func (a *armer) removeJobLocked(taskID string) {
	if e := a.jobs[taskID]; e != nil {
		a.leaveBucketLocked(e)
	}
}

// Sweep removes the one-time jobs that have run from gocron; it returns
// how many.
func (a *armer) Sweep() int {
	a.mu.Lock()
	ran := a.ran
	a.ran = nil
	a.mu.Unlock()
	for _, id := range ran {
		_ = a.sched.RemoveJob(id) // gone already when its task was disarmed
	}
	return len(ran)
}

// Armed returns the ids of the tasks armed here.
func (a *armer) Armed() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	ids := make([]string, 0, len(a.jobs))
	for id := range a.jobs {
		ids = append(ids, id)
	}
	return ids
}

// armedSummary is what the status endpoint shows of the armed tasks.
type armedSummary struct {
	total int
	due   []statusNext // delayed jobs waiting for their instant
}

// armedJobs summarises the tasks armed here.
func (a *armer) armedJobs() armedSummary {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := armedSummary{total: len(a.jobs)}
	for id, e := range a.jobs {
		if !e.dueAt.IsZero() && !e.due.IsZero() {
			s.due = append(s.due, statusNext{ID: id, DueAt: e.dueAt})
		}
	}
	return s
}

// Promote moves the parked tasks that have entered the window into their
// buckets: it reads them back from the store in batches (their task and
// schedule were dropped when parked) and returns how many it promoted. A
// task whose version changed meanwhile, or that is gone, is disarmed:
// reconcile releases its claim and publish arms it afresh. When the store
// cannot answer, the tasks stay parked and the next call tries again; a
// slot that passes meanwhile fires late, when promoted, never dropped.
func (a *armer) Promote(ctx context.Context) (int, error) {
	promoted := 0
	for {
		a.mu.Lock()
		horizon := a.now().Add(a.window)
		var batch []*armedTask
		for len(a.parked) > 0 && len(batch) < store.MaxStatusBatch && !a.parked[0].due.After(horizon) {
			e := heap.Pop(&a.parked).(*armedTask)
			batch = append(batch, e) // due kept: it is the slot to schedule
			e.parkIdx = -2           // being promoted: neither parked nor in a bucket
		}
		a.mu.Unlock()
		if len(batch) == 0 {
			return promoted, nil
		}
		ids := make([]string, len(batch))
		for i, e := range batch {
			ids[i] = e.id
		}
		rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		tasks, err := a.store.GetTasks(rctx, ids)
		cancel()
		if err != nil {
			a.repark(batch)
			return promoted, fmt.Errorf("promote %d parked tasks: %w", len(batch), err)
		}
		byID := make(map[string]*task.Task, len(tasks))
		for _, t := range tasks {
			byID[t.TaskID] = t
		}
		for _, e := range batch {
			if a.promote(e, byID[e.id]) {
				promoted++
			}
		}
	}
}

// promote schedules the parked e with t, its task as read now; it reports
// whether e is in its bucket.
func (a *armer) promote(e *armedTask, t *task.Task) bool {
	a.mu.Lock()
	slot := e.due
	e.parkIdx, e.due = -1, time.Time{}
	current := a.jobs[e.id] == e
	a.mu.Unlock()
	if !current {
		return false // disarmed or re-armed while parked
	}
	if t == nil || t.Version != e.version {
		a.disarmGen(e.id, e.gen) // deleted or edited: armed afresh
		return false
	}
	sched, err := mapping.Schedule(t)
	if err != nil {
		a.disarmGen(e.id, e.gen)
		return false
	}
	a.mu.Lock()
	e.task, e.slots = t, fire.NewSlots(t, sched)
	a.mu.Unlock()
	if err := a.schedule(e, slot); err != nil {
		a.logger.Error("schedule a promoted task", "task_id", e.id, "error", err)
		a.disarmGen(e.id, e.gen)
		return false
	}
	return true
}

// Shed hands back to the store the parked tasks due more than
// two windows from now (store.Tasks.ParkTasks, in batches), each
// to be claimed again a window before its slot; it returns how many. A
// task with a run delivering or queued here stays (its overlap policy is
// this node's to apply). A task the store did not park (edited or lost
// meanwhile) stays armed: reconcile and publish sort it out as for any
// other. When the store cannot answer, the batch stays parked here.
func (a *armer) Shed(ctx context.Context) (int, error) {
	if a.window <= 0 || a.node == "" {
		return 0, nil
	}
	shed := 0
	for {
		a.mu.Lock()
		now := a.now()
		// Beyond two windows: a task due sooner is promoted soon, and is
		// not worth a release and a claim.
		cutoff := now.Add(2 * a.window)
		var batch []*armedTask
		for _, e := range a.parked {
			if len(batch) == armStatusChunk {
				break
			}
			if e.due.After(cutoff) {
				batch = append(batch, e)
			}
		}
		for _, e := range batch {
			heap.Remove(&a.parked, e.parkIdx)
			e.parkIdx = -3 // being shed: neither parked nor in a bucket
		}
		a.mu.Unlock()
		if len(batch) == 0 {
			return shed, nil
		}
		var ps []store.ParkParams
		for _, e := range batch {
			if !a.firer.Busy(e.id) { // outside a.mu: the armer never holds it over the firer's lock
				ps = append(ps, store.ParkParams{TaskID: e.id, Version: e.version, ArmAt: e.due.Add(-a.window)})
			}
		}
		var parked []string
		var err error
		if len(ps) > 0 {
			rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			parked, err = a.store.ParkTasks(rctx, a.node, ps)
			cancel()
		}
		done := make(map[string]bool, len(parked))
		for _, id := range parked {
			done[id] = true
		}
		a.mu.Lock()
		for _, e := range batch {
			switch {
			case a.jobs[e.id] != e || e.parkIdx != -3:
				// Disarmed or re-armed meanwhile: that arming stands.
			case done[e.id]:
				e.parkIdx = -1
				delete(a.jobs, e.id)
				shed++
			default:
				heap.Push(&a.parked, e)
			}
		}
		a.mu.Unlock()
		if err != nil {
			return shed, fmt.Errorf("hand back %d parked tasks: %w", len(batch), err)
		}
		if len(parked) == 0 {
			return shed, nil // none of this batch could be handed back: try again next time
		}
	}
}

// repark puts back the tasks of a promotion the store did not answer.
func (a *armer) repark(batch []*armedTask) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, e := range batch {
		if a.jobs[e.id] == e && e.parkIdx == -2 {
			heap.Push(&a.parked, e)
		}
	}
}

// parkQueue is a min-heap of parked tasks by due instant
// (container/heap); each entry knows its index.
type parkQueue []*armedTask

func (q parkQueue) Len() int           { return len(q) }
func (q parkQueue) Less(i, j int) bool { return q[i].due.Before(q[j].due) }
func (q parkQueue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].parkIdx, q[j].parkIdx = i, j
}

// Push adds x (an *armedTask); use heap.Push.
func (q *parkQueue) Push(x any) {
	e := x.(*armedTask)
	e.parkIdx = len(*q)
	*q = append(*q, e)
}

// Pop removes the last entry; use heap.Pop.
func (q *parkQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	old[len(old)-1] = nil
	e.parkIdx = -1
	*q = old[:len(old)-1]
	return e
}
