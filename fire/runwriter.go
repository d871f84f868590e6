package fire

import (
	"context"
	"time"

	"cronsheet/store"
)

// runWrite is one item of the run writer: a fire's ledger record, a run
// re-asserted by its delivery (update), or a finished run (outcome) with
// its task's status.
type runWrite struct {
	rec  store.FireRecord
	kind writeKind
}

// writeKind says what a runWrite is.
type writeKind int

// The kinds of runWrite.
const (
	writeFire writeKind = iota
	writeUpdate
	writeOutcome
)

// runWritten is what the run writer did with one runWrite: fire for a
// record, err for an update or an outcome.
type runWritten struct {
	fire store.FireResult
	err  error
}

// newRunWriter group-commits the fire records, the re-asserted runs and
// the finished runs of this process together when the store can
// (store.RunWriter): a burst's fires, the deliveries that waited long for
// a slot and the deliveries ending meanwhile share each transaction, the
// records written first, rather than group commits and single writes
// taking turns at the store's one writer. Nil when the store cannot:
// records and outcomes then have group commits of their own, and runs
// are re-asserted one by one.
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
		// Fire records share a transaction with the updates and outcomes
		// queued meanwhile, at most maxGroupBatch of each.
		share: func(w runWrite) int {
			if w.kind == writeFire {
				return 0
			}
			return 1
		},
	}
}

// writeRuns writes items with one WriteRuns call: its records, then its
// updates, then its outcomes, each kind in order; out[i] is items[i]'s
// result.
func writeRuns(ctx context.Context, rw store.RunWriter, items []runWrite) ([]runWritten, error) {
	var b store.RunBatch
	for _, it := range items {
		switch it.kind {
		case writeFire:
			b.Fires = append(b.Fires, it.rec)
		case writeUpdate:
			b.Updates = append(b.Updates, it.rec.Run)
		default:
			b.Outcomes = append(b.Outcomes, it.rec)
		}
	}
	res, err := rw.WriteRuns(ctx, b)
	if err != nil {
		return nil, err
	}
	out := make([]runWritten, len(items))
	var f, u, o int
	for i, it := range items {
		switch it.kind {
		case writeFire:
			out[i].fire = res.Fires[f]
			f++
		case writeUpdate:
			out[i].err = res.Updated[u]
			u++
		default:
			out[i].err = res.Finished[o]
			o++
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
