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

// LastSlotBefore returns the latest schedule or misfire slot of taskID
// strictly before before (zero: any), or the zero time: ix_runs_sched
// (task_id, trigger_type, slot) serves it.
func (s *Store) LastSlotBefore(ctx context.Context, taskID string, before time.Time) (time.Time, error) {
	if before.IsZero() {
		return s.LastSlot(ctx, taskID)
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	filter := bson.D{{Key: "task_id", Value: taskID}, {Key: "trigger_type", Value: bson.D{{Key: "$in", Value: scheduledTriggers()}}},
		{Key: "slot", Value: bson.D{{Key: "$lt", Value: store.UnixMS(before)}}}}
	var d runDoc
	err := s.runs.FindOne(ctx, filter, options.FindOne().SetSort(bson.D{{Key: "slot", Value: -1}}).
		SetProjection(bson.D{{Key: "slot", Value: 1}})).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return time.Time{}, nil
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("last slot of %s before %s: %w", taskID, before, err)
	}
	return store.FromUnixMS(d.Slot), nil
}

// RunsAtSlot returns taskID's runs of slot, in target order: ux_runs_key
// (task_id, slot, target) serves it.
func (s *Store) RunsAtSlot(ctx context.Context, taskID string, slot time.Time) ([]*task.Run, error) {
	filter := bson.D{{Key: "task_id", Value: taskID}, {Key: "slot", Value: store.UnixMS(slot)}}
	runs, err := s.findRuns(ctx, filter, findOpts().SetSort(bson.D{{Key: "target", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("runs of %s at %s: %w", taskID, slot, err)
	}
	return runs, nil
}
