package jobs

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// maxCreateGroup bounds the jobs one group commit of creates writes.
const maxCreateGroup = 500

// createTimeout bounds one group commit of creates.
const createTimeout = 30 * time.Second

// creates group-commits the new jobs of concurrent single submissions
// (Submit, Upsert without a holder, a keyed job of a batch), the way the
// fire ledger group-commits fire records (fire/recorder.go): while one
// group is being written, the creates that arrive queue up, and the next
// group takes them all (up to maxCreateGroup) in one store.Jobs.CreateJobs call
// — one transaction on SQLite, one bulk insert on MongoDB. Each create
// gets its own result: its own task.ErrConflict (a key or id taken, also
// by another create of the same group) or task.ErrInvalid.
//
// It adds no timed wait: a create that finds nobody writing yields the
// processor before taking its group (gather), which returns at once when
// nothing else is runnable, so an idle create is written alone. Under
// load the handlers that are runnable (reading and checking their
// requests) reach the queue first, and the group grows with the load. It
// starts no goroutine: the first create of a group writes that
// group; when more creates queued meanwhile, it hands the writing over to
// the first of them, whose create the next group then contains. No
// caller writes groups other than its own, so none is held up behind a
// stream of others.
type creates struct {
	write   func(ctx context.Context, ts []*task.Task, evs []store.JobEvent) ([]error, error)
	max     int
	timeout time.Duration

	mu      sync.Mutex
	queue   []*createReq
	writing bool // a create of the queue's first group is writing it (or about to)
}

// createReq is one queued create.
type createReq struct {
	ctx  context.Context
	t    *task.Task
	ev   store.JobEvent    // t's first transition, written with it
	done chan createAnswer // buffered: at most one answer is pending
}

// createAnswer is what a queued create is told: its result, or that it is
// now the one to write the next group (which starts with it).
type createAnswer struct {
	err  error
	lead bool
}

// newCreates returns the group committer over b.
func newCreates(b store.Jobs) *creates {
	return &creates{write: b.CreateJobs, max: maxCreateGroup, timeout: createTimeout}
}

// create stores t as store.Jobs.CreateJob does, with its first
// transition ev, in a group with the creates queued with it, and returns
// t's own result once the group is committed. The group is written with ctx's values but not its
// cancellation (the other creates of the group do not depend on this
// caller staying).
func (c *creates) create(ctx context.Context, t *task.Task, ev store.JobEvent) error {
	req := &createReq{ctx: ctx, t: t, ev: ev, done: make(chan createAnswer, 1)}
	c.mu.Lock()
	c.queue = append(c.queue, req)
	lead := !c.writing // nobody writing: the queue was empty, req is first
	c.writing = true
	c.mu.Unlock()
	if lead {
		c.writeGroup()
	}
	for {
		a := <-req.done
		if !a.lead {
			return a.err
		}
		c.writeGroup() // req is the first of the queue now
	}
}

// pending returns how many creates are queued, not yet being written.
func (c *creates) pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.queue)
}

// maxGatherYields bounds the yields of one gather.
const maxGatherYields = 4

// gather lets the creates that are on their way join the group about to
// be taken: it yields the processor to the runnable goroutines while a
// yield makes the queue longer (at most maxGatherYields times), and
// returns at once when nothing else is runnable. Each create of a group
// shares its transaction's begin and commit, which cost as much as
// several inserts; a request that was about to queue would otherwise wait
// for this group's whole write before its own.
func (c *creates) gather() {
	for range maxGatherYields {
		before := c.pending()
		runtime.Gosched()
		if c.pending() == before {
			return
		}
	}
}

// writeGroup writes the queue's first group (whose first create is the
// caller's), answers each of its creates, then hands the writing over to
// the first create queued meanwhile, if any.
func (c *creates) writeGroup() {
	c.gather()
	c.mu.Lock()
	n := min(len(c.queue), c.max)
	group := append([]*createReq(nil), c.queue[:n]...)
	c.queue = append(c.queue[:0], c.queue[n:]...)
	c.mu.Unlock()

	ts := make([]*task.Task, len(group))
	evs := make([]store.JobEvent, len(group))
	for i, req := range group {
		ts[i], evs[i] = req.t, req.ev
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(group[0].ctx), c.timeout)
	errs, err := c.write(ctx, ts, evs)
	cancel()
	if err == nil && len(errs) != len(ts) {
		err = fmt.Errorf("the store answered %d results for %d jobs", len(errs), len(ts))
	}
	for i, req := range group {
		switch {
		case err != nil:
			req.done <- createAnswer{err: fmt.Errorf("create job %s in a group of %d: %w", req.t.TaskID, len(ts), err)}
		default:
			req.done <- createAnswer{err: errs[i]}
		}
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.queue) == 0 {
		c.writing = false
		return
	}
	c.queue[0].done <- createAnswer{lead: true} // its channel is empty: it has had no answer yet
}
