package mongo

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"cronsheet/store"
	"cronsheet/task"
)

// pruneSpec is how one kind is walked: its collection, age field and
// tie-break key, each pair served by an index (indexSpecs, prepareAudit).
type pruneSpec struct {
	coll   *collection
	age    string
	key    string
	intKey bool   // key is an integer _id (store.IntKey)
	where  bson.D // what counts as an item of the kind
}

func (s *Store) pruneSpec(kind store.RetentionKind) (pruneSpec, bool) {
	switch kind {
	case store.RetainRuns:
		return pruneSpec{coll: s.runs, age: "finished_at", key: "trigger_id",
			where: bson.D{{Key: "state", Value: bson.D{{Key: "$in", Value: finalStates()}}}}}, true
	case store.RetainJobs:
		return pruneSpec{coll: s.tasks, age: "created_at", key: "task_id",
			where: bson.D{{Key: "scenario", Value: task.JobScenario}}}, true
	case store.RetainOutbox:
		return pruneSpec{coll: s.outbox, age: "created_at", key: "_id", intKey: true}, true
	case store.RetainAudit:
		return pruneSpec{coll: s.colls.get(collAudit), age: "at", key: "_id", intKey: true}, true
	case store.RetainFlowExecutions:
		return pruneSpec{coll: s.executions(), age: "started_at", key: "_id"}, true
	}
	return pruneSpec{}, false
}

// keyArg is a Cursor.ID as the key field's value.
func (sp pruneSpec) keyArg(id string) any {
	if !sp.intKey {
		return id
	}
	n, _ := strconv.ParseInt(id, 10, 64) // "" is 0: before every id
	return n
}

// keyText is a key field's value as a Cursor.ID.
func (sp pruneSpec) keyText(v any) string {
	switch k := v.(type) {
	case int64:
		return store.IntKey(k)
	case int32:
		return store.IntKey(int64(k))
	case string:
		return k
	}
	return fmt.Sprint(v)
}

// cursorOf reads a document's position.
func (sp pruneSpec) cursorOf(d bson.M) store.Cursor {
	var age int64
	switch a := d[sp.age].(type) {
	case int64:
		age = a
	case int32:
		age = int64(a)
	case float64:
		age = int64(a)
	}
	return store.Cursor{At: store.FromUnixMS(age), ID: sp.keyText(d[sp.key])}
}

var _ store.Retention = (*Store)(nil)

// RetentionCutoff returns the position of the keep-th newest item of kind
// (store.Retention).
func (s *Store) RetentionCutoff(ctx context.Context, kind store.RetentionKind, keep int) (store.Cursor, error) {
	sp, ok := s.pruneSpec(kind)
	if !ok || keep < 1 {
		return store.Cursor{}, fmt.Errorf("retention cutoff: %w", task.Invalid("kind", "unknown kind %q or keep %d below 1", kind, keep))
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	var d bson.M
	err := sp.coll.FindOne(ctx, orEmpty(sp.where), options.FindOne().
		SetSort(bson.D{{Key: sp.age, Value: -1}, {Key: sp.key, Value: -1}}).SetSkip(int64(keep-1)).
		SetProjection(bson.D{{Key: sp.age, Value: 1}, {Key: sp.key, Value: 1}})).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return store.Cursor{}, nil
	}
	if err != nil {
		return store.Cursor{}, fmt.Errorf("retention cutoff of %s: %w", kind, translate(err))
	}
	return sp.cursorOf(d), nil
}

func orEmpty(d bson.D) bson.D {
	if d == nil {
		return bson.D{}
	}
	return d
}

// Prune examines one batch of p.Kind in age order and deletes those that
// may go (store.Retention). Each delete names the documents and repeats
// the conditions that make them deletable, so a concurrent pass deletes
// (and counts) each document once.
func (s *Store) Prune(ctx context.Context, p store.PruneParams) (store.PruneResult, error) {
	res := store.PruneResult{Next: p.After}
	if err := p.Check(); err != nil {
		return res, fmt.Errorf("prune: %w", err)
	}
	if p.Before.IsZero() {
		return res, nil
	}
	sp, _ := s.pruneSpec(p.Kind)
	if p.Kind == store.RetainAudit {
		if err := s.prepareAudit(ctx); err != nil {
			return res, fmt.Errorf("prune audit: %w", err)
		}
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	docs, err := s.examine(ctx, sp, p)
	if err != nil || len(docs) == 0 {
		return res, wrapPrune(p.Kind, err)
	}
	res.Examined, res.Next = len(docs), sp.cursorOf(docs[len(docs)-1])
	switch p.Kind {
	case store.RetainRuns:
		res.Deleted, err = s.pruneRuns(ctx, docs)
	case store.RetainJobs:
		res.Deleted, err = s.pruneJobs(ctx, docs, p.UpdatedBelow())
	default:
		keys := make(bson.A, len(docs))
		for i, d := range docs {
			keys[i] = d["_id"]
		}
		filter := bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: keys}}}}
		if p.Kind == store.RetainFlowExecutions {
			filter = append(filter, bson.E{Key: "state", Value: bson.D{{Key: "$ne", Value: string(task.ExecRunning)}}})
		}
		var r *mongo.DeleteResult
		if r, err = sp.coll.DeleteMany(ctx, filter); err == nil {
			res.Deleted = int(r.DeletedCount)
		}
	}
	return res, wrapPrune(p.Kind, err)
}

func wrapPrune(kind store.RetentionKind, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("prune %s: %w", kind, translate(err))
}

// examine reads up to p.Limit documents strictly between p.After and
// p.Before, in age order.
func (s *Store) examine(ctx context.Context, sp pruneSpec, p store.PruneParams) ([]bson.M, error) {
	a, b := store.UnixMS(p.After.At), store.UnixMS(p.Before.At)
	filter := append(orEmpty(sp.where)[:len(sp.where):len(sp.where)],
		bson.E{Key: "$and", Value: bson.A{
			bson.D{{Key: "$or", Value: bson.A{
				bson.D{{Key: sp.age, Value: bson.D{{Key: "$gt", Value: a}}}},
				bson.D{{Key: sp.age, Value: a}, {Key: sp.key, Value: bson.D{{Key: "$gt", Value: sp.keyArg(p.After.ID)}}}},
			}}},
			bson.D{{Key: "$or", Value: bson.A{
				bson.D{{Key: sp.age, Value: bson.D{{Key: "$lt", Value: b}}}},
				bson.D{{Key: sp.age, Value: b}, {Key: sp.key, Value: bson.D{{Key: "$lt", Value: sp.keyArg(p.Before.ID)}}}},
			}}},
		}})
	proj := bson.D{{Key: sp.age, Value: 1}, {Key: sp.key, Value: 1}}
	switch p.Kind {
	case store.RetainRuns:
		proj = append(proj, bson.E{Key: "task_id", Value: 1}, bson.E{Key: "slot", Value: 1}, bson.E{Key: "trigger_type", Value: 1})
	case store.RetainJobs:
		proj = append(proj, bson.E{Key: "is_claimed", Value: 1}, bson.E{Key: "is_done", Value: 1},
			bson.E{Key: "updated_at", Value: 1}, bson.E{Key: "state", Value: 1}, bson.E{Key: "job.key", Value: 1},
			bson.E{Key: "last_fire", Value: 1})
	}
	cur, err := sp.coll.Find(ctx, filter, findOpts().SetSort(bson.D{{Key: sp.age, Value: 1}, {Key: sp.key, Value: 1}}).
		SetLimit(int64(p.Limit)).SetProjection(proj))
	return findAll[bson.M](ctx, cur, err)
}
