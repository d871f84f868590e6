package server

import (
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"cronsheet/admission"
	"cronsheet/store"
)

// Cluster-wide slot polling: while every slot of a group is held, a
// waiting delivery asks the store again after a backoff from ccPollMin,
// doubling up to ccPollMax (a store error waits ccPollMax), or at once
// when a holding of the group on this node is released.
const (
	ccPollMin = 20 * time.Millisecond
	ccPollMax = 250 * time.Millisecond
)

// ccSlots is this node's side of the cluster-wide concurrency groups
// (store.CCSlots): a delivery of a job with a cc limit, once it passed
// its group's FIFO on this node (admission.Controller), takes one of the
// group's limit slots in the store before it goes, and releases it when
// the attempt is over. Holdings carry a lease of patrol.lease, renewed
// with the node's heartbeat; a killed node's holdings are reclaimed by
// the others once their lease ends.
type ccSlots struct {
	logger *slog.Logger
	store  store.CCSlots
	node   string
	lease  time.Duration
	now    func() time.Time

	mu sync.Mutex
	// held are this node's holdings, by fence; taking are the fences of
	// takes under way (their row may exist before they return).
	held   map[int64]store.CCSlot
	taking map[int64]bool
	// waiting counts, per group, the deliveries here waiting for a slot.
	waiting map[string]int
	// freed is closed, per group, when a holding here is released, so a
	// waiter here asks the store at once.
	freed map[string]chan struct{}
	// warnedAt rate-limits the log of store errors while waiting.
	warnedAt time.Time
}

func newCCSlots(logger *slog.Logger, st store.CCSlots, node string, lease time.Duration, now func() time.Time) *ccSlots {
	return &ccSlots{logger: logger.With("component", "ccslots"), store: st, node: node, lease: lease, now: now,
		held: map[int64]store.CCSlot{}, taking: map[int64]bool{}, waiting: map[string]int{}, freed: map[string]chan struct{}{}}
}

// newFence returns a random non-zero fence.
func newFence() int64 {
	var b [8]byte
	_, _ = crand.Read(b[:])
	if f := int64(binary.LittleEndian.Uint64(b[:]) >> 1); f != 0 {
		return f
	}
	return 1
}

// admit returns the admission.Admit that takes a slot of group (limit) in the
// store for holder (a task id), waiting while all are held: it never
// gives up but when ctx ends.
func (c *ccSlots) admit(group string, limit int, holder string) admission.Admit {
	return func(ctx context.Context) (func(), error) {
		c.mu.Lock()
		c.waiting[group]++
		c.mu.Unlock()
		defer func() {
			c.mu.Lock()
			if c.waiting[group]--; c.waiting[group] <= 0 {
				delete(c.waiting, group)
			}
			c.mu.Unlock()
		}()
		backoff := ccPollMin
		for {
			c.mu.Lock()
			freed := c.freed[group]
			if freed == nil {
				freed = make(chan struct{})
				c.freed[group] = freed
			}
			c.mu.Unlock()
			slot, ok, err := c.take(ctx, group, limit, holder)
			if ok {
				return func() { c.release(slot) }, nil
			}
			wait := backoff
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				c.warn(ctx, "cc slot: the store did not answer; waiting", "group", group, "error", err)
				wait = ccPollMax
			}
			backoff = min(2*backoff, ccPollMax)
			// Jitter, so that nodes polling one group do not move in step.
			timer := time.NewTimer(wait/2 + rand.N(wait/2+1))
			select {
			case <-ctx.Done():
				timer.Stop()
				return nil, ctx.Err()
			case <-freed:
				backoff = ccPollMin
			case <-timer.C:
			}
			timer.Stop()
		}
	}
}

// take makes one attempt at a slot of group.
func (c *ccSlots) take(ctx context.Context, group string, limit int, holder string) (store.CCSlot, bool, error) {
	fence := newFence()
	c.mu.Lock()
	c.taking[fence] = true
	c.mu.Unlock()
	now := c.now()
	slot, ok, err := c.store.TakeCCSlot(ctx, store.TakeCCSlotParams{Group: group, Limit: limit, Node: c.node,
		Holder: holder, Fence: fence, LeaseUntil: now.Add(c.lease), Now: now})
	c.mu.Lock()
	delete(c.taking, fence)
	if ok && err == nil {
		c.held[fence] = slot
	}
	c.mu.Unlock()
	return slot, ok && err == nil, err
}

// release gives slot back to the store (with a context of its own: the
// delivery's may have ended). A release the store refuses leaves an
// orphan row, deleted by the next renewal, or reclaimed by the others
// once its lease ends.
func (c *ccSlots) release(slot store.CCSlot) {
	c.mu.Lock()
	delete(c.held, slot.Fence)
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.store.ReleaseCCSlot(ctx, slot.Group, slot.Slot, slot.Fence); err != nil {
		c.logger.Warn("cc slot not released; the next renewal retries", "group", slot.Group, "slot", slot.Slot, "error", err)
	}
	// Wake the waiters after the row is gone, not before.
	c.mu.Lock()
	if ch := c.freed[slot.Group]; ch != nil {
		close(ch)
		delete(c.freed, slot.Group)
	}
	c.mu.Unlock()
}

// renew runs with each heartbeat: it deletes this node's rows that no
// delivery here holds (a release or a take whose answer the store lost),
// then extends the lease of the others.
func (c *ccSlots) renew(ctx context.Context) error {
	rows, err := c.store.ListCCSlots(ctx)
	if err != nil {
		return err
	}
	var orphans []store.CCSlot
	c.mu.Lock()
	for _, r := range rows {
		if r.Node == c.node && !c.taking[r.Fence] {
			if _, ok := c.held[r.Fence]; !ok {
				orphans = append(orphans, r)
			}
		}
	}
	held := len(c.held)
	c.mu.Unlock()
	for _, r := range orphans {
		if err := c.store.ReleaseCCSlot(ctx, r.Group, r.Slot, r.Fence); err != nil {
			return err
		}
	}
	now := c.now()
	n, err := c.store.RenewCCSlots(ctx, c.node, now, now.Add(c.lease))
	if err != nil {
		return err
	}
	if n < held {
		c.logger.WarnContext(ctx, "some cc slots of this node outlived their lease (store unreachable?) and may be reclaimed by other nodes",
			"held", held, "renewed", n)
	}
	return nil
}

// releaseAll deletes every row of this node id: at start (a crashed
// predecessor's; the registry guarantees no other live process of this
// id) and after a graceful stop.
func (c *ccSlots) releaseAll(ctx context.Context) {
	n, err := c.store.ReleaseNodeCCSlots(ctx, c.node)
	if err != nil {
		c.logger.WarnContext(ctx, "release this node's cc slots", "error", err)
		return
	}
	if n > 0 {
		c.logger.InfoContext(ctx, "released this node's cc slots", "slots", n)
	}
}

// waitingByGroup returns the deliveries here waiting for a slot, per group.
func (c *ccSlots) waitingByGroup() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int, len(c.waiting))
	for g, n := range c.waiting {
		out[g] = n
	}
	return out
}

// warn logs a store error at most every few seconds.
func (c *ccSlots) warn(ctx context.Context, msg string, args ...any) {
	c.mu.Lock()
	now := time.Now()
	if now.Sub(c.warnedAt) < 5*time.Second {
		c.mu.Unlock()
		return
	}
	c.warnedAt = now
	c.mu.Unlock()
	c.logger.WarnContext(ctx, msg, args...)
}
