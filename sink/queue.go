package sink

import "cronsheet/store"

// item is one queued event with its sequence number: a job transition
// (ev), or a flow event (flow) or a task run event (run), the other two
// zero.
type item struct {
	ev   store.JobEvent
	flow *FlowEvent // set for a flow event (PublishFlow)
	run  *RunEvent  // set for a task run event (PublishRun)
	seq  uint64
}

// ring is a bounded FIFO of items that overwrites its oldest on overflow.
type ring struct {
	buf        []item
	head, size int
}

func newRing(capacity int) ring { return ring{buf: make([]item, capacity)} }

func (r *ring) len() int { return r.size }

// push appends it, overwriting the oldest item when full; it returns how
// many items were dropped (0 or 1).
func (r *ring) push(it item) int {
	if r.size == len(r.buf) {
		r.buf[r.head] = it
		r.head = (r.head + 1) % len(r.buf)
		return 1
	}
	r.buf[(r.head+r.size)%len(r.buf)] = it
	r.size++
	return 0
}

// pop removes and returns up to n of the oldest items.
func (r *ring) pop(n int) []item {
	n = min(n, r.size)
	if n == 0 {
		return nil
	}
	out := make([]item, n)
	for i := range out {
		out[i] = r.buf[r.head]
		r.buf[r.head] = item{}
		r.head = (r.head + 1) % len(r.buf)
	}
	r.size -= n
	return out
}
