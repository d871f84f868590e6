package mongo

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"cronsheet/store"
	"cronsheet/task"
)

// Targets (store.Targets) live in the targets collection, one document per
// target, _id the target id: the unique _id index refuses a second target
// with an id and serves GetTarget and keyset ListTargets. Versions are
// compared and set, never $inc'ed (FerretDB v1 does not make $inc atomic).

// targetDoc is a document of the targets collection. The kind's settings
// are sub-documents, null for the other kinds.
type targetDoc struct {
	ID              string            `bson:"_id"`
	Name            string            `bson:"name"`
	Kind            task.Channel      `bson:"kind"`
	State           task.TargetState  `bson:"state"`
	FeedbackTimeout int               `bson:"feedback_timeout"`
	HTTP            *httpTargetDoc    `bson:"http"`
	Exec            *execTargetDoc    `bson:"exec"`
	Kafka           *kafkaTargetDoc   `bson:"kafka"`
	Builtin         *builtinDoc       `bson:"builtin"`
	Labels          map[string]string `bson:"labels"`
	Probe           *probeDoc         `bson:"probe,omitempty"`
	Version         int64             `bson:"version"`
	CreatedAt       int64             `bson:"created_at"`
	UpdatedAt       int64             `bson:"updated_at"`
}

type httpTargetDoc struct {
	Method  string            `bson:"method"`
	URL     string            `bson:"url"`
	Headers map[string]string `bson:"headers,omitempty"`
	Body    string            `bson:"body"`
	Timeout int               `bson:"timeout"`
}

type probeDoc struct {
	Interval string `bson:"interval"`
	Method   string `bson:"method,omitempty"`
	Path     string `bson:"path,omitempty"`
}

type execTargetDoc struct {
	Command string `bson:"command"`
}

type kafkaTargetDoc struct {
	Topic string `bson:"topic"`
	Key   string `bson:"key"`
	Value string `bson:"value"`
}

type builtinDoc struct {
	Action    task.BuiltinAction `bson:"action"`
	Tasks     []string           `bson:"tasks,omitempty"`
	Flows     []string           `bson:"flows,omitempty"`
	KeepAge   int                `bson:"keep_age"`
	KeepCount int                `bson:"keep_count"`
}

// targetDocOf returns t's document with the given bookkeeping.
func targetDocOf(t *task.Target, version, created, updated int64) *targetDoc {
	d := &targetDoc{ID: t.ID, Name: t.Name, Kind: t.Kind, State: t.State, FeedbackTimeout: t.FeedbackTimeout, Labels: t.Labels,
		Version: version, CreatedAt: created, UpdatedAt: updated}
	if h := t.HTTP; h != nil {
		d.HTTP = &httpTargetDoc{Method: h.Method, URL: h.URL, Headers: h.Headers, Body: h.Body, Timeout: h.Timeout}
	}
	if e := t.Exec; e != nil {
		d.Exec = &execTargetDoc{Command: e.Command}
	}
	if p := t.Probe; p != nil {
		d.Probe = &probeDoc{Interval: p.Interval, Method: p.Method, Path: p.Path}
	}
	if k := t.Kafka; k != nil {
		d.Kafka = &kafkaTargetDoc{Topic: k.Topic, Key: k.Key, Value: k.Value}
	}
	if b := t.Builtin; b != nil {
		d.Builtin = &builtinDoc{Action: b.Action, Tasks: b.Tasks, Flows: b.Flows, KeepAge: b.KeepAge, KeepCount: b.KeepCount}
	}
	return d
}

func (d *targetDoc) target() *task.Target {
	t := &task.Target{ID: d.ID, Name: d.Name, Kind: d.Kind, State: d.State, FeedbackTimeout: d.FeedbackTimeout, Labels: d.Labels,
		Version: d.Version, CreatedAt: store.FromUnixMS(d.CreatedAt), UpdatedAt: store.FromUnixMS(d.UpdatedAt)}
	if h := d.HTTP; h != nil {
		t.HTTP = &task.HTTPTarget{Method: h.Method, URL: h.URL, Headers: h.Headers, Body: h.Body, Timeout: h.Timeout}
	}
	if e := d.Exec; e != nil {
		t.Exec = &task.ExecTarget{Command: e.Command}
	}
	if p := d.Probe; p != nil {
		t.Probe = &task.TargetProbe{Interval: p.Interval, Method: p.Method, Path: p.Path}
	}
	if k := d.Kafka; k != nil {
		t.Kafka = &task.KafkaTarget{Topic: k.Topic, Key: k.Key, Value: k.Value}
	}
	if b := d.Builtin; b != nil {
		t.Builtin = &task.BuiltinTarget{Action: b.Action, Tasks: b.Tasks, Flows: b.Flows, KeepAge: b.KeepAge, KeepCount: b.KeepCount}
	}
	return t
}

func targetKey(id string) bson.D { return bson.D{{Key: "_id", Value: id}} }

// CreateTarget stores a new target with version 1 and CreatedAt = UpdatedAt
// = now, and sets those on t. An id that is taken is task.ErrConflict (the
// unique _id decides); an empty id is task.ErrInvalid. The caller validates
// the rest of t.
func (s *Store) CreateTarget(ctx context.Context, t *task.Target) error {
	if t == nil || t.ID == "" {
		return fmt.Errorf("create target: %w", task.Invalid("id", "required"))
	}
	now := s.nowMS()
	ctx, cancel := s.call(ctx)
	defer cancel()
	if _, err := s.targets.InsertOne(ctx, targetDocOf(t, 1, now, now)); err != nil {
		return fmt.Errorf("create target %s: %w", t.ID, translate(err))
	}
	t.Version = 1
	t.CreatedAt, t.UpdatedAt = store.FromUnixMS(now), store.FromUnixMS(now)
	return nil
}

// GetTarget returns a target or task.ErrNotFound.
func (s *Store) GetTarget(ctx context.Context, id string) (*task.Target, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	var d targetDoc
	if err := s.targets.FindOne(ctx, targetKey(id)).Decode(&d); err != nil {
		return nil, fmt.Errorf("get target %s: %w", id, translate(err))
	}
	return d.target(), nil
}

// maxVersionTries bounds how often an update without a version check reads
// the version again after losing it to a concurrent update.
const maxVersionTries = 10

// UpdateTarget replaces a target's fields but its id, version and creation
// time, sets UpdatedAt to now and bumps its version, and returns it as
// stored. The version is compared and set: with ifVersion > 0 a target at
// another version is task.ErrConflict; with ifVersion 0 the version read
// is compared, read again when another update won in between. A missing
// target is task.ErrNotFound.
func (s *Store) UpdateTarget(ctx context.Context, t *task.Target, ifVersion int64) (*task.Target, error) {
	if t == nil || t.ID == "" {
		return nil, fmt.Errorf("update target: %w", task.Invalid("id", "required"))
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	out, err := s.updateTarget(ctx, t, ifVersion)
	if err != nil {
		return nil, fmt.Errorf("update target %s: %w", t.ID, err)
	}
	return out, nil
}

func (s *Store) updateTarget(ctx context.Context, t *task.Target, ifVersion int64) (*task.Target, error) {
	for range maxVersionTries {
		have := ifVersion
		if have <= 0 {
			var err error
			if have, err = s.targetVersion(ctx, t.ID); err != nil {
				return nil, err
			}
		}
		d := targetDocOf(t, have+1, 0, s.nowMS())
		set := bson.D{{Key: "name", Value: d.Name}, {Key: "kind", Value: d.Kind}, {Key: "state", Value: d.State},
			{Key: "feedback_timeout", Value: d.FeedbackTimeout}, {Key: "http", Value: d.HTTP}, {Key: "exec", Value: d.Exec},
			{Key: "kafka", Value: d.Kafka}, {Key: "builtin", Value: d.Builtin}, {Key: "labels", Value: d.Labels},
			{Key: "probe", Value: d.Probe},
			{Key: "version", Value: d.Version}, {Key: "updated_at", Value: d.UpdatedAt}}
		var got targetDoc
		err := s.targets.FindOneAndUpdate(ctx, bson.D{{Key: "_id", Value: t.ID}, {Key: "version", Value: have}},
			bson.D{{Key: "$set", Value: set}}, options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&got)
		if err == nil {
			return got.target(), nil
		}
		if !errors.Is(err, mongo.ErrNoDocuments) {
			return nil, err
		}
		// Missing, or at another version?
		stored, err := s.targetVersion(ctx, t.ID)
		if err != nil {
			return nil, err
		}
		if ifVersion > 0 {
			return nil, fmt.Errorf("%w: target version is %d, not %d", task.ErrConflict, stored, ifVersion)
		}
	}
	return nil, fmt.Errorf("%w: the target changed %d times while it was updated", task.ErrConflict, maxVersionTries)
}

// targetVersion returns a target's version or task.ErrNotFound.
func (s *Store) targetVersion(ctx context.Context, id string) (int64, error) {
	var d struct {
		Version int64 `bson:"version"`
	}
	err := s.targets.FindOne(ctx, targetKey(id), options.FindOne().SetProjection(bson.D{{Key: "version", Value: 1}})).Decode(&d)
	return d.Version, translate(err)
}

// DeleteTarget removes a target; a missing one is task.ErrNotFound. Tasks
// keep the id in their targets. Its health goes with it.
func (s *Store) DeleteTarget(ctx context.Context, id string) error {
	ctx, cancel := s.call(ctx)
	defer cancel()
	res, err := s.targets.DeleteOne(ctx, targetKey(id))
	if err == nil && res.DeletedCount == 0 {
		err = task.ErrNotFound
	}
	if err == nil {
		err = s.forgetHealth(ctx, id)
	}
	if err != nil {
		return fmt.Errorf("delete target %s: %w", id, err)
	}
	return nil
}

// ListTargets pages targets in id order after afterID, at most limit.
func (s *Store) ListTargets(ctx context.Context, afterID string, limit int) ([]*task.Target, error) {
	if err := store.CheckLimit(limit); err != nil {
		return nil, fmt.Errorf("list targets: %w", err)
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	cur, err := s.targets.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$gt", Value: afterID}}}},
		findOpts().SetSort(bson.D{{Key: "_id", Value: 1}}).SetLimit(int64(limit)))
	docs, err := findAll[targetDoc](ctx, cur, err)
	if err != nil {
		return nil, fmt.Errorf("list targets: %w", err)
	}
	out := make([]*task.Target, len(docs))
	for i := range docs {
		out[i] = docs[i].target()
	}
	return out, nil
}
