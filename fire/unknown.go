package fire

import (
	"context"
	"errors"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// resolveUnknown settles the records whose ledger write failed after all
// its group commit's tries (results[i].Err set): such a write may have
// been stored though the store reported an error (the outcome unknown),
// and a fire that answered the error would leave its stored run to the
// rescuer, delivered only past its deadline and the rescue grace, while
// the caller's retry (a new trigger id) finds the slot taken and delivers
// nothing. So each one is read back by its trigger id:
//   - stored by this node at the record's fence: this fire's own run,
//     reported inserted, and delivered now, exactly once (the records are
//     still marked recording, so no Resume takes it meanwhile);
//   - stored, but no longer at that fence or owner (taken over since):
//     reported not inserted, so the slot counts as fired and this node
//     delivers nothing;
//   - not in the ledger (task.ErrNotFound): nothing was stored, and the
//     error stands, for the caller's retry;
//   - the read fails too: the error stands, and a stored run is the
//     rescuer's, as before.
//
// The reads share one StoreTimeout, as the fire's checks do.
func (f *Firer) resolveUnknown(recs []store.FireRecord, results []store.FireResult) {
	var ctx context.Context
	for i, res := range results {
		if res.Err == nil || errors.Is(res.Err, task.ErrNotFound) || errors.Is(res.Err, task.ErrInvalid) {
			continue
		}
		if ctx == nil {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(f.workCtx, f.cfg.StoreTimeout)
			defer cancel()
		}
		stored, err := f.readBack(ctx, recs[i].Run)
		switch {
		case err != nil:
			f.logger.Warn("fire record failed and could not be read back", "task_id", recs[i].Run.TaskID,
				"trigger_id", recs[i].Run.TriggerID, "error", res.Err, "read_error", err)
		case stored == nil:
			// Not stored: the record's error stands.
		default:
			mine := stored.Node == recs[i].Run.Node && stored.Fence == recs[i].Run.Fence
			f.logger.Info("fire record reported failed but was stored", "task_id", recs[i].Run.TaskID,
				"trigger_id", recs[i].Run.TriggerID, "own", mine, "error", res.Err)
			results[i] = store.FireResult{Inserted: mine}
		}
	}
}

// readBack reads run back by its trigger id, retrying a failed read with
// a short backoff until ctx ends: the run as stored, or nil when it is not
// in the ledger.
func (f *Firer) readBack(ctx context.Context, run *task.Run) (*task.Run, error) {
	wait := 20 * time.Millisecond
	for {
		stored, err := f.store.GetRun(ctx, run.TriggerID)
		switch {
		case err == nil:
			if stored.TaskID != run.TaskID || !stored.Slot.Equal(run.Slot) || stored.Target != run.Target {
				return nil, nil // not this record's (trigger ids are unique: never so)
			}
			return stored, nil
		case errors.Is(err, task.ErrNotFound):
			return nil, nil
		}
		if !sleep(ctx, wait) {
			return nil, err
		}
		wait = min(2*wait, time.Second)
	}
}
