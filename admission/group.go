package admission

import (
	"container/list"
	"context"
)

// group is one concurrency group. Its waiters hold *waiter values in FIFO
// order.
type group struct {
	inflight int
	limit    int
	waiters  list.List
}

// waiter is one request queued for its group. ready is closed when it is
// granted a slot; granted (guarded by Controller.mu) says so too.
type waiter struct {
	ready   chan struct{}
	granted bool
}

func (g *group) hasRoom() bool { return g.limit <= 0 || g.inflight < g.limit }

// dispatch grants slots to the waiters at the head while there is room.
func (g *group) dispatch() {
	for g.waiters.Len() > 0 && g.hasRoom() {
		w := g.waiters.Remove(g.waiters.Front()).(*waiter)
		w.granted = true
		g.inflight++
		close(w.ready)
	}
}

// enterGroup takes a slot of req.Group, waiting for one if needed.
func (c *Controller) enterGroup(ctx context.Context, req Request) error {
	c.mu.Lock()
	g := c.groups[req.Group]
	if g == nil {
		g = &group{}
		c.groups[req.Group] = g
	}
	g.limit = req.Limit
	g.dispatch() // the limit may have grown
	if g.waiters.Len() == 0 && g.hasRoom() {
		g.inflight++
		c.mu.Unlock()
		return nil
	}
	w := &waiter{ready: make(chan struct{})}
	elem := g.waiters.PushBack(w)
	c.mu.Unlock()

	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if w.granted {
		// Granted while ctx ended: give the slot back.
		g.inflight--
	} else {
		g.waiters.Remove(elem)
	}
	g.dispatch()
	c.forgetGroup(req.Group, g)
	return ctx.Err()
}

// leaveGroup gives back a slot of the named group.
func (c *Controller) leaveGroup(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.groups[name]
	g.inflight--
	g.dispatch()
	c.forgetGroup(name, g)
}

// forgetGroup drops g when nothing is in flight or waiting. c.mu is held.
func (c *Controller) forgetGroup(name string, g *group) {
	if g.inflight == 0 && g.waiters.Len() == 0 {
		delete(c.groups, name)
	}
}
