package mongo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"cronsheet/store"
	"cronsheet/task"
)

// TasksUsingTarget returns the tasks naming target id, see
// store.TargetUsers. It scans time_task: a target is deleted rarely.
func (s *Store) TasksUsingTarget(ctx context.Context, id string, limit int) ([]string, int, error) {
	if err := store.CheckLimit(limit); err != nil {
		return nil, 0, fmt.Errorf("tasks using target %s: %w", id, err)
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	filter := bson.D{{Key: "deleted", Value: 0}, {Key: "row_id", Value: bson.D{{Key: "$ne", Value: ""}}}, {Key: "$or", Value: bson.A{
		bson.D{{Key: "targets", Value: id}}, bson.D{{Key: "alert.targets", Value: id}}}}}
	total, err := s.tasks.CountDocuments(ctx, filter)
	if err != nil {
		return nil, 0, fmt.Errorf("tasks using target %s: %w", id, err)
	}
	if total == 0 {
		return nil, 0, nil
	}
	cur, err := s.tasks.Find(ctx, filter, findOpts().SetSort(bson.D{{Key: "task_id", Value: 1}}).SetLimit(int64(limit)).
		SetProjection(bson.D{{Key: "task_id", Value: 1}}))
	docs, err := findAll[struct {
		TaskID string `bson:"task_id"`
	}](ctx, cur, err)
	if err != nil {
		return nil, 0, fmt.Errorf("tasks using target %s: %w", id, err)
	}
	ids := make([]string, len(docs))
	for i, d := range docs {
		ids[i] = d.TaskID
	}
	return ids, int(total), nil
}

// The targets' holds and tombstones (store.TargetUsers) live in the
// target_guard collection, written by inserts and deletes keyed by _id
// only, which FerretDB keeps exact (a unique _id refuses a second insert):
//
//	"tomb/<target>"           {target, holder: "", at}   a delete under way
//	"hold/<holder>/<target>"  {target, holder, at}       a writer's hold
const collTargetGuard = "target_guard"

func (s *Store) targetGuard() *collection { return s.colls.get(collTargetGuard) }

type guardDoc struct {
	ID     string `bson:"_id"`
	Target string `bson:"target"`
	Holder string `bson:"holder"`
	At     int64  `bson:"at"`
}

func tombID(target string) string { return "tomb/" + target }

// HoldTargets stores holder's hold on each of ids, then reads their
// tombstones (see store.TargetUsers).
func (s *Store) HoldTargets(ctx context.Context, holder string, ids []string, now time.Time) error {
	if holder == "" {
		return fmt.Errorf("hold targets: %w", task.Invalid("holder", "required"))
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	g := s.targetGuard()
	since := now.Add(-store.GuardTTL).UnixMilli()
	for _, id := range ids {
		d := guardDoc{ID: "hold/" + holder + "/" + id, Target: id, Holder: holder, At: now.UnixMilli()}
		if _, err := g.InsertOne(ctx, d); err != nil && !isDuplicate(err) {
			return fmt.Errorf("hold target %s: %w", id, translate(err))
		}
		var tomb guardDoc
		err := g.FindOne(ctx, bson.D{{Key: "_id", Value: tombID(id)}}).Decode(&tomb)
		switch {
		case errors.Is(err, mongo.ErrNoDocuments):
		case err != nil:
			return fmt.Errorf("hold target %s: %w", id, translate(err))
		case tomb.At >= since:
			return fmt.Errorf("hold target %s: %w: target %q is being deleted", id, task.ErrConflict, id)
		}
	}
	return nil
}

// ReleaseTargets removes holder's holds.
func (s *Store) ReleaseTargets(ctx context.Context, holder string) error {
	if holder == "" {
		return nil
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	if _, err := s.targetGuard().DeleteMany(ctx, bson.D{{Key: "holder", Value: holder}}); err != nil {
		return fmt.Errorf("release targets: %w", translate(err))
	}
	return nil
}

// BeginTargetDelete inserts id's tombstone; a stale one (older than
// store.GuardTTL) is removed first, by its _id and instant, so that of
// two deletes replacing it only one inserts.
func (s *Store) BeginTargetDelete(ctx context.Context, id string, now time.Time) error {
	ctx, cancel := s.call(ctx)
	defer cancel()
	g := s.targetGuard()
	d := guardDoc{ID: tombID(id), Target: id, At: now.UnixMilli()}
	for range 2 {
		_, err := g.InsertOne(ctx, d)
		if err == nil {
			return nil
		}
		if !isDuplicate(err) {
			return fmt.Errorf("begin delete of target %s: %w", id, translate(err))
		}
		var old guardDoc
		err = g.FindOne(ctx, bson.D{{Key: "_id", Value: d.ID}}).Decode(&old)
		switch {
		case errors.Is(err, mongo.ErrNoDocuments):
			continue
		case err != nil:
			return fmt.Errorf("begin delete of target %s: %w", id, translate(err))
		case old.At >= now.Add(-store.GuardTTL).UnixMilli():
			return fmt.Errorf("begin delete of target %s: %w: another delete of it is under way", id, task.ErrConflict)
		}
		if _, err := g.DeleteOne(ctx, bson.D{{Key: "_id", Value: d.ID}, {Key: "at", Value: old.At}}); err != nil {
			return fmt.Errorf("begin delete of target %s: %w", id, translate(err))
		}
	}
	return fmt.Errorf("begin delete of target %s: %w: another delete of it is under way", id, task.ErrConflict)
}

// TargetHolds counts id's holds stored at or after since.
func (s *Store) TargetHolds(ctx context.Context, id string, since time.Time) (int, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	n, err := s.targetGuard().CountDocuments(ctx, bson.D{{Key: "target", Value: id},
		{Key: "holder", Value: bson.D{{Key: "$ne", Value: ""}}}, {Key: "at", Value: bson.D{{Key: "$gte", Value: since.UnixMilli()}}}})
	if err != nil {
		return 0, fmt.Errorf("holds of target %s: %w", id, translate(err))
	}
	return int(n), nil
}

// EndTargetDelete removes id's tombstone.
func (s *Store) EndTargetDelete(ctx context.Context, id string) error {
	ctx, cancel := s.call(ctx)
	defer cancel()
	if _, err := s.targetGuard().DeleteOne(ctx, bson.D{{Key: "_id", Value: tombID(id)}}); err != nil {
		return fmt.Errorf("end delete of target %s: %w", id, translate(err))
	}
	return nil
}
