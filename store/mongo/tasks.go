package mongo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"cronsheet/store"
	"cronsheet/task"
)

func taskKey(taskID string) bson.D { return bson.D{{Key: "task_id", Value: taskID}} }

// GetTask returns a task or task.ErrNotFound.
func (s *Store) GetTask(ctx context.Context, taskID string) (*task.Task, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	var d taskDoc
	if err := s.tasks.FindOne(ctx, taskKey(taskID)).Decode(&d); err != nil {
		return nil, fmt.Errorf("get task %s: %w", taskID, translate(err))
	}
	return d.task(), nil
}

// GetTasks returns the tasks with the given ids that exist
// (store.Tasks.GetTasks), with one find on the task_id index.
func (s *Store) GetTasks(ctx context.Context, taskIDs []string) ([]*task.Task, error) {
	docs, err := tasksByID[taskDoc](ctx, s, "get tasks", taskIDs, findOpts())
	if err != nil {
		return nil, err
	}
	out := make([]*task.Task, len(docs))
	for i := range docs {
		out[i] = docs[i].task()
	}
	return out, nil
}

// TaskHeads returns the heads of the tasks with the given ids that exist
// (store.Tasks.TaskHeads): their documents without the content.
func (s *Store) TaskHeads(ctx context.Context, taskIDs []string) ([]store.TaskHead, error) {
	proj := bson.D{}
	for _, k := range []string{"task_id", "version", "is_enable", "is_claimed", "claimed_by", "lease_until", "is_done",
		"next_fire", "last_fire", "last_status", "updated_at"} {
		proj = append(proj, bson.E{Key: k, Value: 1})
	}
	docs, err := tasksByID[taskHeadDoc](ctx, s, "task heads", taskIDs, findOpts().SetProjection(proj))
	if err != nil {
		return nil, err
	}
	out := make([]store.TaskHead, len(docs))
	for i, d := range docs {
		out[i] = store.TaskHead{TaskID: d.TaskID, Version: d.Version, IsEnable: d.IsEnable, IsClaimed: d.IsClaimed,
			ClaimedBy: d.ClaimedBy, LeaseUntil: store.FromUnixMS(d.LeaseUntil), IsDone: d.IsDone,
			NextFire: store.FromUnixMS(d.NextFire), LastFire: store.FromUnixMS(d.LastFire), LastStatus: d.LastStatus,
			UpdatedAt: store.FromUnixMS(d.UpdatedAt)}
	}
	return out, nil
}

// tasksByID decodes the task documents with the given ids that exist (at
// most store.MaxStatusBatch) with one find on the task_id index; what
// names the read in errors. On an error it returns none.
func tasksByID[T any](ctx context.Context, s *Store, what string, taskIDs []string, opts *options.FindOptionsBuilder) ([]T, error) {
	if len(taskIDs) > store.MaxStatusBatch {
		return nil, fmt.Errorf("%s: %w", what, task.Invalid("task_ids", "at most %d", store.MaxStatusBatch))
	}
	if len(taskIDs) == 0 {
		return nil, nil
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	cur, err := s.tasks.Find(ctx, bson.D{{Key: "task_id", Value: bson.D{{Key: "$in", Value: taskIDs}}}}, opts)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, translate(err))
	}
	var docs []T
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("%s: %w", what, translate(err))
	}
	return docs, nil
}

// taskHeadDoc is what TaskHeads reads of a task's document.
type taskHeadDoc struct {
	TaskID     string `bson:"task_id"`
	Version    int64  `bson:"version"`
	IsEnable   int    `bson:"is_enable"`
	IsClaimed  int    `bson:"is_claimed"`
	ClaimedBy  string `bson:"claimed_by"`
	LeaseUntil int64  `bson:"lease_until"`
	IsDone     int    `bson:"is_done"`
	NextFire   int64  `bson:"next_fire"`
	LastFire   int64  `bson:"last_fire"`
	LastStatus string `bson:"last_status"`
	UpdatedAt  int64  `bson:"updated_at"`
}

// ClaimTasks claims up to p.Limit due tasks for p.Owner, oldest first, with
// one findOneAndUpdate per task: each one atomically moves a task out of the
// due set (on MongoDB; not on FerretDB v1, see the package comment), so no
// task is returned twice. Claims do not change a task's version.
func (s *Store) ClaimTasks(ctx context.Context, p store.ClaimParams) ([]*task.Task, error) {
	if p.Owner == "" {
		return nil, fmt.Errorf("claim tasks: %w", task.Invalid("owner", "required"))
	}
	if err := store.CheckLimit(p.Limit); err != nil {
		return nil, fmt.Errorf("claim tasks: %w", err)
	}
	filter := bson.D{{Key: "is_enable", Value: 1}, {Key: "is_claimed", Value: 0}, {Key: "is_done", Value: 0}}
	if !p.ArmBy.IsZero() {
		filter = append(filter, bson.E{Key: "arm_at", Value: bson.D{{Key: "$lte", Value: store.UnixMS(p.ArmBy)}}})
	}
	update := bson.D{{Key: "$set", Value: bson.D{
		{Key: "is_claimed", Value: 1}, {Key: "claimed_by", Value: p.Owner}, {Key: "lease_until", Value: store.UnixMS(p.LeaseUntil)},
		{Key: "arm_at", Value: int64(0)},
	}}}
	opts := options.FindOneAndUpdate().SetSort(bson.D{{Key: "arm_at", Value: 1}, {Key: "_id", Value: 1}}).
		SetReturnDocument(options.After)
	var out []*task.Task
	for len(out) < p.Limit {
		// The store's timeout bounds each claim, not the batch: a batch of
		// hundreds on a slow server (FerretDB sorts in Go) would otherwise
		// run out of time half way every pass. ctx bounds the whole.
		var d taskDoc
		cctx, cancel := s.call(ctx)
		err := s.tasks.FindOneAndUpdate(cctx, filter, update, opts).Decode(&d)
		cancel()
		if errors.Is(err, mongo.ErrNoDocuments) {
			break
		}
		if err != nil {
			// The tasks claimed so far stay claimed; their leases expire.
			return nil, fmt.Errorf("claim tasks for %s: %w", p.Owner, err)
		}
		out = append(out, d.task())
	}
	return out, nil
}

// ParkTasks hands back the claims of owner named by ps that are still at
// their version (store.Tasks.ParkTasks), one update per task: each is
// atomic on its own, and a task not matched is left as it is.
func (s *Store) ParkTasks(ctx context.Context, owner string, ps []store.ParkParams) ([]string, error) {
	if err := store.CheckPark(owner, ps); err != nil {
		return nil, fmt.Errorf("park tasks: %w", err)
	}
	var parked []string
	for _, p := range ps {
		filter := append(append(taskKey(p.TaskID), ownedBy(owner)...), bson.E{Key: "version", Value: p.Version})
		cctx, cancel := s.call(ctx)
		res, err := s.tasks.UpdateOne(cctx, filter, bson.D{{Key: "$set", Value: bson.D{
			{Key: "is_claimed", Value: 0}, {Key: "claimed_by", Value: ""}, {Key: "lease_until", Value: 0},
			{Key: "arm_at", Value: store.UnixMS(p.ArmAt)},
		}}})
		cancel()
		if err != nil {
			return parked, fmt.Errorf("park task %s of %s: %w", p.TaskID, owner, err)
		}
		if res.ModifiedCount > 0 {
			parked = append(parked, p.TaskID)
		}
	}
	return parked, nil
}

// RenewLeases sets lease_until of every task claimed by owner to until.
func (s *Store) RenewLeases(ctx context.Context, owner string, until time.Time) (int, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	res, err := s.tasks.UpdateMany(ctx, ownedBy(owner),
		bson.D{{Key: "$set", Value: bson.D{{Key: "lease_until", Value: store.UnixMS(until)}}}})
	if err != nil {
		return 0, fmt.Errorf("renew leases of %s: %w", owner, err)
	}
	return int(res.MatchedCount), nil
}

// ReleaseClaims gives up every claim of owner with one update.
func (s *Store) ReleaseClaims(ctx context.Context, owner string) (int, error) {
	if owner == "" {
		return 0, fmt.Errorf("release claims: %w", task.Invalid("owner", "required"))
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	res, err := s.tasks.UpdateMany(ctx, ownedBy(owner), bson.D{{Key: "$set", Value: bson.D{
		{Key: "is_claimed", Value: 0}, {Key: "claimed_by", Value: ""}, {Key: "lease_until", Value: int64(0)}}}})
	if err != nil {
		return 0, fmt.Errorf("release claims of %s: %w", owner, translate(err))
	}
	return int(res.ModifiedCount), nil
}

func ownedBy(owner string) bson.D {
	return bson.D{{Key: "claimed_by", Value: owner}, {Key: "is_claimed", Value: 1}}
}

// ListClaimed returns the tasks claimed by owner, in no particular order.
func (s *Store) ListClaimed(ctx context.Context, owner string) ([]store.ClaimedTask, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	proj := bson.D{{Key: "task_id", Value: 1}, {Key: "is_enable", Value: 1}, {Key: "is_done", Value: 1}, {Key: "version", Value: 1}}
	cur, err := s.tasks.Find(ctx, ownedBy(owner), findOpts().SetProjection(proj))
	docs, err := findAll[taskDoc](ctx, cur, err)
	if err != nil {
		return nil, fmt.Errorf("list tasks claimed by %s: %w", owner, err)
	}
	out := make([]store.ClaimedTask, len(docs))
	for i, d := range docs {
		out[i] = store.ClaimedTask{TaskID: d.TaskID, IsEnable: d.IsEnable, IsDone: d.IsDone, Version: d.Version}
	}
	return out, nil
}

// ReleaseTask gives up owner's claim on a task. A task owner does not hold
// is left alone; a missing one is task.ErrNotFound.
func (s *Store) ReleaseTask(ctx context.Context, taskID, owner string) error {
	ctx, cancel := s.call(ctx)
	defer cancel()
	res, err := s.tasks.UpdateOne(ctx, append(taskKey(taskID), ownedBy(owner)...), releaseUpdate())
	if err == nil && res.MatchedCount == 0 {
		err = s.taskExists(ctx, taskID)
	}
	if err != nil {
		return fmt.Errorf("release task %s: %w", taskID, err)
	}
	return nil
}

// releaseUpdate gives up a claim.
func releaseUpdate() bson.D {
	return bson.D{{Key: "$set", Value: bson.D{
		{Key: "is_claimed", Value: 0}, {Key: "claimed_by", Value: ""}, {Key: "lease_until", Value: 0},
	}}}
}

// taskExists returns task.ErrNotFound when there is no task taskID.
func (s *Store) taskExists(ctx context.Context, taskID string) error {
	err := s.tasks.FindOne(ctx, taskKey(taskID), options.FindOne().SetProjection(bson.D{{Key: "_id", Value: 1}})).Err()
	return translate(err)
}

// ReleaseExpired releases every claim whose lease ended before now.
func (s *Store) ReleaseExpired(ctx context.Context, now time.Time) (int, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	filter := bson.D{{Key: "is_claimed", Value: 1}, {Key: "lease_until", Value: bson.D{{Key: "$lt", Value: store.UnixMS(now)}}}}
	res, err := s.tasks.UpdateMany(ctx, filter, releaseUpdate())
	if err != nil {
		return 0, fmt.Errorf("release expired claims: %w", err)
	}
	return int(res.ModifiedCount), nil
}

// PurgeDeleted removes deleted tasks that no node holds.
func (s *Store) PurgeDeleted(ctx context.Context) (int, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	res, err := s.tasks.DeleteMany(ctx, bson.D{{Key: "deleted", Value: 1}, {Key: "is_claimed", Value: 0}})
	if err != nil {
		return 0, fmt.Errorf("purge deleted tasks: %w", err)
	}
	return int(res.DeletedCount), nil
}

// SetTaskStatus records fire feedback on the task, then mirrors next_fire,
// last_fire and last_status onto its row. It changes neither version.
// Interrupted between the two writes, the row shows the previous feedback
// until the next status.
func (s *Store) SetTaskStatus(ctx context.Context, p store.TaskStatusParams) error {
	ctx, cancel := s.call(ctx)
	defer cancel()
	if err := s.applyStatus(ctx, p); err != nil {
		return fmt.Errorf("set status of task %s: %w", p.TaskID, err)
	}
	return nil
}

// SetTaskStatuses applies each of ps as SetTaskStatus does, in order: all of
// them or, when a task is missing (task.ErrNotFound), none. Without a
// transaction, it first checks that every task exists, then writes the
// tasks in one ordered bulk write and their rows in another. A task deleted
// between the check and the write is the only way to apply part of a batch;
// the call then fails with task.ErrNotFound. More than store.MaxStatusBatch
// is task.ErrInvalid.
func (s *Store) SetTaskStatuses(ctx context.Context, ps []store.TaskStatusParams) error {
	if len(ps) > store.MaxStatusBatch {
		return fmt.Errorf("set task statuses: %w",
			task.Invalid("statuses", "at most %d per call, got %d", store.MaxStatusBatch, len(ps)))
	}
	if len(ps) == 0 {
		return nil
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	ids := make([]string, len(ps))
	for i, p := range ps {
		ids[i] = p.TaskID
	}
	missing, err := s.missingTasks(ctx, ids)
	if err == nil && len(missing) > 0 {
		err = fmt.Errorf("task %s: %w", missing[0], task.ErrNotFound)
	}
	if err == nil {
		err = s.applyStatuses(ctx, ps)
	}
	if err != nil {
		return fmt.Errorf("set statuses of %d tasks: %w", len(ps), err)
	}
	return nil
}

// statusSet returns the $set of p: only the fields p changes.
func statusSet(p store.TaskStatusParams) bson.D {
	var set bson.D
	if p.SetNextFire || !p.NextFire.IsZero() {
		set = append(set, bson.E{Key: "next_fire", Value: store.UnixMS(p.NextFire)})
	}
	if !p.LastFire.IsZero() {
		set = append(set, bson.E{Key: "last_fire", Value: store.UnixMS(p.LastFire)})
	}
	if p.LastStatus != "" && !guarded(p) {
		set = append(set, bson.E{Key: "last_status", Value: p.LastStatus})
	}
	if p.Done {
		// A done task is held by no node (store.TaskStatusParams).
		set = append(set, bson.E{Key: "is_done", Value: 1}, bson.E{Key: "is_claimed", Value: 0},
			bson.E{Key: "claimed_by", Value: ""}, bson.E{Key: "lease_until", Value: int64(0)})
	}
	return set
}

// feedback is the part of a task its row mirrors.
type feedback struct {
	TaskID     string `bson:"task_id"`
	Scenario   string `bson:"scenario"`
	RowID      string `bson:"row_id"`
	NextFire   int64  `bson:"next_fire"`
	LastFire   int64  `bson:"last_fire"`
	LastStatus string `bson:"last_status"`
}

// feedbackProjection reads a feedback.
func feedbackProjection() bson.D {
	return bson.D{{Key: "task_id", Value: 1}, {Key: "scenario", Value: 1}, {Key: "row_id", Value: 1},
		{Key: "next_fire", Value: 1}, {Key: "last_fire", Value: 1}, {Key: "last_status", Value: 1}}
}

// applyStatus records p on its task (task.ErrNotFound when missing), then
// mirrors the task's feedback onto its row.
func (s *Store) applyStatus(ctx context.Context, p store.TaskStatusParams) error {
	if guarded(p) {
		// First, so that the read below returns the status as it ends.
		if _, err := s.tasks.UpdateOne(ctx, guardFilter(p), guardUpdate(p)); err != nil {
			return err
		}
	}
	var fb feedback
	var err error
	if set := statusSet(p); len(set) == 0 {
		err = s.tasks.FindOne(ctx, taskKey(p.TaskID), options.FindOne().SetProjection(feedbackProjection())).Decode(&fb)
	} else {
		// No projection: FerretDB v1 does not implement it in findAndModify.
		err = s.tasks.FindOneAndUpdate(ctx, taskKey(p.TaskID), bson.D{{Key: "$set", Value: set}},
			options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&fb)
	}
	if err != nil {
		return translate(err)
	}
	if fb.RowID == "" {
		return nil
	}
	_, err = s.rows.UpdateOne(ctx, rowKey(fb.Scenario, fb.RowID), mirrorUpdate(&fb))
	return err
}

func mirrorUpdate(fb *feedback) bson.D {
	return bson.D{{Key: "$set", Value: bson.D{{Key: "next_fire", Value: fb.NextFire},
		{Key: "last_fire", Value: fb.LastFire}, {Key: "last_status", Value: fb.LastStatus}}}}
}

// guarded reports whether p's last status is written under the guard of
// its slot (store.TaskStatusParams.StatusSlot): not by statusSet's $set,
// but by an update of its own whose filter holds the guard.
func guarded(p store.TaskStatusParams) bool {
	return p.LastStatus != "" && store.UnixMS(p.StatusSlot) != 0
}

// guardFilter selects p's task while no status of a later slot is
// stored on it (status_slot, absent on a task no guarded status reached
// yet, is the latest such slot). One conditional update per document, so
// two statuses of one task applied at once, in any order, end with the
// later slot's.
func guardFilter(p store.TaskStatusParams) bson.D {
	return bson.D{{Key: "task_id", Value: p.TaskID}, {Key: "$or", Value: bson.A{
		bson.D{{Key: "status_slot", Value: bson.D{{Key: "$lte", Value: store.UnixMS(p.StatusSlot)}}}},
		bson.D{{Key: "status_slot", Value: bson.D{{Key: "$exists", Value: false}}}},
	}}}
}

// guardUpdate writes p's last status and slot.
func guardUpdate(p store.TaskStatusParams) bson.D {
	return bson.D{{Key: "$set", Value: bson.D{{Key: "last_status", Value: p.LastStatus},
		{Key: "status_slot", Value: store.UnixMS(p.StatusSlot)}}}}
}

// foldStatuses merges the statuses of each task, in order (a later status
// overrides the fields it sets), and returns the task ids in order of first
// appearance with their $set.
func foldStatuses(ps []store.TaskStatusParams) ([]string, []bson.D) {
	var ids []string
	var sets []bson.D
	at := map[string]int{}
	for _, p := range ps {
		i, seen := at[p.TaskID]
		if !seen {
			i = len(ids)
			at[p.TaskID] = i
			ids = append(ids, p.TaskID)
			sets = append(sets, nil)
		}
	next:
		for _, e := range statusSet(p) {
			for j := range sets[i] {
				if sets[i][j].Key == e.Key {
					sets[i][j].Value = e.Value
					continue next
				}
			}
			sets[i] = append(sets[i], e)
		}
	}
	return ids, sets
}

// missingTasks returns those of ids that have no task.
func (s *Store) missingTasks(ctx context.Context, ids []string) ([]string, error) {
	cur, err := s.tasks.Find(ctx, bson.D{{Key: "task_id", Value: bson.D{{Key: "$in", Value: ids}}}},
		findOpts().SetProjection(bson.D{{Key: "task_id", Value: 1}}))
	docs, err := findAll[feedback](ctx, cur, err)
	if err != nil {
		return nil, err
	}
	have := make(map[string]bool, len(docs))
	for _, d := range docs {
		have[d.TaskID] = true
	}
	var missing []string
	for _, id := range ids {
		if !have[id] {
			missing = append(missing, id)
		}
	}
	return missing, nil
}

// applyStatuses writes ps onto their tasks in unordered bulk writes, then
// mirrors each touched task's feedback onto its row the same way. The
// statuses of one task are first folded into one update, in order, so the
// bulk writes need not be ordered (on FerretDB v1 an ordered update is
// several times slower). A task missing by then is task.ErrNotFound (the
// others are written).
func (s *Store) applyStatuses(ctx context.Context, ps []store.TaskStatusParams) error {
	var models []mongo.WriteModel
	ids, sets := foldStatuses(ps)
	for i, id := range ids {
		if len(sets[i]) > 0 {
			models = append(models, mongo.NewUpdateOneModel().SetFilter(taskKey(id)).
				SetUpdate(bson.D{{Key: "$set", Value: sets[i]}}))
		}
	}
	if len(models) > 0 {
		matched, err := s.bulkWrite(ctx, s.tasks, models)
		if err != nil {
			return err
		}
		if matched != len(models) {
			return fmt.Errorf("%d of %d tasks vanished: %w", len(models)-matched, len(models), task.ErrNotFound)
		}
	}
	// The guarded last statuses: one conditional update each, unordered
	// (the guard makes the latest slot's win whatever the order); a guard
	// that does not match leaves a newer status, not an error.
	var guards []mongo.WriteModel
	for _, p := range ps {
		if guarded(p) {
			guards = append(guards, mongo.NewUpdateOneModel().SetFilter(guardFilter(p)).SetUpdate(guardUpdate(p)))
		}
	}
	if len(guards) > 0 {
		if _, err := s.bulkWrite(ctx, s.tasks, guards); err != nil {
			return err
		}
	}
	cur, err := s.tasks.Find(ctx, bson.D{{Key: "task_id", Value: bson.D{{Key: "$in", Value: ids}}}},
		findOpts().SetProjection(feedbackProjection()))
	fbs, err := findAll[feedback](ctx, cur, err)
	if err != nil {
		return err
	}
	if len(guards) > 0 {
		// A guarded status whose task is gone matched nothing, as a
		// newer status would: the read tells them apart.
		found := make(map[string]bool, len(fbs))
		for i := range fbs {
			found[fbs[i].TaskID] = true
		}
		for _, p := range ps {
			if guarded(p) && !found[p.TaskID] {
				return fmt.Errorf("task %s vanished: %w", p.TaskID, task.ErrNotFound)
			}
		}
	}
	var mirrors []mongo.WriteModel
	for i := range fbs {
		if fbs[i].RowID != "" {
			mirrors = append(mirrors, mongo.NewUpdateOneModel().SetFilter(rowKey(fbs[i].Scenario, fbs[i].RowID)).
				SetUpdate(mirrorUpdate(&fbs[i])))
		}
	}
	if len(mirrors) == 0 {
		return nil
	}
	_, err = s.bulkWrite(ctx, s.rows, mirrors)
	return err
}

// bulkWrite runs models as unordered bulk writes of at most s.bulkMax
// statements each and returns how many documents they matched.
func (s *Store) bulkWrite(ctx context.Context, c *collection, models []mongo.WriteModel) (int, error) {
	matched := 0
	for len(models) > 0 {
		n := min(len(models), s.bulkMax)
		res, err := c.BulkWrite(ctx, models[:n], options.BulkWrite().SetOrdered(false))
		if err != nil {
			return matched, err
		}
		matched += int(res.MatchedCount)
		models = models[n:]
	}
	return matched, nil
}
