package store

import (
	"context"
)

// RunFinisher is implemented by drivers that finish many runs in one step
// (a group commit of the deliveries that end together). Each record stands
// on its own, exactly as by Ledger.FinishRun(rec.Run, rec.Status): errs[i]
// is that call's error for recs[i] (nil when stored). A returned error
// means nothing was stored. At most MaxStatusBatch records per call.
type RunFinisher interface {
	FinishRuns(ctx context.Context, recs []FireRecord) (errs []error, err error)
}
