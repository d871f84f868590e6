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

var _ store.Nodes = (*Store)(nil)

// nodeDoc is a document of the nodes collection; _id is the node id.
type nodeDoc struct {
	ID          string `bson:"_id"`
	Incarnation string `bson:"incarnation"`
	Version     string `bson:"version"`
	StartedAt   int64  `bson:"started_at"`
	BeatAt      int64  `bson:"beat_at"`
	Held        int    `bson:"held"`
	Host        string `bson:"host"`
	PID         int    `bson:"pid"`
}

// RegisterNode records n as running (store.Nodes.RegisterNode): one
// upsert whose filter matches only an entry of n's incarnation or a stale
// one, so a live entry of another process makes the upsert insert a second
// document with the same _id, which the _id index refuses
// (task.ErrConflict).
func (s *Store) RegisterNode(ctx context.Context, n store.Node, staleBefore time.Time) error {
	if n.ID == "" || n.Incarnation == "" {
		return fmt.Errorf("register node: %w", task.Invalid("node_id", "node id and incarnation are required"))
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	filter := bson.D{{Key: "_id", Value: n.ID}, {Key: "$or", Value: bson.A{
		bson.D{{Key: "incarnation", Value: n.Incarnation}},
		bson.D{{Key: "beat_at", Value: bson.D{{Key: "$lt", Value: store.UnixMS(staleBefore)}}}},
	}}}
	set := bson.D{{Key: "incarnation", Value: n.Incarnation}, {Key: "version", Value: n.Version},
		{Key: "started_at", Value: store.UnixMS(n.StartedAt)}, {Key: "beat_at", Value: store.UnixMS(n.BeatAt)},
		{Key: "held", Value: n.Held}, {Key: "host", Value: n.Host}, {Key: "pid", Value: n.PID}}
	_, err := s.nodes.UpdateOne(ctx, filter, bson.D{{Key: "$set", Value: set}}, options.UpdateOne().SetUpsert(true))
	if isDuplicate(err) {
		return fmt.Errorf("register node %s: node id %q is used by another live process: %w", n.ID, n.ID, task.ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("register node %s: %w", n.ID, translate(err))
	}
	return nil
}

// BeatNode records a heartbeat of n (store.Nodes.BeatNode); an entry of
// another incarnation is task.ErrConflict, a missing one is re-created.
func (s *Store) BeatNode(ctx context.Context, n store.Node) error {
	ctx, cancel := s.call(ctx)
	defer cancel()
	filter := bson.D{{Key: "_id", Value: n.ID}, {Key: "incarnation", Value: n.Incarnation}}
	update := bson.D{
		{Key: "$set", Value: bson.D{{Key: "beat_at", Value: store.UnixMS(n.BeatAt)}, {Key: "held", Value: n.Held}}},
		{Key: "$setOnInsert", Value: bson.D{{Key: "version", Value: n.Version}, {Key: "started_at", Value: store.UnixMS(n.StartedAt)},
			{Key: "host", Value: n.Host}, {Key: "pid", Value: n.PID}}},
	}
	_, err := s.nodes.UpdateOne(ctx, filter, update, options.UpdateOne().SetUpsert(true))
	if isDuplicate(err) {
		return fmt.Errorf("beat node %s: node id %q is used by another live process: %w", n.ID, n.ID, task.ErrConflict)
	}
	if err != nil {
		return fmt.Errorf("beat node %s: %w", n.ID, translate(err))
	}
	return nil
}

// RemoveNode deletes n's entry if it still belongs to incarnation.
func (s *Store) RemoveNode(ctx context.Context, id, incarnation string) error {
	ctx, cancel := s.call(ctx)
	defer cancel()
	if _, err := s.nodes.DeleteOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "incarnation", Value: incarnation}}); err != nil {
		return fmt.Errorf("remove node %s: %w", id, translate(err))
	}
	return nil
}

// ListNodes returns every registered node by id.
func (s *Store) ListNodes(ctx context.Context) ([]store.Node, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	cur, err := s.nodes.Find(ctx, bson.D{}, findOpts().SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", translate(err))
	}
	var docs []nodeDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("list nodes: %w", translate(err))
	}
	out := make([]store.Node, len(docs))
	for i, d := range docs {
		out[i] = store.Node{ID: d.ID, Incarnation: d.Incarnation, Version: d.Version,
			StartedAt: store.FromUnixMS(d.StartedAt), BeatAt: store.FromUnixMS(d.BeatAt), Held: d.Held,
			Host: d.Host, PID: d.PID}
	}
	return out, nil
}
