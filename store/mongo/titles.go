package mongo

import (
	"context"
	"fmt"
	"regexp"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"cronsheet/store"
)

// TaskIDsByTitle returns the ids of the live tasks whose title param
// holds every word (store.Tasks.TaskIDsByTitle): a scan of the tasks,
// which the runs page's title filter makes on a user's request only.
func (s *Store) TaskIDsByTitle(ctx context.Context, words []string, limit int) ([]string, error) {
	if err := store.CheckTitleQuery(words, limit); err != nil {
		return nil, err
	}
	all := make(bson.A, len(words))
	for i, w := range words {
		all[i] = bson.D{{Key: "params.title", Value: bson.D{
			{Key: "$regex", Value: regexp.QuoteMeta(w)}, {Key: "$options", Value: "i"}}}}
	}
	filter := bson.D{{Key: "deleted", Value: bson.D{{Key: "$ne", Value: 1}}}, {Key: "$and", Value: all}}
	ctx, cancel := s.call(ctx)
	defer cancel()
	cur, err := s.tasks.Find(ctx, filter, options.Find().SetLimit(int64(limit)).
		SetProjection(bson.D{{Key: "task_id", Value: 1}, {Key: "_id", Value: 0}}))
	if err != nil {
		return nil, fmt.Errorf("tasks by title: %w", translate(err))
	}
	var docs []struct {
		TaskID string `bson:"task_id"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("tasks by title: %w", translate(err))
	}
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = d.TaskID
	}
	return out, nil
}
