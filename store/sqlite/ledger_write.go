package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"cronsheet/store"
	"cronsheet/task"
)

// WriteRuns records recs and then finishes outcomes in one transaction
// (store.RunWriter): RecordFires's work, then FinishRuns's, on the one
// writer connection, so the fires and outcomes of a burst share a
// commit. Each item stands on its own as in those two; any other failure
// fails the whole transaction, and nothing is stored.
func (s *Store) WriteRuns(ctx context.Context, recs, outcomes []store.FireRecord) (store.RunWrites, error) {
	if len(recs) > store.MaxStatusBatch || len(outcomes) > store.MaxStatusBatch {
		return store.RunWrites{}, fmt.Errorf("write runs: %w", task.Invalid("records",
			"%d fires and %d outcomes: at most %d of each", len(recs), len(outcomes), store.MaxStatusBatch))
	}
	fires, args := fireArgs(recs)
	finished := make([]error, len(outcomes))
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if len(recs) > 0 {
			if err := s.recordFiresIn(ctx, tx, recs, args, fires); err != nil {
				return fmt.Errorf("record %d fires: %w", len(recs), err)
			}
		}
		if len(outcomes) > 0 {
			if err := s.finishRunsIn(ctx, tx, outcomes, finished); err != nil {
				return fmt.Errorf("finish %d runs: %w", len(outcomes), err)
			}
		}
		return nil
	})
	if err != nil {
		return store.RunWrites{}, fmt.Errorf("write runs: %w", err)
	}
	return store.RunWrites{Fires: fires, Finished: finished}, nil
}

var _ store.RunWriter = (*Store)(nil)
