package arming

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"cronsheet/fire"
	"cronsheet/store"
	"cronsheet/task"
)

// onFire is the gocron task of one instant: it fires every task due then.
func (a *Armer) onFire(key int64) {
	slot := time.Unix(0, key)
	if d := slot.Sub(a.now()); d > 0 {
		a.clock.Sleep(d) // a fire is never early
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
	due := make([]dueFire, 0, len(b.tasks))
	armed := make(map[string]*task.Task, len(b.tasks))
	for id, e := range b.tasks {
		if a.jobs[id] == e && e.due.UnixNano() == key {
			e.due = time.Time{}
			// Boarded before its next slot is scheduled (fireParams), so
			// that slot's fire boards after this one (inflight.go).
			prev, cur := a.boardLocked(id)
			due = append(due, dueFire{e: e, prev: prev, cur: cur})
			armed[id] = e.task
		}
	}
	a.mu.Unlock()
	// In id order: job and trigger ids grow with time (package timeid),
	// so the runs, job events and statuses the fires write go to the ends
	// of their indexes, a few pages per group commit, rather than in
	// random order all over them.
	slices.SortFunc(due, func(x, y dueFire) int { return strings.Compare(x.e.id, y.e.id) })
	// The fires of each chunk start as soon as its tasks are read; the
	// next chunk is read while they run. The first chunk is small
	// (firstChunk), so that the first fires and the store's writer do not
	// wait for the heads of the whole bucket; each next chunk is twice
	// the last, up to store.MaxStatusBatch, so a large bucket is still a
	// few reads. A chunk's fires go in groups of fireGroup, each group
	// one FireAll on one goroutine (its ledger records one submission to
	// the group commit), not a goroutine each: thousands of runnable fire
	// goroutines would take the cores from the loop that starts them and
	// from the next chunk's read.
	var wg sync.WaitGroup
	size := firstChunk
	for start := 0; start < len(due); start, size = start+size, min(2*size, store.MaxStatusBatch) {
		chunk := due[start:min(start+size, len(due))]
		read := a.readTasks(chunk, armed)
		var group []dueFire
		var ps []fire.Params
		flush := func() {
			if len(group) == 0 {
				return
			}
			g, gps := group, ps
			group, ps = nil, nil
			wg.Go(func() {
				res := a.firer.FireAll(a.ctx, gps)
				inLedger := make([]bool, len(g))
				for i, d := range g {
					inLedger[i] = a.settle(d.e, gps[i], res[i])
				}
				a.landAll(g, inLedger)
			})
		}
		for _, d := range chunk {
			p := a.fireParams(d.e, slot, armed, read)
			if d.prev != nil {
				// Its fire before this one is still in flight (the store
				// is failing or slow): this one waits for it on a
				// goroutine of its own, and reads its task afresh then.
				p.Preread, p.Read = false, nil
			}
			if d.prev != nil || !groupable(p) {
				wg.Go(func() { a.fireBoarded(d.e, p, d.prev, d.cur) })
				continue
			}
			group, ps = append(group, d), append(ps, p)
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

// firstChunk is how many tasks of a bucket the first read of heads
// reads; the chunks after it double.
const firstChunk = 500

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
func (a *Armer) fireParams(e *armedTask, slot time.Time, armed map[string]*task.Task, read *bucketRead) fire.Params {
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
func (a *Armer) readTasks(chunk []dueFire, armed map[string]*task.Task) *bucketRead {
	if len(chunk) < 2 {
		return nil
	}
	ids := make([]string, len(chunk))
	for i, d := range chunk {
		ids[i] = d.e.id
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

// fire fires one missed slot of e, armed as armed, handles the outcome
// and reports whether the slot is in the ledger (settle). It takes the
// task as armed rather than e's: a next slot beyond the window parks e,
// which drops its task from memory.
func (a *Armer) fire(e *armedTask, armed *task.Task, slot time.Time, trigger task.TriggerType, next time.Time) bool {
	return a.fireWith(e, fire.Params{Armed: armed, Slot: slot, Trigger: trigger, NextFire: next})
}

// fireWith fires p for e, once the task's fire before it has landed,
// handles the outcome and reports whether p's slot is in the ledger
// (settle).
func (a *Armer) fireWith(e *armedTask, p fire.Params) bool {
	prev, cur := a.board(e.id)
	return a.fireBoarded(e, p, prev, cur)
}

// fireBoarded is fireWith for a fire boarded as cur after prev: it fires
// p only when prev (nil: none) landed with its slot in the ledger
// (follow), and lands cur.
func (a *Armer) fireBoarded(e *armedTask, p fire.Params, prev, cur *flight) bool {
	ok := a.follow(e, prev, p.Slot) && a.settle(e, p, a.firer.FireAll(a.ctx, []fire.Params{p})[0])
	a.land(e.id, cur, ok)
	return ok
}

// settle handles the outcome of e's fire p. It reports whether p's slot
// is in the ledger (fired now or before); when it is not, the task is
// disarmed or the firer shut down, and no later slot of it fires: the
// replay stops (replayMissed), and a bucket's fire of the next slot,
// boarded after this one, is dropped (follow).
func (a *Armer) settle(e *armedTask, p fire.Params, res fire.Result) bool {
	slot, outcome, t, err := p.Slot, res.Outcome, res.Task, res.Err
	switch {
	case errors.Is(err, context.Canceled):
		// Shutting down: whoever arms the task next goes on from the
		// ledger's last slot.
		return false
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
		return false
	case outcome == fire.Stale:
		a.disarmGen(e.id, e.gen)
		return false
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
	return true
}
