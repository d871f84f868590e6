package mongo

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"cronsheet/store"
	"cronsheet/task"
)

// CreateJobs stores each of ts as by CreateJob, in the same order of
// steps, each step for all the jobs at once: (1) one find of the task_ids
// already taken; (2) one unordered insert of the keys into job_keys (a
// key whose insert finds it held goes through CreateJob's own check,
// which names the holder or takes over an abandoned claim — two jobs of
// ts with one key: the first in ts takes it, the other is
// task.ErrConflict); (3) when evs is given, one insert of the events of
// the jobs still to be stored; (4) one unordered insert of the jobs; a
// job whose insert fails gives its key back, as in CreateJob, and its
// event. errs[i] is ts[i]'s error, as CreateJob would return it. The
// events go before their jobs so that a crash between the two leaves an
// event of a job that does not exist (no one lists it), never a job
// without its first transition.
//
// Without transactions, a returned error does not mean that nothing was
// stored: it is returned only when step (1), (2) or (3) failed as a
// whole, before any job was inserted (keys and events taken by then are
// given back; one whose give-back failed stays as after a crash: a key is
// freed after claimGrace, an event names a job that does not exist). When
// step (4) fails as a whole, each job is looked up: one that was stored
// has no error, one that was not has the error (and its event is given
// back); one that cannot be looked up has the error, and may be stored all
// the same, as after a failed CreateJob.
func (s *Store) CreateJobs(ctx context.Context, ts []*task.Task, evs []store.JobEvent) ([]error, error) {
	if err := store.CheckCreateJobs(ts, evs); err != nil {
		return nil, fmt.Errorf("create jobs: %w", err)
	}
	errs := make([]error, len(ts))
	var todo []int // indexes into ts still to be stored
	for i, t := range ts {
		if err := checkJob(t); err != nil {
			errs[i] = fmt.Errorf("create job: %w", err)
			continue
		}
		todo = append(todo, i)
	}
	if len(todo) == 0 {
		return errs, nil
	}
	now := s.nowMS()
	ctx, cancel := s.call(ctx)
	defer cancel()
	fail := func(i int, err error) { errs[i] = fmt.Errorf("create job %s: %w", ts[i].TaskID, err) }

	// (1) Ids already taken; the same id twice in ts: the later ones.
	taken, err := s.takenTaskIDs(ctx, ts, todo)
	if err != nil {
		return nil, fmt.Errorf("create %d jobs: %w", len(todo), err)
	}
	seenID := make(map[string]bool, len(todo))
	todo = keep(todo, func(i int) bool {
		id := ts[i].TaskID
		if taken[id] || seenID[id] {
			fail(i, fmt.Errorf("%w: task_id %s is taken", task.ErrConflict, id))
			return false
		}
		seenID[id] = true
		return true
	})

	// (2) Keys.
	todo, err = s.takeKeys(ctx, ts, todo, now, fail)
	if err != nil {
		return nil, fmt.Errorf("create %d jobs: %w", len(todo), err)
	}

	// (3) Events.
	evIDs, err := s.insertFirstEvents(ctx, ts, evs, todo)
	if err != nil {
		return nil, fmt.Errorf("create %d jobs: %w", len(todo), s.giveKeysBack(ctx, ts, keyed(ts, todo), err))
	}

	// (4) Jobs.
	s.insertJobs(ctx, ts, todo, now, evIDs, fail)
	for _, i := range todo {
		if errs[i] == nil {
			setCreated(ts[i], now)
		}
	}
	return errs, nil
}

// keep returns the elements of is for which f is true, in order (in
// place).
func keep(is []int, f func(int) bool) []int {
	out := is[:0]
	for _, i := range is {
		if f(i) {
			out = append(out, i)
		}
	}
	return out
}

// keyed returns the indexes among todo of the jobs of ts with a key.
func keyed(ts []*task.Task, todo []int) []int {
	var out []int
	for _, i := range todo {
		if ts[i].Job.Key != "" {
			out = append(out, i)
		}
	}
	return out
}

// insertFirstEvents inserts evs[i], as ts[i]'s, for each i of todo, in one
// unordered insert, and returns the id of each (by ts index); none when
// evs is nil. An error means the insert failed: the events it stored are
// given back.
func (s *Store) insertFirstEvents(ctx context.Context, ts []*task.Task, evs []store.JobEvent, todo []int) (map[int]bson.ObjectID, error) {
	if evs == nil || len(todo) == 0 {
		return nil, nil
	}
	ids := make(map[int]bson.ObjectID, len(todo))
	docs := make([]any, len(todo))
	all := make([]bson.ObjectID, len(todo))
	for k, i := range todo {
		ev := evs[i]
		ids[i] = bson.NewObjectID()
		all[k] = ids[i]
		docs[k] = jobEventDoc{ID: ids[i], JobID: ts[i].TaskID, At: store.UnixMS(ev.At), State: ev.State,
			TriggerID: ev.TriggerID, Attempt: ev.Attempt, Reason: ev.Reason}
	}
	if _, err := s.jobEvents.InsertMany(ctx, docs, options.InsertMany().SetOrdered(false)); err != nil {
		return nil, errors.Join(fmt.Errorf("first job events: %w", err), s.giveEventsBack(ctx, all))
	}
	return ids, nil
}

// giveEventsBack deletes the job events with the given ids (the first
// transitions of jobs that were not stored after all).
func (s *Store) giveEventsBack(ctx context.Context, ids []bson.ObjectID) error {
	ctx, cancel := s.afterwards(ctx)
	defer cancel()
	_, err := s.jobEvents.DeleteMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}})
	return err
}

// takenTaskIDs returns which task_ids of ts[todo] exist, in one find.
func (s *Store) takenTaskIDs(ctx context.Context, ts []*task.Task, todo []int) (map[string]bool, error) {
	ids := make([]string, len(todo))
	for k, i := range todo {
		ids[k] = ts[i].TaskID
	}
	cur, err := s.tasks.Find(ctx, bson.D{{Key: "task_id", Value: bson.D{{Key: "$in", Value: ids}}}},
		findOpts().SetProjection(bson.D{{Key: "task_id", Value: 1}, {Key: "_id", Value: 0}}))
	found, err := findAll[struct {
		TaskID string `bson:"task_id"`
	}](ctx, cur, err)
	if err != nil {
		return nil, err
	}
	taken := make(map[string]bool, len(found))
	for _, f := range found {
		taken[f.TaskID] = true
	}
	return taken, nil
}

// takeKeys takes the keys of the keyed jobs among ts[todo] in one
// unordered insert into job_keys; a key found held goes through takeKey
// (holder check, takeover of an abandoned claim), and fails its job with
// task.ErrConflict when held. It returns the jobs still to be stored.
// An error means the insert failed as a whole: the keys it took are given
// back and nothing is to be stored.
func (s *Store) takeKeys(ctx context.Context, ts []*task.Task, todo []int, now int64, fail func(int, error)) ([]int, error) {
	var docs []any
	var at []int // docs index → ts index
	for _, i := range todo {
		if key := ts[i].Job.Key; key != "" {
			docs = append(docs, jobKeyDoc{Key: key, TaskID: ts[i].TaskID, At: now})
			at = append(at, i)
		}
	}
	if len(docs) == 0 {
		return todo, nil
	}
	failed := map[int]error{} // docs index → its write error
	_, err := s.jobKeys.InsertMany(ctx, docs, options.InsertMany().SetOrdered(false))
	var bwe mongo.BulkWriteException
	if errors.As(err, &bwe) && bwe.WriteConcernError == nil {
		for _, we := range bwe.WriteErrors {
			if we.Index < 0 || we.Index >= len(docs) {
				return nil, s.giveKeysBack(ctx, ts, at, err)
			}
			failed[we.Index] = we
		}
	} else if err != nil {
		return nil, s.giveKeysBack(ctx, ts, at, err)
	}
	refused := map[int]bool{} // ts index
	for di, werr := range failed {
		i := at[di]
		if !isDuplicate(werr) {
			fail(i, werr)
			refused[i] = true
			continue
		}
		// Held: by a job of ts (taken just now, then the check names it),
		// by a job that exists, or by an abandoned claim.
		if err := s.takeKey(ctx, ts[i].Job.Key, ts[i].TaskID, now); err != nil {
			fail(i, err)
			refused[i] = true
		}
	}
	return keep(todo, func(i int) bool { return !refused[i] }), nil
}

// giveKeysBack deletes the claims of ts[at] after their insert failed with
// err, and returns err (joined with the delete's error).
func (s *Store) giveKeysBack(ctx context.Context, ts []*task.Task, at []int, err error) error {
	if len(at) == 0 {
		return err
	}
	ctx, cancel := s.afterwards(ctx)
	defer cancel()
	var or bson.A
	for _, i := range at {
		or = append(or, bson.D{{Key: "_id", Value: ts[i].Job.Key}, {Key: "task_id", Value: ts[i].TaskID}})
	}
	_, derr := s.jobKeys.DeleteMany(ctx, bson.D{{Key: "$or", Value: or}})
	return errors.Join(err, derr)
}

// insertJobs inserts the jobs ts[todo] in one unordered insert; a job
// that fails gets its error through fail and gives its key back (as
// CreateJob does) and its first event (evIDs, by ts index; nil: none).
func (s *Store) insertJobs(ctx context.Context, ts []*task.Task, todo []int, now int64, evIDs map[int]bson.ObjectID, fail func(int, error)) {
	if len(todo) == 0 {
		return
	}
	docs := make([]any, len(todo))
	for k, i := range todo {
		docs[k] = s.jobTaskDoc(ts[i], now)
	}
	_, err := s.tasks.InsertMany(ctx, docs, options.InsertMany().SetOrdered(false))
	failed := map[int]error{} // ts index → its error
	var bwe mongo.BulkWriteException
	switch {
	case err == nil:
	case errors.As(err, &bwe) && bwe.WriteConcernError == nil && validIndexes(bwe.WriteErrors, len(docs)):
		for _, we := range bwe.WriteErrors {
			i := todo[we.Index]
			if isDuplicate(we) {
				failed[i] = fmt.Errorf("%w: task_id %s is taken: %w", task.ErrConflict, ts[i].TaskID, we)
			} else {
				failed[i] = we
			}
		}
	default:
		// Failed as a whole: which were stored is not known.
		for _, i := range todo {
			if e := s.taskExists(ctx, ts[i].TaskID); !errors.Is(e, task.ErrNotFound) {
				if e != nil {
					fail(i, errors.Join(err, e))
				}
				continue // stored (or unknown: its claim stays)
			}
			failed[i] = err
		}
	}
	var gone []bson.ObjectID // first events of jobs not stored
	for i := range failed {
		if id, ok := evIDs[i]; ok {
			gone = append(gone, id)
		}
	}
	var evErr error
	if len(gone) > 0 {
		evErr = s.giveEventsBack(ctx, gone)
	}
	for i, ferr := range failed {
		if _, ok := evIDs[i]; ok && evErr != nil {
			ferr = errors.Join(ferr, fmt.Errorf("give its first event back: %w", evErr))
		}
		if key := ts[i].Job.Key; key != "" {
			ferr = errors.Join(ferr, s.undoClaim(ctx, s.jobKeys, bson.D{{Key: "_id", Value: key}, {Key: "task_id", Value: ts[i].TaskID}},
				ts[i].TaskID, ferr))
		}
		fail(i, ferr)
	}
}

// validIndexes reports whether every write error names a document of n.
func validIndexes(wes []mongo.BulkWriteError, n int) bool {
	for _, we := range wes {
		if we.Index < 0 || we.Index >= n {
			return false
		}
	}
	return true
}
