package jobs

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// TestCreatesGather: the creates that are runnable when a group is about
// to be taken join it. On one processor, eight goroutines each create a
// job; the first to run finds nobody writing and, before taking its
// group, yields to the other seven, which queue behind it: one write of
// all eight, each create answered. A create alone is written alone, at
// once.
func TestCreatesGather(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	var mu sync.Mutex
	var sizes []int
	c := &creates{max: maxCreateGroup, timeout: time.Minute,
		write: func(_ context.Context, ts []*task.Task, _ []store.JobEvent) ([]error, error) {
			mu.Lock()
			sizes = append(sizes, len(ts))
			mu.Unlock()
			errs := make([]error, len(ts))
			for i, t := range ts {
				if t.TaskID == "refused" {
					errs[i] = task.ErrConflict
				}
			}
			return errs, nil
		}}
	ctx := t.Context()

	if err := c.create(ctx, &task.Task{TaskID: "alone"}, store.JobEvent{JobID: "alone"}); err != nil {
		t.Fatalf("create alone: %v", err)
	}
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		id := fmt.Sprint(i)
		if i == 3 {
			id = "refused"
		}
		wg.Go(func() { errs[i] = c.create(ctx, &task.Task{TaskID: id}, store.JobEvent{JobID: id}) })
	}
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	if !slices.Equal(sizes, []int{1, n}) {
		t.Errorf("groups written: %v, want [1 %d] (one alone, then the %d concurrent creates together)", sizes, n, n)
	}
	for i, err := range errs {
		if want := i == 3; (err != nil) != want {
			t.Errorf("create %d: %v; want an error only for create 3", i, err)
		}
	}
	if p := c.pending(); p != 0 {
		t.Errorf("%d creates still queued", p)
	}
}
