package mongo

import (
	"context"
	"cronsheet/store"
	"errors"
	"fmt"
	"math"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"cronsheet/task"
)

// maxIDTries bounds how often AddOutbox takes the next id after losing it
// to a concurrent insert.
const maxIDTries = 50

// AddOutbox stores m and sets its ID and CreatedAt when zero. A given ID
// that is taken is task.ErrConflict; a TriggerID already stored is not
// stored twice (see store.Outbox): the unique tkey index decides.
//
// Ids are the next integer after the largest stored one: the insert
// claims it on the unique _id, and a node that loses it to another takes
// the next one (no counter document, whose $inc FerretDB v1 does not make
// atomic).
func (s *Store) AddOutbox(ctx context.Context, m *task.OutboxMessage) error {
	created := store.UnixMS(m.CreatedAt)
	if created == 0 {
		created = s.nowMS()
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	d := outboxDoc{ID: m.ID, TaskID: m.TaskID, TriggerID: m.TriggerID, Channel: m.Channel,
		To: m.To, Subject: m.Subject, Body: m.Body, CreatedAt: created}
	err := s.addOutbox(ctx, &d)
	if err != nil {
		return fmt.Errorf("add outbox message for task %s: %w", m.TaskID, err)
	}
	m.ID, m.CreatedAt = d.ID, store.FromUnixMS(d.CreatedAt)
	return nil
}

func (s *Store) addOutbox(ctx context.Context, d *outboxDoc) error {
	if d.TriggerID != "" {
		d.TKey = d.TriggerID
		if found, err := s.storedOutbox(ctx, d); found || err != nil {
			return err
		}
	}
	given := d.ID != 0
	for range maxIDTries {
		if !given {
			last, err := s.lastOutboxID(ctx)
			if err != nil {
				return err
			}
			d.ID = last + 1
		}
		if d.TriggerID == "" {
			d.TKey = "id:" + strconv.FormatInt(d.ID, 10)
		}
		_, err := s.outbox.InsertOne(ctx, d)
		if err == nil || !isDuplicate(err) {
			return err
		}
		// Lost the trigger key (a concurrent resume of the same run) or the id.
		if d.TriggerID != "" {
			if found, ferr := s.storedOutbox(ctx, d); found || ferr != nil {
				return ferr
			}
		}
		if given {
			return translate(err)
		}
	}
	return fmt.Errorf("%w: no free outbox id after %d tries", task.ErrConflict, maxIDTries)
}

// storedOutbox loads the id and creation time of the message stored under
// d.TKey into d, and reports whether there is one.
func (s *Store) storedOutbox(ctx context.Context, d *outboxDoc) (bool, error) {
	var got outboxDoc
	err := s.outbox.FindOne(ctx, bson.D{{Key: "tkey", Value: d.TKey}}).Decode(&got)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	d.ID, d.CreatedAt = got.ID, got.CreatedAt
	return true, nil
}

// lastOutboxID returns the largest message id, or 0.
func (s *Store) lastOutboxID(ctx context.Context) (int64, error) {
	var d outboxDoc
	err := s.outbox.FindOne(ctx, bson.D{}, options.FindOne().SetSort(bson.D{{Key: "_id", Value: -1}}).
		SetProjection(bson.D{{Key: "_id", Value: 1}})).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return 0, nil
	}
	return d.ID, err
}

// ListOutbox returns messages newest first, with ID < beforeID when
// beforeID > 0, at most limit.
func (s *Store) ListOutbox(ctx context.Context, beforeID int64, limit int) ([]*task.OutboxMessage, error) {
	if err := store.CheckLimit(limit); err != nil {
		return nil, fmt.Errorf("list outbox: %w", err)
	}
	if beforeID <= 0 {
		beforeID = math.MaxInt64
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	cur, err := s.outbox.Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$lt", Value: beforeID}}}},
		findOpts().SetSort(bson.D{{Key: "_id", Value: -1}}).SetLimit(int64(limit)))
	docs, err := findAll[outboxDoc](ctx, cur, err)
	if err != nil {
		return nil, fmt.Errorf("list outbox: %w", err)
	}
	out := make([]*task.OutboxMessage, len(docs))
	for i := range docs {
		out[i] = docs[i].message()
	}
	return out, nil
}
