package mongo

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"cronsheet/store"
	"cronsheet/task"
)

// ApplySync records the sync patrol's verdict on one row: it checks the
// row's version, upserts p.Task (or disables the row's task when
// p.DisableTask), retires the row's tasks under other ids, and marks the row
// fetched, with the same contract as the SQLite driver. A zero Task.Anchor
// means p.Now. An existing task keeps its stored state (see SetTaskState);
// a new one takes Task.State.
//
// Without a transaction, the row is marked fetched last and only if it still
// has p.RowVersion: interrupted before that, the row stays unfetched and the
// sync patrol applies it again (every step is idempotent); edited in the
// meantime, the call is task.ErrConflict and the edit is synced next. A task
// is changed only if its version is still the one read (else
// task.ErrConflict), so two syncs never lose one another's edit. A row
// deleted while it is synced leaves its tasks retired (DeleteRow's
// verdict wins), whichever step the delete fell between.
func (s *Store) ApplySync(ctx context.Context, p store.ApplySyncParams) error {
	now := store.UnixMS(p.Now)
	if now == 0 {
		now = s.nowMS()
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	err := s.rowVersionIs(ctx, p.Scenario, p.RowID, p.RowVersion)
	switch {
	case err != nil:
	case p.Task != nil:
		err = s.upsertTask(ctx, p, now)
	case p.DisableTask:
		_, err = s.tasks.UpdateMany(ctx,
			bson.D{{Key: "scenario", Value: p.Scenario}, {Key: "row_id", Value: p.RowID}, {Key: "deleted", Value: 0}},
			bson.D{
				{Key: "$set", Value: bson.D{{Key: "is_enable", Value: 0}, {Key: "updated_at", Value: now}, {Key: "arm_at", Value: int64(0)}}},
				{Key: "$inc", Value: bson.D{{Key: "version", Value: 1}}},
			})
	}
	if err == nil {
		err = s.markRowFetched(ctx, p)
		if errors.Is(err, task.ErrNotFound) && p.Task != nil {
			// The row was deleted while this sync ran, possibly after
			// DeleteRow retired its task and before upsertTask revived it:
			// retire the row's tasks again, so a task never outlives its
			// row.
			err = errors.Join(err, s.retireRowTasks(ctx, p.Scenario, p.RowID, "", now))
		}
	}
	if err != nil {
		return fmt.Errorf("apply sync of row %s/%s: %w", p.Scenario, p.RowID, translate(err))
	}
	return nil
}

// markRowFetched sets the row's is_fetched=1, is_active and error if it
// still has p.RowVersion.
func (s *Store) markRowFetched(ctx context.Context, p store.ApplySyncParams) error {
	filter := append(rowKey(p.Scenario, p.RowID), bson.E{Key: "version", Value: p.RowVersion})
	res, err := s.rows.UpdateOne(ctx, filter, bson.D{{Key: "$set", Value: bson.D{
		{Key: "is_fetched", Value: 1}, {Key: "is_active", Value: p.IsActive}, {Key: "error", Value: p.Error},
		{Key: "eg", Value: errorGrams(p.Error)},
	}}})
	if err != nil {
		return err
	}
	if res.MatchedCount == 0 {
		return s.rowVersionIs(ctx, p.Scenario, p.RowID, p.RowVersion)
	}
	return nil
}

// rowVersionIs fails with task.ErrNotFound when the row is missing and with
// task.ErrConflict when its version is not want.
func (s *Store) rowVersionIs(ctx context.Context, scenario, id string, want int64) error {
	have, err := s.rowVersion(ctx, scenario, id)
	if err == nil && have != want {
		err = fmt.Errorf("%w: row version is %d, not %d", task.ErrConflict, have, want)
	}
	return err
}

// upsertTask inserts or updates p.Task for the row p names, per
// store.ApplySyncParams, and retires the row's tasks under other ids.
func (s *Store) upsertTask(ctx context.Context, p store.ApplySyncParams, now int64) error {
	t := p.Task
	if t.TaskID == "" {
		return task.Invalid("task_id", "required")
	}
	anchor := store.UnixMS(t.Anchor)
	if anchor == 0 {
		anchor = now
	}
	enable := 0
	if t.IsEnable == 1 {
		enable = 1
	}
	var old taskDoc
	err := s.tasks.FindOne(ctx, bson.D{{Key: "task_id", Value: t.TaskID}}).Decode(&old)
	switch {
	case errors.Is(err, mongo.ErrNoDocuments):
		err = s.insertTask(ctx, p, contentOf(t, anchor), enable, now)
	case err != nil:
		return err
	case (old.Scenario != p.Scenario || old.RowID != p.RowID) && old.Deleted == 0:
		return fmt.Errorf("%w: task %s belongs to row %s/%s", store.ErrTaskIDTaken, t.TaskID, old.Scenario, old.RowID)
	default:
		err = s.updateTask(ctx, &old, p, anchor, enable, now)
	}
	if err != nil {
		return err
	}
	return s.retireRowTasks(ctx, p.Scenario, p.RowID, t.TaskID, now)
}

// insertTask inserts a new task with version 1; a concurrent insert of the
// same task_id loses on the unique index (task.ErrConflict).
func (s *Store) insertTask(ctx context.Context, p store.ApplySyncParams, c content, enable int, now int64) error {
	t := p.Task
	_, err := s.tasks.InsertOne(ctx, taskDoc{
		TaskID: t.TaskID, Scenario: p.Scenario, RowID: p.RowID, Content: c, IsEnable: enable,
		NextFire: store.UnixMS(t.NextFire), LastFire: store.UnixMS(t.LastFire), LastStatus: t.LastStatus,
		Version: 1, CreatedAt: now, UpdatedAt: now, ArmAt: store.UnixMS(t.ArmAt),
	})
	return translate(err)
}

// updateTask rewrites an existing task's content: a changed schedule, or a
// task coming back (deleted or disabled before), takes the new anchor, loses
// its claim and its is_done, and moves to p's row; any other change keeps
// the stored anchor and the claim. The stored state stays (SetTaskState
// sets it; a task stored without one takes p's). The version read must
// still be there.
func (s *Store) updateTask(ctx context.Context, old *taskDoc, p store.ApplySyncParams, anchor int64, enable int, now int64) error {
	revived := old.Deleted == 1 || (old.IsEnable == 0 && enable == 1)
	c := contentOf(p.Task, old.Content.Anchor)
	if old.Content.State != "" {
		// SetTaskState owns the state; a row's mapping always says running.
		c.State = old.Content.State
	}
	reschedule := revived || !old.Content.sameSchedule(&c)
	set := bson.D{{Key: "is_enable", Value: enable}, {Key: "updated_at", Value: now},
		{Key: "version", Value: old.Version + 1}, {Key: "arm_at", Value: int64(0)}}
	if reschedule {
		c.Anchor = anchor
		set = append(set, bson.D{
			{Key: "is_claimed", Value: 0}, {Key: "claimed_by", Value: ""}, {Key: "lease_until", Value: 0},
			{Key: "is_done", Value: 0}, {Key: "deleted", Value: 0},
			{Key: "scenario", Value: p.Scenario}, {Key: "row_id", Value: p.RowID},
		}...)
	}
	raw, err := bson.Marshal(c)
	if err != nil {
		return err
	}
	var fields bson.D
	if err := bson.Unmarshal(raw, &fields); err != nil {
		return err
	}
	set = append(set, fields...)
	res, err := s.tasks.UpdateOne(ctx,
		bson.D{{Key: "task_id", Value: old.TaskID}, {Key: "version", Value: old.Version}},
		bson.D{{Key: "$set", Value: set}})
	if err != nil {
		return err
	}
	if res.MatchedCount == 0 {
		return fmt.Errorf("%w: task %s changed while it was synced", task.ErrConflict, old.TaskID)
	}
	return nil
}
