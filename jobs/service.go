// Package jobs is the jobs API's service (design notes 002/003, docs/SEEDS.md): delayed,
// immediate and cron callbacks for programs in any language. A job is a
// task of scenario task.JobScenario carrying a task.Job; it is armed,
// fired, retried and recorded like every task, and its state is derived
// from the task and its runs (task.DeriveJobState). This package validates
// submissions (one path for every intake channel), keeps keys, cancels,
// blocks, backfills, waits for results and records each job's
// transitions.
package jobs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"cronsheet/fire"
	"cronsheet/internal/timeid"
	"cronsheet/store"
	"cronsheet/task"
)

// Store is what the service needs from storage.
type Store interface {
	store.Jobs
	GetTask(ctx context.Context, taskID string) (*task.Task, error)
	ListRuns(ctx context.Context, taskID string, beforeSlot time.Time, limit int) ([]*task.Run, error)
	InsertRun(ctx context.Context, r *task.Run) (bool, error)
	SetTaskState(ctx context.Context, p store.TaskStateParams) (*task.Task, error)
	QueryRuns(ctx context.Context, q store.RunQuery) ([]*task.Run, error)
}

// Deps are the service's dependencies.
type Deps struct {
	Logger *slog.Logger // nil discards
	Store  Store
	// Trigger fires a task now (backfills).
	Trigger func(ctx context.Context, p fire.TriggerParams) ([]*task.Run, error)
	// Check checks what a job's validity depends on in config (an EXEC
	// command listed, a callback host allowed); nil = nothing.
	Check func(t *task.Task) error
	// Wake wakes the patrols so a new job is armed at once; nil = no-op.
	Wake func()
	// Answering reports whether a run's call is in flight on this node
	// while its final report already ended it (fire.Firer.Answering): a
	// wait goes on until the call's answer is kept beside the report.
	// nil = never.
	Answering func(triggerID string) bool
	Now       func() time.Time // nil = time.Now
	// BackfillRate bounds the service's backfill triggers per second, all
	// requests together (default 20).
	BackfillRate float64
	// ArmWindow is the nodes' arming window (fire.arm_window): a delayed
	// job due more than two windows ahead is stored with its arming
	// instant a window before it (task.Task.ArmAt), so that no node claims
	// it until then, as a node would hand it back once armed. 0: every job
	// is claimable at once.
	ArmWindow time.Duration
	// RepairAfter is how long after New the service looks for final job
	// transitions a crash lost (RepairFinalEvents, for the runs ended
	// before New): 0 takes the default (5 s), a negative value never.
	RepairAfter time.Duration
}

// Service runs the jobs API. Close stops its background work.
type Service struct {
	logger  *slog.Logger
	store   Store
	trigger func(ctx context.Context, p fire.TriggerParams) ([]*task.Run, error)
	check   func(t *task.Task) error
	wake    func()
	// answering is Deps.Answering (never nil).
	answering func(triggerID string) bool
	now       func() time.Time
	rate      float64
	pace      backfillPace  // spaces backfill triggers 1/rate apart
	window    time.Duration // Deps.ArmWindow

	events chan transition
	// closeBy, once set (by the recorder, which alone reads it), is when
	// the recorder stops retrying writes after Close (storeEvents).
	closeBy time.Time
	done    chan struct{}
	wg      sync.WaitGroup
	ctx     context.Context
	cancel  context.CancelFunc
	mu      sync.Mutex
	waiters map[string][]chan struct{}
	// backfills holds the jobs a backfill of this node has reserved and
	// not yet fired (see Backfill).
	backfills map[string]bool
	closed    bool
	finals    []finalSub // OnFinal subscribers
	stored    []func([]store.JobEvent)
	// creates group-commits single creates.
	creates *creates
	// stopMu orders a cron job's stop (cancel, block, replace: its state
	// written and its transition handed over, under the write lock) with
	// the end of its runs (OnRun reads the state and hands over pending
	// under the read lock), so pending never follows the stop.
	stopMu sync.RWMutex
}

// eventBuffer bounds transitions waiting to be stored; past it, OnRun
// waits (back-pressure) rather than drop one.
const eventBuffer = 10000

// maxEventBatch bounds the transitions one store call of the recorder
// writes. The recorder waits its turn on SQLite's one writer like every
// group commit, so each turn must take many: with a few hundred per turn a
// burst of tens of thousands of fires at one instant fills the buffer and
// every caller of event (fires, a batch submission) waits, a batch request
// then outlasting the HTTP server's write timeout although its jobs are
// stored. 2,000 inserts are still one short transaction.
const maxEventBatch = 2000

// New returns a running Service. It panics when d.Store or d.Trigger is
// nil (a wiring bug).
func New(d Deps) *Service {
	if d.Store == nil || d.Trigger == nil {
		panic("jobs: Deps.Store and Deps.Trigger are required")
	}
	s := &Service{logger: d.Logger, store: d.Store, trigger: d.Trigger, check: d.Check, wake: d.Wake, answering: d.Answering, now: d.Now,
		rate: d.BackfillRate, window: d.ArmWindow, events: make(chan transition, eventBuffer), done: make(chan struct{}),
		waiters: map[string][]chan struct{}{}, backfills: map[string]bool{}}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	s.logger = s.logger.With("component", "jobs")
	if s.wake == nil {
		s.wake = func() {}
	}
	if s.answering == nil {
		s.answering = func(string) bool { return false }
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.rate <= 0 {
		s.rate = 20
	}
	s.pace.every = time.Duration(float64(time.Second) / s.rate)
	s.creates = newCreates(d.Store)
	s.ctx, s.cancel = context.WithCancel(context.Background())
	s.wg.Go(s.recordEvents)
	if d.RepairAfter >= 0 {
		until := s.now()
		s.wg.Go(func() { s.repairLater(cmp.Or(d.RepairAfter, defaultRepairAfter), until) })
	}
	return s
}

// Close stops background work (backfills in progress stop; transitions
// already handed over are stored first). Safe to call twice.
func (s *Service) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	s.mu.Unlock()
	s.cancel()
	close(s.done)
	s.wg.Wait()
}

// background runs fn on a goroutine that Close waits for, unless the
// service is closed; it reports whether fn was started.
func (s *Service) background(fn func()) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.wg.Go(fn) // under mu: Close's Wait cannot have begun
	}
	return !s.closed
}

// NewID returns a new job id: "job_" and 20 characters of
// crypto/rand.Text's alphabet, the first nine the time it was made (ids
// sort by it; see package timeid), the other eleven random.
func NewID() string {
	return timeid.New("job_", timeid.Base32, 20, time.Now())
}

// viewOf builds the view of t with its newest runs (newest first). Its
// name is the one answers show (task.Job.ShownName), so every answer,
// list, filter and export built from views keeps a URL's credentials
// write-only.
func viewOf(t *task.Task, runs []*task.Run) *View {
	j := t.Job
	v := &View{ID: t.TaskID, Method: j.Method, Name: j.ShownName(), Key: j.Key, Params: j.Body, CC: j.CC, CCLimit: j.CCLimit,
		Headers: j.RedactedHeaders(), DueAt: j.DueAt,
		Cron: t.CronPara, NextFire: t.NextFire, MaxRetries: t.MaxRetries, TTL: t.TTL.Seconds(), ReplacedBy: j.ReplacedBy,
		CreatedAt: t.CreatedAt}
	var latest *task.Run
	if len(runs) > 0 {
		latest = runs[0]
		v.Run = latest
		v.Attempts = latest.Attempt
		v.Result = latest.Output
		v.Error = latest.Error
		if n := len(latest.Feedback); n > 0 && !latest.Feedback[n-1].Progress && latest.Feedback[n-1].Output != "" {
			v.Result = latest.Feedback[n-1].Output
		}
	}
	v.State = task.DeriveJobState(t, latest)
	if v.State == task.JobBlocked && slices.ContainsFunc(runs, func(r *task.Run) bool { return !r.State.Final() }) {
		// A cron job blocked while a run was in progress: the block's
		// marker holds a later slot, and the job reads running until
		// that run ends (Block).
		v.State = task.JobRunning
	}
	if !j.DueAt.IsZero() && v.State != task.JobPending && v.State != task.JobBlocked && v.State != task.JobCancelled {
		// The due slot fired: no fire follows. The task keeps its due
		// instant as next fire until the run ends (fire.statusAtEnd).
		v.NextFire = time.Time{}
	}
	return v
}

// Submit validates and stores one job. With a key that a job holds
// already, it returns that job (Created false) when the request is the
// one that made it (the same task.Job.Digest): a repeated submission does
// not make a second job. A different request under the key is
// task.ErrConflict, code task.CodeAlreadyExists, naming the key (see
// sameRequest). When the request asks to wait, Submit waits for the
// result until the job is final or the wait ends.
func (s *Service) Submit(ctx context.Context, r Request) (*View, error) {
	b, err := s.build(r)
	if err != nil {
		return nil, err
	}
	if key := b.Task.Job.Key; key != "" {
		if old, err := s.store.JobByKey(ctx, key); err == nil {
			return s.repeat(ctx, old, b)
		} else if !errors.Is(err, task.ErrNotFound) {
			return nil, err
		}
	}
	now := s.now()
	if err := s.createJob(ctx, b.Task, submitted(b.Task, now, "submitted")); err != nil {
		if errors.Is(err, task.ErrConflict) && b.Task.Job.Key != "" {
			// Another submission with the key won the race.
			if old, gerr := s.store.JobByKey(ctx, b.Task.Job.Key); gerr == nil {
				return s.repeat(ctx, old, b)
			}
		}
		return nil, fmt.Errorf("store job: %w", err)
	}
	if !deferred(b.Task, now) {
		s.wake()
	}
	return s.answerNew(ctx, b)
}

// repeat answers a submission b whose key old holds: old, when b is the
// request that made it.
func (s *Service) repeat(ctx context.Context, old *task.Task, b Built) (*View, error) {
	if err := sameRequest(old, b.Task); err != nil {
		return nil, err
	}
	return s.waitOrGet(ctx, old.TaskID, b.Wait, false)
}

// sameRequest is nil when the new job t repeats the request that made old,
// the job holding t's key: their digests (jobapi's digest: method, name,
// params, when, cc, retries, ttl, overlap, headers) are equal, or old has none.
// Otherwise it is a conflict naming the key.
func sameRequest(old, t *task.Task) error {
	if old.Job == nil || old.Job.Digest == "" || old.Job.Digest == t.Job.Digest {
		return nil
	}
	return task.Conflict(task.CodeAlreadyExists, "key: job %s holds key %q and was made by a different request "+
		"(its method, name, params, delay/at/cron, cc, max_retries, ttl, overlap or headers differ); send the same request "+
		"to get it back, use another key, or PUT /api/v1/jobs/by-key/{key} to replace it",
		old.TaskID, task.Truncate(t.Job.Key, 60))
}

// createJob stores the new job t as store.Jobs.CreateJob does, with ev,
// its first transition, in a group commit with the creates of concurrent
// callers (the transition in the same write).
func (s *Service) createJob(ctx context.Context, t *task.Task, ev store.JobEvent) error {
	if err := s.creates.create(ctx, t, ev); err != nil {
		return err
	}
	s.storedEvent(ev)
	return nil
}

// submitted is the first transition of the new job t: pending, for why.
func submitted(t *task.Task, at time.Time, why string) store.JobEvent {
	return store.JobEvent{JobID: t.TaskID, At: at, State: task.JobPending, Reason: why}
}

// build validates r into a new job.
func (s *Service) build(r Request) (Built, error) {
	b, err := Build(r, NewID(), s.now())
	if err != nil {
		return Built{}, err
	}
	if s.check != nil {
		if err := s.check(b.Task); err != nil {
			return Built{}, err
		}
	}
	s.deferArming(b.Task)
	return b, nil
}

// deferArming gives t, a new job, an arming instant a window before its
// due instant when it is a delayed job due more than two windows ahead
// (Deps.ArmWindow), and that instant as its next fire (which arming would
// set): it then waits in the store, held by no node, until a window before
// it is due. A job that is not enabled and running, or a cron job, is
// left alone.
func (s *Service) deferArming(t *task.Task) {
	j := t.Job
	if s.window <= 0 || j == nil || j.DueAt.IsZero() || t.CronPara != "" || t.IsEnable != 1 || t.State != task.StateRunning {
		return
	}
	if j.DueAt.Sub(s.now()) > 2*s.window {
		t.ArmAt = j.DueAt.Add(-s.window)
		t.NextFire = j.DueAt
	}
}

// deferred reports whether the new job t waits in the store until an
// arming instant after now (deferArming). Such a job does not wake the
// patrols: no node can claim it before that instant, which the publish
// patrol's own schedule finds (waking it for each such job would cost a
// claim query per request, for nothing).
func deferred(t *task.Task, now time.Time) bool {
	return !t.ArmAt.IsZero() && t.ArmAt.After(now)
}

// Upsert puts a job under key: a pending job holding it is cancelled and
// replaced by the new one; a job that already fired keeps running (or
// stays finished) and the key moves to the new job (the answer's Replaced
// names the job that held it). Without a holder it creates the job
// (Replaced empty). Upserts of one key racing each other (on this node or
// others) all succeed, one after the other: the store decides between
// them (a key has one holder, a job is replaced once), and the one that
// loses reads the key's new holder and replaces that in turn.
func (s *Service) Upsert(ctx context.Context, key string, r Request) (*View, error) {
	if key == "" || len(key) > task.MaxJobKey {
		return nil, task.Invalid("key", "1 to %d bytes", task.MaxJobKey)
	}
	if r.Key != "" && r.Key != key {
		return nil, task.Invalid("key", "the body's key %q differs from the path's", task.Truncate(r.Key, 40))
	}
	r.Key = key
	b, err := s.build(r)
	if err != nil {
		return nil, err
	}
	ev := submitted(b.Task, s.now(), "submitted under key "+key)
	var replaced string
	for attempt := 1; ; attempt++ {
		replaced, err = s.upsertOnce(ctx, key, b.Task, ev)
		if !errors.Is(err, errKeyMoved) {
			break
		}
		if attempt == upsertTries {
			return nil, conflict(task.CodeAlreadyExists, "key %q: other requests changed its job %d times while this one "+
				"tried to replace it; send it again", task.Truncate(key, 60), upsertTries)
		}
		select { // let the other request finish its move
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Duration(min(attempt, 20)) * time.Millisecond):
		}
	}
	if errors.Is(err, ErrNotRecorded) {
		s.wake() // the new job is stored: arm it; the answer says its history lags
	}
	if err != nil {
		return nil, err
	}
	if replaced != "" || !deferred(b.Task, s.now()) {
		s.wake()
	}
	v, err := s.answerNew(ctx, b)
	if err == nil {
		v.Replaced = replaced
	}
	return v, err
}

// upsertTries bounds the holders of its key one Upsert tries to replace.
const upsertTries = 64

// errKeyMoved is returned by upsertOnce when another request took or moved
// the key between its read of the holder and its write.
var errKeyMoved = errors.New("the key's holder changed")

// upsertOnce creates job t under key, or replaces the job holding it, and
// returns the replaced job's id (empty when t was created). A race lost
// to another request on the key is errKeyMoved.
func (s *Service) upsertOnce(ctx context.Context, key string, t *task.Task, ev store.JobEvent) (string, error) {
	old, err := s.store.JobByKey(ctx, key)
	switch {
	case errors.Is(err, task.ErrNotFound):
		err := s.createJob(ctx, t, ev)
		if errors.Is(err, task.ErrConflict) {
			return "", errKeyMoved // another request created a job under the key
		}
		if err != nil {
			return "", fmt.Errorf("store job: %w", err)
		}
		return "", nil
	case err != nil:
		return "", err
	}
	why := "replaced under key " + key
	// A delayed job's slot is taken first: it decides whether the job is
	// cancelled or keeps its outcome. A cron job is closed first, by the
	// replace, and its slot taken after, as Cancel does (cancelCron): a
	// kill in between leaves it stopped, not firing under a cancelled run.
	cron := old.Job.DueAt.IsZero()
	cancelled := cron
	if !cron {
		var err error
		cancelled, err = s.cancelSlot(ctx, old, why)
		if err == nil && !cancelled {
			// Another request replacing old may have taken its slot first.
			var r *task.Run
			r, err = s.runAt(ctx, old.TaskID, old.Job.DueAt)
			cancelled = r != nil && r.State == task.RunCancelled && r.Error == why
		}
		if err != nil {
			return "", err
		}
	}
	s.stopMu.Lock()
	if err := s.store.ReplaceJob(ctx, key, old.TaskID, t); err != nil {
		s.stopMu.Unlock()
		if errors.Is(err, task.ErrConflict) {
			return "", errKeyMoved // another request replaced old first
		}
		return "", fmt.Errorf("replace job %s: %w", old.TaskID, err)
	}
	var recErr error
	if cron {
		if _, err := s.cancelSlot(ctx, old, why); err != nil {
			recErr = fmt.Errorf("job %s is replaced, but its current slot could not be taken from a fire "+
				"racing the replace: %w", old.TaskID, err)
		}
	}
	if cancelled {
		recErr = errors.Join(recErr, s.eventNow(ctx, store.JobEvent{JobID: old.TaskID, At: s.now(), State: task.JobCancelled,
			Reason: "replaced by " + t.TaskID}))
	}
	s.stopMu.Unlock()
	// The replace is stored whether or not the transitions are stored in
	// time: an error wrapping ErrNotRecorded says they are not yet.
	return old.TaskID, errors.Join(recErr, s.eventNow(ctx, ev))
}

// answerNew answers the submission of the new job b: the job as stored,
// without reading it back, unless the caller waits for its result.
func (s *Service) answerNew(ctx context.Context, b Built) (*View, error) {
	if b.Wait > 0 {
		return s.waitOrGet(ctx, b.Task.TaskID, b.Wait, true)
	}
	v := viewOf(b.Task, nil)
	v.Created = true
	return v, nil
}

// Get returns a job with its newest runs and its transitions.
func (s *Service) Get(ctx context.Context, id string) (*View, error) {
	t, err := s.jobTask(ctx, id)
	if err != nil {
		return nil, err
	}
	runs, err := s.store.ListRuns(ctx, id, time.Time{}, 20)
	if err != nil {
		return nil, err
	}
	v := viewOf(t, runs)
	v.Runs = runs
	if v.Events, err = s.store.JobEvents(ctx, id, store.MaxJobEvents); err != nil {
		return nil, err
	}
	return v, nil
}

// jobTask reads a job's task; a task that is not a job is not found.
func (s *Service) jobTask(ctx context.Context, id string) (*task.Task, error) {
	if id == "" || len(id) > 200 {
		return nil, task.Invalid("id", "1 to 200 bytes")
	}
	t, err := s.store.GetTask(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("job %q: %w", task.Truncate(id, 60), err)
	}
	if t.Job == nil {
		return nil, fmt.Errorf("job %q: %w", task.Truncate(id, 60), task.ErrNotFound)
	}
	return t, nil
}

// SubmitBatch submits each request on its own (one bad job does not stop
// the others) but stores the new ones together (store.Jobs.CreateJobs:
// one commit for the batch). Jobs with a key go one by
// one, as Submit (a key may name an existing job). A wait is refused in a
// batch. The returned error means the store failed: nothing of the batch
// without keys was stored.
func (s *Service) SubmitBatch(ctx context.Context, reqs []Request) ([]BatchResult, error) {
	out := make([]BatchResult, len(reqs))
	var fresh []*task.Task
	var at []int
	for i, r := range reqs {
		if r.Wait != nil && *r.Wait > 0 {
			out[i].Err = task.Invalid("wait", "not allowed in a batch (poll each job instead)")
			continue
		}
		if r.Key != "" {
			out[i].View, out[i].Err = s.Submit(ctx, r)
			continue
		}
		b, err := s.build(r)
		if err != nil {
			out[i].Err = err
			continue
		}
		fresh = append(fresh, b.Task)
		at = append(at, i)
	}
	now := s.now()
	errs, err := s.createAll(ctx, fresh, now)
	if err != nil {
		return nil, err
	}
	armable := false
	for k, t := range fresh {
		i := at[k]
		if errs[k] != nil {
			out[i].Err = errs[k]
			continue
		}
		out[i].View = viewOf(t, nil)
		out[i].View.Created = true
		armable = armable || !deferred(t, now)
	}
	if armable {
		s.wake()
	}
	return out, nil
}

// createAll stores new jobs, each with its first transition (submitted
// at now), in one step per MaxStatusBatch.
func (s *Service) createAll(ctx context.Context, ts []*task.Task, now time.Time) ([]error, error) {
	evs := make([]store.JobEvent, len(ts))
	for i, t := range ts {
		evs[i] = submitted(t, now, "submitted")
	}
	errs := make([]error, 0, len(ts))
	for start := 0; start < len(ts); start += store.MaxStatusBatch {
		end := min(len(ts), start+store.MaxStatusBatch)
		part, err := s.store.CreateJobs(ctx, ts[start:end], evs[start:end])
		if err != nil {
			return nil, fmt.Errorf("store jobs: %w", err)
		}
		for k, err := range part {
			if err == nil {
				s.storedEvent(evs[start+k])
			}
		}
		errs = append(errs, part...)
	}
	return errs, nil
}
