package arming

import "time"

// The in-flight gate: a task's slot is not recorded while the fire of its
// previous slot is unsettled. A fire whose ledger record the store fails
// is retried by the group commit for a second or more; meanwhile the
// task's next slot comes due. Recorded then (the store answering again),
// it would move the ledger's last slot past the failed one, which the
// next arming plans from: the failed slot would never fire, nor be
// misfire-recorded, nor counted skipped. So each fire of a task here
// boards after the one before it, and waits for it to land when it is
// still in flight; when that one's slot did not reach the ledger, this
// one does not fire either, and the task is disarmed: arming it again
// plans both slots, and those after, by the task's misfire policy.
//
// A fire lands in well under a second when the store answers, before the
// next slot of a task firing every second is due, so a fire only waits
// while the store is failing or slow. On the hot path the gate costs one
// map insert and one delete per fire: a bucket boards its fires under the
// lock it takes anyway to collect them, and a group's fires land under
// one more.

// flight is one fire of a task here, from before the slot after it is
// scheduled until settle has handled its outcome.
type flight struct {
	done     chan struct{} // closed when it has landed
	inLedger bool          // written before done is closed: its slot is in the ledger
}

// boardLocked starts a fire of task id (a.mu held): it returns the
// task's fire before it still in flight (nil when none) and this one.
func (a *Armer) boardLocked(id string) (prev, cur *flight) {
	prev = a.flights[id]
	cur = &flight{done: make(chan struct{})}
	a.flights[id] = cur
	return prev, cur
}

// board is boardLocked taking a.mu.
func (a *Armer) board(id string) (prev, cur *flight) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.boardLocked(id)
}

// land ends fire f of task id, its slot in the ledger or not, releasing
// the task's fire boarded after it.
func (a *Armer) land(id string, f *flight, inLedger bool) {
	f.inLedger = inLedger
	close(f.done)
	a.mu.Lock()
	a.landedLocked(id, f)
	a.mu.Unlock()
}

// landedLocked forgets f as task id's last fire once it has landed (a.mu
// held).
func (a *Armer) landedLocked(id string, f *flight) {
	if a.flights[id] == f {
		delete(a.flights, id)
	}
}

// follow waits for e's fire before this one (prev; nil when none) to
// land and reports whether this one may fire: prev's slot is in the
// ledger. When it is not, settle has disarmed the generation prev fired
// under; e is disarmed too (it may be a later arming of the task, whose
// next slot would otherwise be recorded past the missing one).
func (a *Armer) follow(e *armedTask, prev *flight, slot time.Time) bool {
	if prev == nil {
		return true
	}
	<-prev.done
	if prev.inLedger {
		return true
	}
	if a.ctx.Err() == nil {
		a.logger.Warn("slot not fired: the task's fire before it did not reach the ledger; the task is re-armed and both follow its misfire policy",
			"task_id", e.id, "slot", slot)
		a.disarmGen(e.id, e.gen)
	}
	return false
}

// dueFire is a task's fire of a bucket, boarded: the task's fire before
// it still in flight (nil when none), and this one.
type dueFire struct {
	e         *armedTask
	prev, cur *flight
}

// landAll lands the fires of a group, each with whether its slot is in
// the ledger, under one lock.
func (a *Armer) landAll(g []dueFire, inLedger []bool) {
	for i, d := range g {
		d.cur.inLedger = inLedger[i]
		close(d.cur.done)
	}
	a.mu.Lock()
	for _, d := range g {
		a.landedLocked(d.e.id, d.cur)
	}
	a.mu.Unlock()
}
