package server

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"cronsheet/store"
)

// storeClock is the clock leases and heartbeats are measured on: the
// store's, where it has one (store.Clock), estimated as this host's clock
// plus an offset measured at each heartbeat; else this host's. Slots stay
// on each node's own clock (they are instants of the schedule, and a fire
// is never early by that clock).
type storeClock struct {
	logger *slog.Logger
	src    store.Clock // nil: the host clock
	warnAt time.Duration
	offset atomic.Int64 // nanoseconds to add to the host clock
}

// newStoreClock returns the clock of st (the host's when st has none). An
// offset beyond warnAt is logged at each measure.
func newStoreClock(logger *slog.Logger, st any, warnAt time.Duration) *storeClock {
	c := &storeClock{logger: logger.With("component", "clock"), warnAt: warnAt}
	if sc, ok := st.(store.Clock); ok {
		c.src = sc
	}
	return c
}

// Now is the store's time as this node best knows it.
func (c *storeClock) Now() time.Time {
	return time.Now().Add(time.Duration(c.offset.Load()))
}

// Offset is the last measured difference store − host.
func (c *storeClock) Offset() time.Duration { return time.Duration(c.offset.Load()) }

// measure reads the store's clock once and sets the offset, taking the
// middle of the round trip as the instant it was read.
func (c *storeClock) measure(ctx context.Context) error {
	if c.src == nil {
		return nil
	}
	before := time.Now()
	server, err := c.src.ServerTime(ctx)
	if err != nil {
		return err
	}
	after := time.Now()
	mid := before.Add(after.Sub(before) / 2)
	off := server.Sub(mid)
	c.offset.Store(int64(off))
	if off > c.warnAt || off < -c.warnAt {
		c.logger.WarnContext(ctx, "this node's clock is far from the store's; leases are measured on the store's",
			"offset", off.Round(time.Millisecond))
	}
	return nil
}
