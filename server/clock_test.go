package server

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"
)

// skewedClock is a store clock running ahead of this host by skew.
type skewedClock struct {
	skew time.Duration
	err  error
}

func (c skewedClock) ServerTime(context.Context) (time.Time, error) {
	return time.Now().Add(c.skew), c.err
}

// TestStoreClock: leases run on the store's clock where the store has one.
func TestStoreClock(t *testing.T) {
	c := newStoreClock(slog.New(slog.DiscardHandler), skewedClock{skew: 90 * time.Second}, time.Second)
	if err := c.measure(t.Context()); err != nil {
		t.Fatal(err)
	}
	if d := c.Now().Sub(time.Now().Add(90 * time.Second)); d < -time.Second || d > time.Second {
		t.Errorf("clock is %v off the store's, want within 1s", d)
	}
	if off := c.Offset(); off < 89*time.Second || off > 91*time.Second {
		t.Errorf("offset = %v, want about 90s", off)
	}
	// A failed read keeps the last offset.
	c.src = skewedClock{err: errors.New("down")}
	if err := c.measure(t.Context()); err == nil || c.Offset() < 89*time.Second {
		t.Errorf("measure with the store down = %v, offset %v; want an error and the offset kept", err, c.Offset())
	}
	// A store without a clock: the host's.
	host := newStoreClock(slog.New(slog.DiscardHandler), struct{}{}, time.Second)
	if err := host.measure(t.Context()); err != nil || host.Offset() != 0 {
		t.Errorf("host clock: %v, offset %v", err, host.Offset())
	}
}
