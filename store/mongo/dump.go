package mongo

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"cronsheet/store"
	"cronsheet/store/internal/taskdoc"
	"cronsheet/task"
)

var _ store.Dumper = (*Store)(nil)

// dumpTimeout bounds a whole dump of one collection (a dump walks all of
// it, so the per-call timeout does not fit).
const dumpTimeout = time.Hour

// DumpRows calls fn with every row, in (scenario, id) order.
func (s *Store) DumpRows(ctx context.Context, fn func(*task.Row) error) error {
	err := each(ctx, s.rows, bson.D{{Key: "scenario", Value: 1}, {Key: "id", Value: 1}}, func(d *rowDoc) error {
		return fn(d.row())
	})
	if err != nil {
		return fmt.Errorf("dump rows: %w", err)
	}
	return nil
}

// DumpTasks calls fn with every task, oldest first, without its claim.
func (s *Store) DumpTasks(ctx context.Context, fn func(store.TaskDump) error) error {
	err := each(ctx, s.tasks, bson.D{{Key: "_id", Value: 1}}, func(d *taskDoc) error {
		t := d.task()
		t.IsClaimed, t.ClaimedBy, t.LeaseUntil = 0, "", time.Time{}
		return fn(store.TaskDump{Task: t, Deleted: d.Deleted == 1})
	})
	if err != nil {
		return fmt.Errorf("dump tasks: %w", err)
	}
	return nil
}

// DumpRuns calls fn with every run, in (task_id, slot, target) order.
func (s *Store) DumpRuns(ctx context.Context, fn func(*task.Run) error) error {
	sort := bson.D{{Key: "task_id", Value: 1}, {Key: "slot", Value: 1}, {Key: "target", Value: 1}}
	err := each(ctx, s.runs, sort, func(d *runDoc) error { return fn(d.run()) })
	if err != nil {
		return fmt.Errorf("dump runs: %w", err)
	}
	return nil
}

// DumpOutbox calls fn with every outbox message, oldest id first.
func (s *Store) DumpOutbox(ctx context.Context, fn func(*task.OutboxMessage) error) error {
	err := each(ctx, s.outbox, bson.D{{Key: "_id", Value: 1}}, func(d *outboxDoc) error { return fn(d.message()) })
	if err != nil {
		return fmt.Errorf("dump outbox: %w", err)
	}
	return nil
}

// each decodes every document of c, in sort order, and calls fn with it.
func each[T any](ctx context.Context, c *collection, sort bson.D, fn func(*T) error) error {
	ctx, cancel := context.WithTimeout(ctx, dumpTimeout)
	defer cancel()
	cur, err := c.Find(ctx, bson.D{}, findOpts().SetSort(sort))
	if err != nil {
		return err
	}
	defer cur.Close(ctx)
	for cur.Next(ctx) {
		var d T
		if err := cur.Decode(&d); err != nil {
			return err
		}
		if err := fn(&d); err != nil {
			return err
		}
	}
	return cur.Err()
}

// RestoreRow stores row as dumped unless its (scenario, id) is stored.
func (s *Store) RestoreRow(ctx context.Context, row *task.Row) (bool, error) {
	if row.ID == "" {
		return false, fmt.Errorf("restore row: %w", task.Invalid("id", "required"))
	}
	d := rowDoc{Scenario: row.Scenario, ID: row.ID, Fields: row.Fields, IsFetched: row.IsFetched,
		IsActive: row.IsActive, Error: row.Error, NextFire: store.UnixMS(row.NextFire), LastFire: store.UnixMS(row.LastFire),
		LastStatus: row.LastStatus, Version: max(row.Version, 1), CreatedAt: store.UnixMS(row.CreatedAt), UpdatedAt: store.UnixMS(row.UpdatedAt)}.withSearchKeys()
	ok, err := s.insertUnlessStored(ctx, s.rows, d)
	if err != nil {
		return false, fmt.Errorf("restore row %s/%s: %w", row.Scenario, row.ID, err)
	}
	return ok, nil
}

// RestoreTask stores a task as dumped, unclaimed, unless its task_id is
// stored. A job holding a key (Job.Key set) that it inserted then takes
// the key back in job_keys, unless another job holds it; interrupted in
// between, the job is stored without its key (JobByKey does not find it).
func (s *Store) RestoreTask(ctx context.Context, td store.TaskDump) (bool, error) {
	t := td.Task
	if t == nil || t.TaskID == "" {
		return false, fmt.Errorf("restore task: %w", task.Invalid("task_id", "required"))
	}
	d := taskDoc{TaskID: t.TaskID, Scenario: t.Scenario, RowID: t.RowID, Content: contentOf(t, store.UnixMS(t.Anchor)),
		Job: taskdoc.JobOf(t.Job), IsEnable: t.IsEnable, IsDone: t.IsDone, NextFire: store.UnixMS(t.NextFire), LastFire: store.UnixMS(t.LastFire),
		LastStatus: t.LastStatus, Version: max(t.Version, 1), CreatedAt: store.UnixMS(t.CreatedAt), UpdatedAt: store.UnixMS(t.UpdatedAt)}
	if td.Deleted {
		d.Deleted = 1
	}
	ok, err := s.insertUnlessStored(ctx, s.tasks, d)
	if err == nil && ok && t.Job != nil && t.Job.Key != "" {
		_, err = s.insertUnlessStored(ctx, s.jobKeys, jobKeyDoc{Key: t.Job.Key, TaskID: t.TaskID, At: s.nowMS()})
	}
	if err != nil {
		return false, fmt.Errorf("restore task %s: %w", t.TaskID, err)
	}
	return ok, nil
}

// insertUnlessStored inserts doc; a duplicate key is (false, nil).
func (s *Store) insertUnlessStored(ctx context.Context, c *collection, doc any) (bool, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	_, err := c.InsertOne(ctx, doc)
	if isDuplicate(err) {
		return false, nil
	}
	return err == nil, err
}
