package mongo

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"cronsheet/store"
	"cronsheet/task"
)

// lastSlotsParallel is how many LastSlot reads LastSlots has in flight.
const lastSlotsParallel = 16

// LastSlots is LastSlot for many tasks: one indexed find per task
// (ix_runs_sched), lastSlotsParallel at a time, so a batch costs a few
// round trips rather than one each. (An aggregation with $max or $first
// would be one call, but FerretDB v1 implements neither accumulator.)
// Tasks without a scheduled slot are absent from the map.
func (s *Store) LastSlots(ctx context.Context, taskIDs []string) (map[string]time.Time, error) {
	if len(taskIDs) > store.MaxStatusBatch {
		return nil, fmt.Errorf("last slots: %w", task.Invalid("task_ids", "at most %d per call, got %d", store.MaxStatusBatch, len(taskIDs)))
	}
	var (
		mu    sync.Mutex
		out   = make(map[string]time.Time, len(taskIDs))
		first error
	)
	g := make(chan struct{}, lastSlotsParallel)
	var wg sync.WaitGroup
	for _, id := range taskIDs {
		g <- struct{}{}
		wg.Go(func() {
			defer func() { <-g }()
			slot, err := s.LastSlot(ctx, id)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil && first == nil:
				first = err
			case err == nil && !slot.IsZero():
				out[id] = slot
			}
		})
	}
	wg.Wait()
	if first != nil {
		return nil, fmt.Errorf("last slots of %d tasks: %w", len(taskIDs), first)
	}
	return out, nil
}

// UnfinishedRunsOf is UnfinishedRuns for many tasks: one find; each
// task's runs oldest slot first, tasks without any absent.
func (s *Store) UnfinishedRunsOf(ctx context.Context, taskIDs []string) (map[string][]*task.Run, error) {
	if len(taskIDs) > store.MaxStatusBatch {
		return nil, fmt.Errorf("unfinished runs: %w", task.Invalid("task_ids", "at most %d per call, got %d", store.MaxStatusBatch, len(taskIDs)))
	}
	out := map[string][]*task.Run{}
	if len(taskIDs) == 0 {
		return out, nil
	}
	filter := bson.D{
		{Key: "task_id", Value: bson.D{{Key: "$in", Value: taskIDs}}},
		{Key: "state", Value: bson.D{{Key: "$in", Value: unfinishedStates()}}},
	}
	runs, err := s.findRuns(ctx, filter, findOpts().SetSort(bson.D{{Key: "task_id", Value: 1}, {Key: "slot", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("unfinished runs of %d tasks: %w", len(taskIDs), err)
	}
	for _, r := range runs {
		out[r.TaskID] = append(out[r.TaskID], r)
	}
	return out, nil
}
