package arming

import (
	"container/heap"
	"fmt"
	"time"

	"github.com/go-co-op/gocron/v2"
	"github.com/google/uuid"

	"cronsheet/fire"
)

// bucket is the tasks due at one instant, and the gocron job that fires
// them (uuid.Nil while it is being created).
type bucket struct {
	at    time.Time
	job   uuid.UUID
	tasks map[string]*armedTask
}

// schedule puts e in the bucket of slot, creating the bucket's gocron
// job when it is the first task due then; a slot beyond the window parks
// e instead.
func (a *Armer) schedule(e *armedTask, slot time.Time) error {
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
func (a *Armer) leaveBucketLocked(e *armedTask) {
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

// Sweep removes the one-time jobs that have run from gocron; it returns
// how many.
func (a *Armer) Sweep() int {
	a.mu.Lock()
	ran := a.ran
	a.ran = nil
	a.mu.Unlock()
	for _, id := range ran {
		_ = a.sched.RemoveJob(id) // gone already when its task was disarmed
	}
	return len(ran)
}
