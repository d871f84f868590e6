package mongo

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"cronsheet/store"
	"cronsheet/task"
)

// finalRunStates are task.RunState.Final's states.
var finalRunStates = bson.A{task.RunDone, task.RunDead, task.RunRejected, task.RunTimeout, task.RunCancelled, task.RunSkipped}

// FireStats counts the runs fired in the window per bucket
// (store.RunStats), reading only fired_at, slot and state of each, newest
// first.
func (s *Store) FireStats(ctx context.Context, p store.FireStatsParams) (*store.FireStats, error) {
	if err := p.Check(); err != nil {
		return nil, fmt.Errorf("fire stats: %w", err)
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	filter := bson.D{{Key: "fired_at", Value: bson.D{{Key: "$gte", Value: store.UnixMS(p.From)}, {Key: "$lt", Value: store.UnixMS(p.To)}}}}
	opts := options.Find().SetSort(bson.D{{Key: "fired_at", Value: -1}, {Key: "trigger_id", Value: -1}}).
		SetProjection(bson.D{{Key: "_id", Value: 0}, {Key: "fired_at", Value: 1}, {Key: "slot", Value: 1}, {Key: "state", Value: 1}}).
		SetLimit(store.MaxStatsRuns + 1).SetBatchSize(10_000)
	cur, err := s.runs.Find(ctx, filter, opts)
	if err != nil {
		return nil, fmt.Errorf("fire stats: %w", translate(err))
	}
	defer cur.Close(ctx)
	b := store.NewFireStatsBuilder(p)
	for cur.Next(ctx) {
		var d struct {
			FiredAt int64         `bson:"fired_at"`
			Slot    int64         `bson:"slot"`
			State   task.RunState `bson:"state"`
		}
		if err := cur.Decode(&d); err != nil {
			return nil, fmt.Errorf("fire stats: %w", err)
		}
		if !b.Add(d.FiredAt, d.Slot, d.State) {
			break
		}
	}
	if err := cur.Err(); err != nil {
		return nil, fmt.Errorf("fire stats: %w", translate(err))
	}
	return b.Result(), nil
}

// UpcomingFires returns the armed tasks' next fires in (from, to]
// (store.RunStats).
func (s *Store) UpcomingFires(ctx context.Context, from, to time.Time, limit int) ([]store.UpcomingFire, error) {
	if err := store.CheckUpcoming(from, to, limit); err != nil {
		return nil, fmt.Errorf("upcoming fires: %w", err)
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	filter := bson.D{{Key: "next_fire", Value: bson.D{{Key: "$gt", Value: store.UnixMS(from)}, {Key: "$lte", Value: store.UnixMS(to)}}},
		{Key: "is_enable", Value: 1}, {Key: "is_done", Value: 0}, {Key: "deleted", Value: 0}}
	opts := options.Find().SetSort(bson.D{{Key: "next_fire", Value: 1}, {Key: "task_id", Value: 1}}).
		SetProjection(bson.D{{Key: "_id", Value: 0}, {Key: "task_id", Value: 1}, {Key: "scenario", Value: 1},
			{Key: "row_id", Value: 1}, {Key: "next_fire", Value: 1}}).SetLimit(int64(limit))
	cur, err := s.tasks.Find(ctx, filter, opts)
	if err != nil {
		return nil, fmt.Errorf("upcoming fires: %w", translate(err))
	}
	var docs []struct {
		TaskID   string `bson:"task_id"`
		Scenario string `bson:"scenario"`
		RowID    string `bson:"row_id"`
		NextFire int64  `bson:"next_fire"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("upcoming fires: %w", translate(err))
	}
	out := make([]store.UpcomingFire, len(docs))
	for i, d := range docs {
		out[i] = store.UpcomingFire{TaskID: d.TaskID, Scenario: d.Scenario, RowID: d.RowID, NextFire: store.FromUnixMS(d.NextFire)}
	}
	return out, nil
}

// RecentOutcomes returns each task's newest finished runs
// (store.RunStats), one find of at most perTask runs per task.
func (s *Store) RecentOutcomes(ctx context.Context, taskIDs []string, perTask int) (map[string][]store.Outcome, error) {
	if err := store.CheckOutcomes(taskIDs, perTask); err != nil {
		return nil, fmt.Errorf("recent outcomes: %w", err)
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	out := map[string][]store.Outcome{}
	for _, id := range taskIDs {
		if _, seen := out[id]; seen {
			continue
		}
		filter := bson.D{{Key: "task_id", Value: id}, {Key: "state", Value: bson.D{{Key: "$in", Value: finalRunStates}}}}
		opts := options.Find().SetSort(bson.D{{Key: "fired_at", Value: -1}, {Key: "trigger_id", Value: -1}}).
			SetProjection(bson.D{{Key: "_id", Value: 0}, {Key: "trigger_id", Value: 1}, {Key: "state", Value: 1},
				{Key: "fired_at", Value: 1}, {Key: "error", Value: 1}}).SetLimit(int64(perTask))
		cur, err := s.runs.Find(ctx, filter, opts)
		if err != nil {
			return nil, fmt.Errorf("recent outcomes of %s: %w", id, translate(err))
		}
		var docs []struct {
			TriggerID string        `bson:"trigger_id"`
			State     task.RunState `bson:"state"`
			FiredAt   int64         `bson:"fired_at"`
			Error     string        `bson:"error"`
		}
		if err := cur.All(ctx, &docs); err != nil {
			return nil, fmt.Errorf("recent outcomes of %s: %w", id, translate(err))
		}
		for _, d := range docs {
			out[id] = append(out[id], store.Outcome{TriggerID: d.TriggerID, State: d.State,
				FiredAt: store.FromUnixMS(d.FiredAt), Error: task.Truncate(d.Error, 200)})
		}
	}
	return out, nil
}
