package mongo

import (
	"context"
	"errors"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"cronsheet/task"
)

// asInt64 reads a numeric field of a decoded document.
func asInt64(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case int32:
		return int64(n)
	case float64:
		return int64(n)
	}
	return 0
}

// newestSlot returns the newest slot of taskID's runs matching extra, or
// -1 when there is none.
func (s *Store) newestSlot(ctx context.Context, taskID string, extra bson.D) (int64, error) {
	filter := append(bson.D{{Key: "task_id", Value: taskID}}, extra...)
	var d runDoc
	err := s.runs.FindOne(ctx, filter, options.FindOne().SetSort(bson.D{{Key: "slot", Value: -1}}).
		SetProjection(bson.D{{Key: "slot", Value: 1}})).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return -1, nil
	}
	return d.Slot, err
}

// pruneRuns deletes those of the examined finished runs that are not their
// task's floor: the newest run, and the newest schedule or misfire run
// (LastSlot's answer). A floor only moves forward, so a run found below it
// stays deletable whatever happens meanwhile.
func (s *Store) pruneRuns(ctx context.Context, docs []bson.M) (int, error) {
	type floor struct{ all, sched int64 }
	floors := map[string]floor{}
	sched := bson.D{{Key: "trigger_type", Value: bson.D{{Key: "$in", Value: scheduledTriggers()}}}}
	var del bson.A
	for _, d := range docs {
		id, _ := d["task_id"].(string)
		f, ok := floors[id]
		if !ok {
			var err error
			if f.all, err = s.newestSlot(ctx, id, nil); err != nil {
				return 0, err
			}
			if f.sched, err = s.newestSlot(ctx, id, sched); err != nil {
				return 0, err
			}
			floors[id] = f
		}
		slot := asInt64(d["slot"])
		tt, _ := d["trigger_type"].(string)
		isSched := tt == string(task.TriggerSchedule) || tt == string(task.TriggerMisfire)
		if slot < f.all && (!isSched || slot < f.sched) {
			del = append(del, d["trigger_id"])
		}
	}
	if len(del) == 0 {
		return 0, nil
	}
	r, err := s.runs.DeleteMany(ctx, bson.D{{Key: "trigger_id", Value: bson.D{{Key: "$in", Value: del}}},
		{Key: "state", Value: bson.D{{Key: "$in", Value: finalStates()}}}})
	if err != nil {
		return 0, err
	}
	return int(r.DeletedCount), nil
}

// jobFinal is the filter of a job that may go: closed or done, unclaimed,
// last updated before updatedBelow (unix ms, PruneParams.UpdatedBelow).
func jobFinal(updatedBelow int64) bson.D {
	return bson.D{{Key: "scenario", Value: task.JobScenario}, {Key: "is_claimed", Value: 0},
		{Key: "updated_at", Value: bson.D{{Key: "$lt", Value: updatedBelow}}},
		{Key: "$or", Value: bson.A{bson.D{{Key: "is_done", Value: 1}}, bson.D{{Key: "state", Value: string(task.StateClosed)}}}}}
}

// pruneJobs deletes those of the examined jobs that may go (jobFinal, and
// no run that is not final), then the events, key, key moves and runs of
// the ones that went. A crash in between leaves a key without its job,
// which job_keys treats as free once claimGrace has passed, and events or
// runs of no job, which nothing reads.
//
// SQLite checks for live runs and deletes in one transaction; here the
// check and the delete are two commands, and a backfill (the one fire a
// closed or done job takes) may record its run in between. The delete
// therefore re-checks, in its filter, that each job's last_fire is still
// the one examined (unfired): a fire records its run, then writes its slot
// as the task's last_fire (store.FireRecord's status), a slot after every
// run of the task (the ledger key; a backfill fires a millisecond after
// the job's newest run), so last_fire changes with every new run. A fire
// whose status was written before the delete keeps the job (the next
// pass finds its run live); one whose status write comes after finds the
// task gone, and recordFire takes its run back (RecordFires reports the
// task missing on its retry; a run left by then is one of no task, which
// the rescuer cancels as an orphan): nothing is delivered for a job that
// went. TestPruneJobsSparesBackfilledJob stages the fire in between.
func (s *Store) pruneJobs(ctx context.Context, docs []bson.M, updatedBelow int64) (int, error) {
	var ids bson.A
	keyOf := map[string]string{}
	lastFire := map[string]int64{}
	for _, d := range docs {
		id, _ := d["task_id"].(string)
		state, _ := d["state"].(string)
		if asInt64(d["is_claimed"]) != 0 || asInt64(d["updated_at"]) >= updatedBelow ||
			(asInt64(d["is_done"]) != 1 && state != string(task.StateClosed)) {
			continue
		}
		ids = append(ids, id)
		lastFire[id] = asInt64(d["last_fire"])
		if j, ok := d["job"].(bson.M); ok {
			keyOf[id], _ = j["key"].(string)
		}
	}
	if len(ids) == 0 {
		return 0, nil
	}
	live, err := taskIDs(ctx, s.runs, bson.D{{Key: "task_id", Value: bson.D{{Key: "$in", Value: ids}}},
		{Key: "state", Value: bson.D{{Key: "$nin", Value: finalStates()}}}})
	if err != nil {
		return 0, err
	}
	ids = removeAll(ids, live)
	if len(ids) == 0 {
		return 0, nil
	}
	if s.pruneJobsChecked != nil {
		s.pruneJobsChecked()
	}
	r, err := s.tasks.DeleteMany(ctx, append(jobFinal(updatedBelow), unfiredSince(ids, lastFire)))
	if err != nil {
		return 0, err
	}
	left, err := taskIDs(ctx, s.tasks, bson.D{{Key: "task_id", Value: bson.D{{Key: "$in", Value: ids}}}})
	if err != nil {
		return int(r.DeletedCount), err
	}
	gone := removeAll(ids, left)
	return int(r.DeletedCount), s.deleteJobParts(ctx, gone, keyOf)
}

// unfiredSince is the filter clause of the jobs ids whose last_fire is
// still lastFire's (one $in per value: jobs that never fired share 0).
// Never fired (0) matches a document without the field too.
func unfiredSince(ids bson.A, lastFire map[string]int64) bson.E {
	byValue := map[int64]bson.A{}
	var values []int64
	for _, id := range ids {
		v := lastFire[id.(string)]
		if _, ok := byValue[v]; !ok {
			values = append(values, v)
		}
		byValue[v] = append(byValue[v], id)
	}
	or := make(bson.A, len(values))
	for i, v := range values {
		var is any = v
		if v == 0 {
			is = bson.D{{Key: "$in", Value: bson.A{int64(0), nil}}}
		}
		or[i] = bson.D{{Key: "last_fire", Value: is}, {Key: "task_id", Value: bson.D{{Key: "$in", Value: byValue[v]}}}}
	}
	// Under $and: jobFinal has an $or of its own.
	return bson.E{Key: "$and", Value: bson.A{bson.D{{Key: "$or", Value: or}}}}
}

// deleteJobParts deletes the events, key, key moves and runs of jobs
// that are gone.
func (s *Store) deleteJobParts(ctx context.Context, gone bson.A, keyOf map[string]string) error {
	if len(gone) == 0 {
		return nil
	}
	in := bson.D{{Key: "$in", Value: gone}}
	var keys bson.A
	for _, id := range gone {
		if k := keyOf[id.(string)]; k != "" {
			keys = append(keys, k)
		}
	}
	if len(keys) > 0 {
		if _, err := s.jobKeys.DeleteMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: keys}}}, {Key: "task_id", Value: in}}); err != nil {
			return err
		}
	}
	if _, err := s.jobEvents.DeleteMany(ctx, bson.D{{Key: "job_id", Value: in}}); err != nil {
		return err
	}
	if _, err := s.jobMoves.DeleteMany(ctx, bson.D{{Key: "_id", Value: in}}); err != nil {
		return err
	}
	_, err := s.runs.DeleteMany(ctx, bson.D{{Key: "task_id", Value: in}})
	return err
}

// taskIDs returns the task_id of each document of c matching filter.
func taskIDs(ctx context.Context, c *collection, filter bson.D) ([]string, error) {
	type doc struct {
		TaskID string `bson:"task_id"`
	}
	cur, err := c.Find(ctx, filter, findOpts().SetProjection(bson.D{{Key: "task_id", Value: 1}}))
	docs, err := findAll[doc](ctx, cur, err)
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = d.TaskID
	}
	return out, err
}

// removeAll returns ids without those in drop.
func removeAll(ids bson.A, drop []string) bson.A {
	if len(drop) == 0 {
		return ids
	}
	skip := make(map[string]bool, len(drop))
	for _, d := range drop {
		skip[d] = true
	}
	var out bson.A
	for _, id := range ids {
		if !skip[id.(string)] {
			out = append(out, id)
		}
	}
	return out
}
