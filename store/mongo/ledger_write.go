package mongo

import (
	"context"
	"fmt"
	"sync"

	"cronsheet/store"
	"cronsheet/task"
)

// finishParallel is how many FinishRun calls WriteRuns has in flight.
const finishParallel = 16

// WriteRuns writes b (store.RunWriter): its fire records with
// RecordFires, then its updates with UpdateRun, then its outcomes with
// FinishRun, the calls of each kind finishParallel at a time (each is a
// run of its own, so their order does not matter; an update or outcome
// may be of a run recorded by the same call). Two outcomes of one task
// may land in either order: their last statuses are guarded by their
// runs' slots (store.TaskStatusParams.StatusSlot), so the task ends with
// the newer slot's. There is no
// multi-document transaction on FerretDB (nor on a standalone MongoDB),
// so this is not one commit: a failed RecordFires fails the call before
// any update or outcome is written, with the records inserted by then
// kept as RecordFires says; an update's or outcome's failure is its own,
// in RunWrites, as UpdateRun's and FinishRun's are.
func (s *Store) WriteRuns(ctx context.Context, b store.RunBatch) (store.RunWrites, error) {
	if len(b.Fires) > store.MaxStatusBatch || len(b.Updates) > store.MaxStatusBatch || len(b.Outcomes) > store.MaxStatusBatch {
		return store.RunWrites{}, fmt.Errorf("write runs: %w", task.Invalid("batch",
			"%d fires, %d updates and %d outcomes: at most %d of each", len(b.Fires), len(b.Updates), len(b.Outcomes), store.MaxStatusBatch))
	}
	out := store.RunWrites{Fires: []store.FireResult{}, Updated: make([]error, len(b.Updates)), Finished: make([]error, len(b.Outcomes))}
	if len(b.Fires) > 0 {
		fires, err := s.RecordFires(ctx, b.Fires)
		if err != nil {
			return store.RunWrites{}, fmt.Errorf("write runs: %w", err)
		}
		out.Fires = fires
	}
	parallel(len(b.Updates), func(i int) { out.Updated[i] = s.UpdateRun(ctx, b.Updates[i]) })
	parallel(len(b.Outcomes), func(i int) { out.Finished[i] = s.FinishRun(ctx, b.Outcomes[i].Run, b.Outcomes[i].Status) })
	return out, nil
}

// parallel calls do(i) for each i below n, finishParallel at a time, and
// returns when all have returned.
func parallel(n int, do func(i int)) {
	g := make(chan struct{}, finishParallel)
	var wg sync.WaitGroup
	for i := range n {
		g <- struct{}{}
		wg.Go(func() {
			defer func() { <-g }()
			do(i)
		})
	}
	wg.Wait()
}

var _ store.RunWriter = (*Store)(nil)
