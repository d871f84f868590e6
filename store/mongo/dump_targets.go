package mongo

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"

	"cronsheet/store"
	"cronsheet/task"
)

// DumpTargets calls fn with every target, in id order, as stored.
func (s *Store) DumpTargets(ctx context.Context, fn func(*task.Target) error) error {
	err := each(ctx, s.targets, bson.D{{Key: "_id", Value: 1}}, func(d *targetDoc) error { return fn(d.target()) })
	if err != nil {
		return fmt.Errorf("dump targets: %w", err)
	}
	return nil
}

// RestoreTarget stores a target as dumped (version and times kept) unless
// its id is stored: the unique _id decides.
func (s *Store) RestoreTarget(ctx context.Context, t *task.Target) (bool, error) {
	if t == nil || t.ID == "" {
		return false, fmt.Errorf("restore target: %w", task.Invalid("id", "required"))
	}
	d := targetDocOf(t, max(t.Version, 1), store.UnixMS(t.CreatedAt), store.UnixMS(t.UpdatedAt))
	ok, err := s.insertUnlessStored(ctx, s.targets, d)
	if err != nil {
		return false, fmt.Errorf("restore target %s: %w", t.ID, err)
	}
	return ok, nil
}
