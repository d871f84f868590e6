package fire

import (
	"context"
	"time"

	"cronsheet/store"
)

// runWrite is one item of the run writer: a fire's ledger record, or a
// finished run (outcome) with its task's status.
type runWrite struct {
	rec     store.FireRecord
	outcome bool
}

// runWritten is what the run writer did with one runWrite: fire for a
// record, err for an outcome.
type runWritten struct {
	fire store.FireResult
	err  error
}

// newRunWriter group-commits the fire records and the finished runs of
// this process together when the store can (store.RunWriter): a burst's
// fires and the deliveries ending meanwhile share each transaction, the
// records written first, rather than two group commits taking turns at
// the store's one writer with half the batch each. Nil when the store
// cannot: records and outcomes then have group commits of their own.
func newRunWriter(st Store, timeout time.Duration) *groupCommit[runWrite, runWritten] {
	rw, ok := st.(store.RunWriter)
	if !ok {
		return nil
	}
	return runWriterOf(rw, timeout)
}

// runWriterOf is the run writer's group commit over rw.
func runWriterOf(rw store.RunWriter, timeout time.Duration) *groupCommit[runWrite, runWritten] {
	return &groupCommit[runWrite, runWritten]{
		write: func(ctx context.Context, items []runWrite) ([]runWritten, error) {
			return writeRuns(ctx, rw, items)
		},
		failed:  func(err error) runWritten { return runWritten{fire: store.FireResult{Err: err}, err: err} },
		timeout: timeout,
		max:     2 * maxGroupBatch,
	}
}

// writeRuns writes items with one WriteRuns call: its records, in order,
// then its outcomes, in order; out[i] is items[i]'s result.
func writeRuns(ctx context.Context, rw store.RunWriter, items []runWrite) ([]runWritten, error) {
	var recs, outcomes []store.FireRecord
	for _, it := range items {
		if it.outcome {
			outcomes = append(outcomes, it.rec)
		} else {
			recs = append(recs, it.rec)
		}
	}
	res, err := rw.WriteRuns(ctx, recs, outcomes)
	if err != nil {
		return nil, err
	}
	out := make([]runWritten, len(items))
	r, o := 0, 0
	for i, it := range items {
		if it.outcome {
			out[i].err = res.Finished[o]
			o++
		} else {
			out[i].fire = res.Fires[r]
			r++
		}
	}
	return out, nil
}

// recordAll writes recs through the run writer when there is one, else
// through the recorder.
func (f *Firer) recordAll(recs []store.FireRecord) []store.FireResult {
	if f.runs == nil {
		return f.rec.submit(recs...)
	}
	items := make([]runWrite, len(recs))
	for i, rec := range recs {
		items[i] = runWrite{rec: rec}
	}
	written := f.runs.submit(items...)
	out := make([]store.FireResult, len(written))
	for i, w := range written {
		out[i] = w.fire
	}
	return out
}
