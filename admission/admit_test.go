package admission

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

// TestAcquireWithAdmit: admit runs only for requests that passed the
// group here (at most the limit at once), its release comes back with the
// group slot, and an admit that fails frees the group slot for the next.
func TestAcquireWithAdmit(t *testing.T) {
	ctx := testCtx(t)
	b := setup(t, Config{})
	req := Request{Group: "g", Limit: 2}

	var inAdmit, maxInAdmit, held atomic.Int32
	gateOpen := make(chan struct{})
	admit := func(ctx context.Context) (func(), error) {
		n := inAdmit.Add(1)
		for {
			m := maxInAdmit.Load()
			if n <= m || maxInAdmit.CompareAndSwap(m, n) {
				break
			}
		}
		defer inAdmit.Add(-1)
		select {
		case <-gateOpen:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		held.Add(1)
		return func() { held.Add(-1) }, nil
	}
	const n = 6
	var wg sync.WaitGroup
	releases := make(chan func(), n)
	for range n {
		wg.Go(func() {
			rel, err := b.c.AcquireWith(ctx, req, admit)
			if err != nil {
				t.Errorf("AcquireWith: %v", err)
				return
			}
			releases <- rel
		})
	}
	waitFor(ctx, t, "two requests in admit and four queued", func() bool {
		st := b.c.Stats().Groups["g"]
		return inAdmit.Load() == 2 && st.Waiting == 4 && st.InFlight == 2
	})
	close(gateOpen)
	for range n {
		rel := <-releases
		if got := held.Load(); got < 1 || got > 2 {
			t.Errorf("%d admit holdings at once, want 1 or 2", got)
		}
		rel()
		rel() // twice is once
	}
	wg.Wait()
	if got := maxInAdmit.Load(); got != 2 {
		t.Errorf("at most %d requests were in admit at once, want 2 (the group's limit)", got)
	}
	if held.Load() != 0 {
		t.Errorf("%d admit holdings left after every release", held.Load())
	}

	// A failing admit holds nothing: the group slot goes to the next.
	boom := errors.New("boom")
	if _, err := b.c.AcquireWith(ctx, Request{Group: "h", Limit: 1}, func(context.Context) (func(), error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("AcquireWith with a failing admit = %v, want boom", err)
	}
	rel := mustAcquire(ctx, t, b.c, Request{Group: "h", Limit: 1})
	rel()
	if _, ok := b.c.Stats().Groups["h"]; ok {
		t.Error("group h still known after its only request released")
	}
}
