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

// WriteRuns records recs with RecordFires and then finishes each of
// outcomes with FinishRun (store.RunWriter), finishParallel at a time:
// each outcome is a run of its own, so their order does not matter, but
// all follow the records, so an outcome may finish a run recorded by the
// same call. There is no multi-document transaction on FerretDB (nor on
// a standalone MongoDB), so this is not one commit: a failed RecordFires
// fails the call before any outcome is written, with the records inserted
// by then kept as RecordFires says; an outcome's failure is its own, in
// RunWrites.Finished, as FinishRun's is.
func (s *Store) WriteRuns(ctx context.Context, recs, outcomes []store.FireRecord) (store.RunWrites, error) {
	if len(recs) > store.MaxStatusBatch || len(outcomes) > store.MaxStatusBatch {
		return store.RunWrites{}, fmt.Errorf("write runs: %w", task.Invalid("records",
			"%d fires and %d outcomes: at most %d of each", len(recs), len(outcomes), store.MaxStatusBatch))
	}
	out := store.RunWrites{Fires: []store.FireResult{}, Finished: make([]error, len(outcomes))}
	if len(recs) > 0 {
		fires, err := s.RecordFires(ctx, recs)
		if err != nil {
			return store.RunWrites{}, fmt.Errorf("write runs: %w", err)
		}
		out.Fires = fires
	}
	g := make(chan struct{}, finishParallel)
	var wg sync.WaitGroup
	for j, rec := range outcomes {
		g <- struct{}{}
		wg.Go(func() {
			defer func() { <-g }()
			out.Finished[j] = s.FinishRun(ctx, rec.Run, rec.Status)
		})
	}
	wg.Wait()
	return out, nil
}

var _ store.RunWriter = (*Store)(nil)
