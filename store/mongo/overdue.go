package mongo

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"cronsheet/store"
	"cronsheet/task"
)

// overdueFilter is ix_task_absent's partialFilterExpression: only tasks
// whose alert watches for absence are indexed, so fires of the others never
// write it. OverdueTasks's filter includes it, which lets MongoDB use it.
var overdueFilter = bson.D{{Key: "alert.absent", Value: bson.D{{Key: "$gt", Value: 0}}}}

// OverdueTasks returns the enabled, undone tasks alerting on absence whose
// next fire is before `before`, soonest first, at most limit.
func (s *Store) OverdueTasks(ctx context.Context, before time.Time, limit int) ([]*task.Task, error) {
	if err := store.CheckLimit(limit); err != nil {
		return nil, fmt.Errorf("overdue tasks: %w", err)
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	filter := append(bson.D{}, overdueFilter...)
	filter = append(filter,
		bson.E{Key: "next_fire", Value: bson.D{{Key: "$gt", Value: 0}, {Key: "$lt", Value: store.UnixMS(before)}}},
		bson.E{Key: "is_enable", Value: 1}, bson.E{Key: "is_done", Value: 0}, bson.E{Key: "deleted", Value: 0})
	cur, err := s.tasks.Find(ctx, filter, findOpts().SetSort(bson.D{{Key: "next_fire", Value: 1}}).SetLimit(int64(limit)))
	if err != nil {
		return nil, fmt.Errorf("overdue tasks: %w", translate(err))
	}
	var docs []taskDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("overdue tasks: %w", translate(err))
	}
	out := make([]*task.Task, len(docs))
	for i := range docs {
		out[i] = docs[i].task()
	}
	return out, nil
}
