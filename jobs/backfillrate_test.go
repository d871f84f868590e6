package jobs

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"cronsheet/fire"
	"cronsheet/internal/testwait"
	"cronsheet/task"
)

// TestBackfillRateIsPerService: two backfill requests running at once
// share the service's BackfillRate: n triggers in all take at least n-1
// intervals from the first request, where each request paced on its own
// took half that. The assert is a lower bound only (a trigger is never
// early, however loaded the machine; it may be late).
func TestBackfillRateIsPerService(t *testing.T) {
	ctx := t.Context()
	const (
		rate    = 20.0 // per second
		perReq  = 10
		total   = 2 * perReq
		between = time.Duration(float64(time.Second) / rate)
	)
	var (
		mu  sync.Mutex
		ats []time.Time
	)
	trigger := func(_ context.Context, p fire.TriggerParams) ([]*task.Run, error) {
		mu.Lock()
		defer mu.Unlock()
		ats = append(ats, time.Now())
		return []*task.Run{{TaskID: p.TaskID}}, nil
	}
	svc := New(Deps{Store: testStore(t), Trigger: trigger, BackfillRate: rate, RepairAfter: -1})
	defer svc.Close()
	var ids [2][]string
	for i := range total {
		v, err := svc.Submit(ctx, jobRequest(fmt.Sprintf("http://127.0.0.1:9/rate%d", i), ""))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Cancel(ctx, v.ID); err != nil {
			t.Fatal(err)
		}
		ids[i%2] = append(ids[i%2], v.ID)
	}
	start := time.Now()
	var wg sync.WaitGroup
	for _, req := range ids {
		wg.Go(func() {
			if ans, err := svc.Backfill(ctx, BackfillRequest{IDs: req}); err != nil || len(ans.Accepted) != perReq {
				t.Errorf("backfill: %+v, %v; want %d accepted", ans, err, perReq)
			}
		})
	}
	wg.Wait()
	testwait.For(t, 60*time.Second, "every backfill trigger", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(ats) == total
	})
	mu.Lock()
	defer mu.Unlock()
	last := ats[len(ats)-1]
	if took, least := last.Sub(start), (total-1)*between; took < least {
		t.Errorf("%d backfill triggers of two requests took %v; at %v per second they take at least %v",
			total, took, rate, least)
	}
}
