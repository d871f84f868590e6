package mongo

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"

	"cronsheet/store"
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
