package mongo

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"

	"cronsheet/store"
	"cronsheet/task"
)

// RetireTasks marks the tasks ids without a row deleted and disabled, in
// one update (store.Flows.RetireTasks), as retireRowTasks does a row's.
func (s *Store) RetireTasks(ctx context.Context, ids []string) (int, error) {
	if len(ids) > store.MaxStatusBatch {
		return 0, task.Invalid("ids", "at most %d per call, got %d", store.MaxStatusBatch, len(ids))
	}
	if len(ids) == 0 {
		return 0, nil
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	filter := bson.D{{Key: "task_id", Value: bson.D{{Key: "$in", Value: ids}}}, {Key: "row_id", Value: ""},
		{Key: "deleted", Value: 0}}
	res, err := s.tasks.UpdateMany(ctx, filter, bson.D{
		{Key: "$set", Value: bson.D{{Key: "deleted", Value: 1}, {Key: "is_enable", Value: 0}, {Key: "updated_at", Value: s.nowMS()},
			{Key: "arm_at", Value: int64(0)}}},
		{Key: "$inc", Value: bson.D{{Key: "version", Value: 1}}},
	})
	if err != nil {
		return 0, fmt.Errorf("retire tasks: %w", translate(err))
	}
	return int(res.ModifiedCount), nil
}
