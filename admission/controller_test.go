package admission

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

type testBundle struct {
	c     *Controller
	clock *clockwork.FakeClock
}

func setup(t *testing.T, cfg Config) *testBundle {
	t.Helper()
	clock := clockwork.NewFakeClock()
	c, err := newController(cfg, clock)
	if err != nil {
		t.Fatalf("newController: %v", err)
	}
	return &testBundle{c: c, clock: clock}
}

// testCtx bounds a test so that a bug hangs it for seconds, not forever.
// It is a safety net, never an assertion on timing.
func testCtx(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// waitFor polls cond until it holds or ctx ends.
func waitFor(ctx context.Context, t *testing.T, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		if ctx.Err() != nil {
			t.Fatalf("gave up waiting for %s", what)
		}
		runtime.Gosched()
		time.Sleep(100 * time.Microsecond)
	}
}

// mustAcquire acquires req, reporting a failure with t.Errorf (it runs in
// test goroutines too, where t.Fatal may not be called).
func mustAcquire(ctx context.Context, t *testing.T, c *Controller, req Request) func() {
	t.Helper()
	release, err := c.Acquire(ctx, req)
	if err != nil {
		t.Errorf("Acquire(%+v): %v", req, err)
		return func() {}
	}
	return release
}

func (b *testBundle) group(name string) GroupStats { return b.c.Stats().Groups[name] }

func (b *testBundle) requireEmpty(t *testing.T) {
	t.Helper()
	b.c.mu.Lock()
	defer b.c.mu.Unlock()
	if len(b.c.groups) != 0 || len(b.c.hosts) != 0 {
		t.Fatalf("maps not empty: %d groups, %d hosts", len(b.c.groups), len(b.c.hosts))
	}
}

// maxCounter tracks how many holders are inside at once and the most seen.
type maxCounter struct{ cur, max atomic.Int64 }

func (m *maxCounter) enter() {
	n := m.cur.Add(1)
	for {
		old := m.max.Load()
		if n <= old || m.max.CompareAndSwap(old, n) {
			return
		}
	}
}

func (m *maxCounter) leave() { m.cur.Add(-1) }

func TestController(t *testing.T) {
	t.Parallel()

	t.Run("BurstRespectsGroupLimit", func(t *testing.T) {
		t.Parallel()
		b, ctx := setup(t, Config{}), testCtx(t)
		req := Request{Group: "g", Limit: 3}
		// Fill the group first so that the burst really queues.
		var held []func()
		for range 3 {
			held = append(held, mustAcquire(ctx, t, b.c, req))
		}
		var (
			mc   maxCounter
			done atomic.Int64
			wg   sync.WaitGroup
		)
		for range 197 {
			wg.Go(func() {
				release := mustAcquire(ctx, t, b.c, req)
				mc.enter()
				runtime.Gosched()
				mc.leave()
				release()
				done.Add(1)
			})
		}
		waitFor(ctx, t, "197 waiters", func() bool { return b.group("g").Waiting == 197 })
		if got := b.group("g"); got != (GroupStats{InFlight: 3, Waiting: 197, Limit: 3}) {
			t.Fatalf("Stats before release = %+v", got)
		}
		mc.cur.Add(3)
		mc.max.Store(3)
		for _, release := range held {
			mc.leave()
			release()
		}
		wg.Wait()
		if got := mc.max.Load(); got > 3 {
			t.Errorf("max in flight = %d, want <= 3", got)
		}
		if got := done.Load(); got != 197 {
			t.Errorf("completed = %d, want 197", got)
		}
		b.requireEmpty(t)
	})

	t.Run("FIFOWithinGroup", func(t *testing.T) {
		t.Parallel()
		b, ctx := setup(t, Config{}), testCtx(t)
		req := Request{Group: "g", Limit: 1}
		holder := mustAcquire(ctx, t, b.c, req)
		var (
			mu    sync.Mutex
			order []int
			wg    sync.WaitGroup
		)
		for i := range 20 {
			wg.Go(func() {
				release := mustAcquire(ctx, t, b.c, req)
				mu.Lock()
				order = append(order, i)
				mu.Unlock()
				release()
			})
			waitFor(ctx, t, "waiter queued", func() bool { return b.group("g").Waiting == i+1 })
		}
		holder()
		wg.Wait()
		for i, got := range order {
			if got != i {
				t.Fatalf("order = %v, want 0..19", order)
			}
		}
		b.requireEmpty(t)
	})

	t.Run("GroupsDoNotBlockEachOther", func(t *testing.T) {
		t.Parallel()
		b, ctx := setup(t, Config{}), testCtx(t)
		holdA := mustAcquire(ctx, t, b.c, Request{Group: "a", Limit: 1})
		waitCtx, cancel := context.WithCancel(ctx)
		errc := make(chan error, 1)
		go func() {
			_, err := b.c.Acquire(waitCtx, Request{Group: "a", Limit: 1})
			errc <- err
		}()
		waitFor(ctx, t, "waiter in a", func() bool { return b.group("a").Waiting == 1 })
		// Group a is full with a queue; group b goes through at once.
		releaseB := mustAcquire(ctx, t, b.c, Request{Group: "b", Limit: 1})
		if got := b.group("b"); got.InFlight != 1 {
			t.Errorf("group b = %+v, want 1 in flight", got)
		}
		releaseB()
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Errorf("waiter in a: err = %v, want context.Canceled", err)
		}
		holdA()
		b.requireEmpty(t)
	})

	t.Run("LatestLimitApplies", func(t *testing.T) {
		t.Parallel()
		b, ctx := setup(t, Config{}), testCtx(t)
		holder := mustAcquire(ctx, t, b.c, Request{Group: "g", Limit: 1})
		var wg sync.WaitGroup
		released := make(chan struct{})
		wg.Go(func() {
			release := mustAcquire(ctx, t, b.c, Request{Group: "g", Limit: 1})
			<-released
			release()
		})
		waitFor(ctx, t, "waiter", func() bool { return b.group("g").Waiting == 1 })
		// A request raising the limit lets the waiter through too.
		r2 := mustAcquire(ctx, t, b.c, Request{Group: "g", Limit: 3})
		if got := b.group("g"); got != (GroupStats{InFlight: 3, Waiting: 0, Limit: 3}) {
			t.Errorf("Stats = %+v, want 3 in flight, limit 3", got)
		}
		close(released)
		wg.Wait()
		r2()
		holder()
		b.requireEmpty(t)
	})

	t.Run("CancelWhileWaitingForGroup", func(t *testing.T) {
		t.Parallel()
		b, ctx := setup(t, Config{}), testCtx(t)
		holder := mustAcquire(ctx, t, b.c, Request{Group: "g", Limit: 1})
		waitCtx, cancel := context.WithCancel(ctx)
		type result struct {
			release func()
			err     error
		}
		resc := make(chan result, 1)
		go func() {
			release, err := b.c.Acquire(waitCtx, Request{Group: "g", Limit: 1})
			resc <- result{release, err}
		}()
		waitFor(ctx, t, "waiter", func() bool { return b.group("g").Waiting == 1 })
		cancel()
		res := <-resc
		if !errors.Is(res.err, context.Canceled) || res.release != nil {
			t.Fatalf("Acquire after cancel = (%v, %v), want (nil, context.Canceled)", res.release != nil, res.err)
		}
		if got := b.group("g"); got != (GroupStats{InFlight: 1, Waiting: 0, Limit: 1}) {
			t.Errorf("Stats after cancel = %+v, want only the holder", got)
		}
		holder()
		b.requireEmpty(t)
	})

	t.Run("CancelledContextAcquiresNothing", func(t *testing.T) {
		t.Parallel()
		b := setup(t, Config{})
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := b.c.Acquire(ctx, Request{Group: "g"}); !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		b.requireEmpty(t)
	})

	t.Run("CancelWhileWaitingForHostReturnsToken", func(t *testing.T) {
		t.Parallel()
		b, ctx := setup(t, Config{HostRate: 1, HostBurst: 1}), testCtx(t)
		req := Request{Group: "g", Host: "h.example"}
		mustAcquire(ctx, t, b.c, req)() // spends the only token
		waitCtx, cancel := context.WithCancel(ctx)
		errc := make(chan error, 1)
		go func() {
			_, err := b.c.Acquire(waitCtx, req)
			errc <- err
		}()
		if err := b.clock.BlockUntilContext(ctx, 1); err != nil {
			t.Fatal(err)
		}
		if got := b.c.Stats(); got.Hosts["h.example"].Waiting != 1 || got.Groups["g"].InFlight != 1 {
			t.Errorf("Stats while waiting for a token = %+v", got)
		}
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if got := b.c.Stats(); len(got.Groups) != 0 || got.Hosts["h.example"].Waiting != 0 {
			t.Errorf("Stats after cancel = %+v, want no group, no host waiter", got)
		}
		// The cancelled reservation gave its token back: the next request
		// waits one token (1s), not two.
		done := make(chan struct{})
		go func() { mustAcquire(ctx, t, b.c, req)(); close(done) }()
		if err := b.clock.BlockUntilContext(ctx, 1); err != nil {
			t.Fatal(err)
		}
		b.clock.Advance(time.Second)
		<-done
		b.clock.Advance(time.Hour)
		b.c.Stats() // sweeps the now full bucket
		b.requireEmpty(t)
	})

	t.Run("HostRateLimit", func(t *testing.T) {
		t.Parallel()
		const burst = 5
		b, ctx := setup(t, Config{HostRate: 50, HostBurst: burst}), testCtx(t)
		const host = "api.example.com"
		var (
			passed atomic.Int64
			wg     sync.WaitGroup
		)
		for i := range 30 {
			wg.Go(func() {
				// Case and port do not matter.
				release := mustAcquire(ctx, t, b.c, Request{Group: fmt.Sprint(i), Host: "API.Example.com:443"})
				passed.Add(1)
				release()
			})
		}
		// The fake clock stands still: whoever passes now got a token of
		// the first instant.
		waiting := func() int { return b.c.Stats().Hosts[host].Waiting }
		waitFor(ctx, t, "all 30 settled", func() bool { return int(passed.Load())+waiting() == 30 })
		if got := passed.Load(); got > burst {
			t.Errorf("passed in the first instant = %d, want <= %d", got, burst)
		}
		n := waiting()
		if err := b.clock.BlockUntilContext(ctx, n); err != nil {
			t.Fatal(err)
		}
		b.clock.Advance(time.Second) // 50 tokens: enough for the rest
		wg.Wait()
		if got := passed.Load(); got != 30 {
			t.Errorf("passed = %d, want 30", got)
		}
	})

	t.Run("HostOverrides", func(t *testing.T) {
		t.Parallel()
		b, ctx := setup(t, Config{HostRate: 1, HostBurst: 1, HostRates: map[string]HostLimit{
			"Free.example": {},                     // unlimited
			"two.example":  {Rate: 1e-9, Burst: 2}, // two, then nothing
		}}), testCtx(t)
		for range 100 {
			mustAcquire(ctx, t, b.c, Request{Host: "free.example"})()
		}
		mustAcquire(ctx, t, b.c, Request{Host: "two.example"})()
		mustAcquire(ctx, t, b.c, Request{Host: "two.example"})()
		short, cancel := context.WithCancel(ctx)
		errc := make(chan error, 1)
		go func() {
			_, err := b.c.Acquire(short, Request{Host: "two.example"})
			errc <- err
		}()
		if err := b.clock.BlockUntilContext(ctx, 1); err != nil {
			t.Fatal(err)
		}
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Errorf("third request: err = %v, want context.Canceled", err)
		}
		if _, ok := b.c.Stats().Hosts["free.example"]; ok {
			t.Error("unlimited host has a bucket")
		}
	})

	t.Run("ReleaseTwiceIsHarmless", func(t *testing.T) {
		t.Parallel()
		b, ctx := setup(t, Config{}), testCtx(t)
		req := Request{Group: "g", Limit: 1}
		release := mustAcquire(ctx, t, b.c, req)
		release()
		release()
		b.requireEmpty(t)
		r1 := mustAcquire(ctx, t, b.c, req)
		release() // an old release must not free the new holder's slot
		if got := b.group("g"); got.InFlight != 1 {
			t.Errorf("in flight = %d, want 1", got.InFlight)
		}
		r1()
		b.requireEmpty(t)
	})

	t.Run("ManyGroupsAreForgotten", func(t *testing.T) {
		t.Parallel()
		b, ctx := setup(t, Config{}), testCtx(t)
		var wg sync.WaitGroup
		for i := range 10_000 {
			wg.Go(func() {
				mustAcquire(ctx, t, b.c, Request{Group: fmt.Sprintf("g%d", i), Limit: 1 + i%3})()
			})
		}
		wg.Wait()
		b.requireEmpty(t)
	})

	t.Run("IdleHostsAreForgotten", func(t *testing.T) {
		t.Parallel()
		b, ctx := setup(t, Config{HostRate: 10, HostBurst: 2}), testCtx(t)
		most := 0
		for i := range 10_000 {
			if i%1000 == 0 {
				b.clock.Advance(time.Second) // the buckets so far refill
			}
			mustAcquire(ctx, t, b.c, Request{Group: "g", Host: fmt.Sprintf("h%d.example", i)})()
			b.c.mu.Lock()
			most = max(most, len(b.c.hosts))
			b.c.mu.Unlock()
		}
		// Sweeps on the way keep the map near the recently used hosts.
		if most > 4000 {
			t.Errorf("remembered up to %d hosts, want the recent ones only", most)
		}
		b.clock.Advance(time.Second) // every bucket is full again
		mustAcquire(ctx, t, b.c, Request{Host: "last.example"})()
		b.clock.Advance(sweepEvery)
		b.c.Stats()
		b.requireEmpty(t)
	})
}

func TestNewRejectsNegativeLimits(t *testing.T) {
	t.Parallel()
	for _, cfg := range []Config{
		{HostRate: -1},
		{HostBurst: -1},
		{HostRates: map[string]HostLimit{"x": {Rate: -2}}},
	} {
		if _, err := New(cfg); err == nil {
			t.Errorf("New(%+v) = nil error, want an error", cfg)
		}
	}
}

func TestHostOf(t *testing.T) {
	t.Parallel()
	tests := []struct{ url, want string }{
		{"https://API.Example.com:8443/hook?x=1", "api.example.com"},
		{"http://[::1]:80/", "::1"},
		{"http://example.org", "example.org"},
		{"::not a url", ""},
	}
	for _, tt := range tests {
		if got := HostOf(tt.url); got != tt.want {
			t.Errorf("HostOf(%q) = %q, want %q", tt.url, got, tt.want)
		}
	}
}
