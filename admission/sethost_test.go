package admission

import (
	"context"
	"testing"
	"time"
)

// TestSetHostLimits swaps the limits of a live Controller: a host limited
// to one call a second lets the next call wait a second; after
// SetHostLimits makes it unlimited the next go at once, and after a
// limit of one call an hour the next waits an hour for its token (the
// bucket keeps its tokens: none).
func TestSetHostLimits(t *testing.T) {
	b, ctx := setup(t, Config{HostRate: 1, HostBurst: 1}), testCtx(t)
	req := Request{Group: "g", Host: "h.example"}
	mustAcquire(ctx, t, b.c, req)() // spends the only token

	if err := b.c.SetHostLimits(Config{}); err != nil {
		t.Fatal(err)
	}
	for range 3 { // unlimited: no wait, with the clock standing still
		mustAcquire(ctx, t, b.c, req)()
	}

	if err := b.c.SetHostLimits(Config{HostRates: map[string]HostLimit{"H.example": {Rate: 1.0 / 3600, Burst: 1}}}); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { mustAcquire(ctx, t, b.c, req)(); close(done) }()
	if err := b.clock.BlockUntilContext(ctx, 1); err != nil {
		t.Fatal(err)
	}
	b.clock.Advance(time.Minute)
	select {
	case <-done:
		t.Fatal("a call went a minute after the last under a limit of one an hour")
	default:
	}
	b.clock.Advance(time.Hour)
	<-done

	if err := b.c.SetHostLimits(Config{HostRate: -1}); err == nil {
		t.Fatal("SetHostLimits took a negative rate")
	}
	waitCtx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := b.c.Acquire(waitCtx, req); err == nil {
		t.Fatal("Acquire with an ended context succeeded")
	}
}
