package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"cronsheet/store"
	"cronsheet/task"
)

// WriteRuns writes b in one transaction (store.RunWriter): RecordFires's
// work, then UpdateRun's for each update, then FinishRuns's, on the one
// writer connection, so the fires, re-asserted runs and outcomes of a
// burst share a commit. Each item stands on its own as in those; any
// other failure fails the whole transaction, and nothing is stored.
func (s *Store) WriteRuns(ctx context.Context, b store.RunBatch) (store.RunWrites, error) {
	if len(b.Fires) > store.MaxStatusBatch || len(b.Updates) > store.MaxStatusBatch || len(b.Outcomes) > store.MaxStatusBatch {
		return store.RunWrites{}, fmt.Errorf("write runs: %w", task.Invalid("batch",
			"%d fires, %d updates and %d outcomes: at most %d of each", len(b.Fires), len(b.Updates), len(b.Outcomes), store.MaxStatusBatch))
	}
	fires, args := fireArgs(b.Fires)
	out := store.RunWrites{Fires: fires, Updated: make([]error, len(b.Updates)), Finished: make([]error, len(b.Outcomes))}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if len(b.Fires) > 0 {
			if err := s.recordFiresIn(ctx, tx, b.Fires, args, fires); err != nil {
				return fmt.Errorf("record %d fires: %w", len(b.Fires), err)
			}
		}
		if len(b.Updates) > 0 {
			if err := s.updateRunsIn(ctx, tx, b.Updates, out.Updated); err != nil {
				return fmt.Errorf("update %d runs: %w", len(b.Updates), err)
			}
		}
		if len(b.Outcomes) > 0 {
			if err := s.finishRunsIn(ctx, tx, b.Outcomes, out.Finished); err != nil {
				return fmt.Errorf("finish %d runs: %w", len(b.Outcomes), err)
			}
		}
		return nil
	})
	if err != nil {
		return store.RunWrites{}, fmt.Errorf("write runs: %w", err)
	}
	return out, nil
}

// updateRunsIn stores each of runs in tx as UpdateRun does: errs[i] gets
// a refused write of runs[i] (missing, fenced, invalid), which changes
// nothing; any other error fails the transaction.
func (s *Store) updateRunsIn(ctx context.Context, tx *sql.Tx, runs []*task.Run, errs []error) error {
	qctx := batchCtx(ctx)
	rw := s.runWriterIn(qctx, tx)
	for i, r := range runs {
		if err := ctx.Err(); err != nil {
			return err
		}
		err := rw.update(qctx, r)
		switch {
		case err == nil:
		case errors.Is(err, task.ErrNotFound) || errors.Is(err, task.ErrFenced) || errors.Is(err, task.ErrInvalid):
			errs[i] = fmt.Errorf("update run %s: %w", r.TriggerID, err)
		default:
			return fmt.Errorf("update run %s: %w", r.TriggerID, err)
		}
	}
	return nil
}

var _ store.RunWriter = (*Store)(nil)
