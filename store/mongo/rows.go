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

// rowKey filters the row scenario/id.
func rowKey(scenario, id string) bson.D {
	return bson.D{{Key: "scenario", Value: scenario}, {Key: "id", Value: id}}
}

// InsertRow stores a new row with is_fetched=0 and version 1, and sets those
// and its times on row. CreatedAt defaults to now, UpdatedAt to CreatedAt.
// An existing (scenario, id) is task.ErrConflict (the unique index says so).
func (s *Store) InsertRow(ctx context.Context, row *task.Row) error {
	if row.ID == "" {
		return fmt.Errorf("insert row: %w", task.Invalid("id", "required"))
	}
	created := store.UnixMS(row.CreatedAt)
	if created == 0 {
		created = s.nowMS()
	}
	updated := max(store.UnixMS(row.UpdatedAt), created)
	doc := rowDoc{Scenario: row.Scenario, ID: row.ID, Fields: row.Fields, IsActive: row.IsActive,
		Error: row.Error, NextFire: store.UnixMS(row.NextFire), LastFire: store.UnixMS(row.LastFire), LastStatus: row.LastStatus,
		Version: 1, CreatedAt: created, UpdatedAt: updated}.withSearchKeys()
	ctx, cancel := s.call(ctx)
	defer cancel()
	if _, err := s.rows.InsertOne(ctx, doc); err != nil {
		return fmt.Errorf("insert row %s/%s: %w", row.Scenario, row.ID, translate(err))
	}
	row.IsFetched, row.Version = 0, 1
	row.CreatedAt, row.UpdatedAt = store.FromUnixMS(created), store.FromUnixMS(updated)
	return nil
}

// GetRow returns one row or task.ErrNotFound.
func (s *Store) GetRow(ctx context.Context, scenario, id string) (*task.Row, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	var d rowDoc
	if err := s.rows.FindOne(ctx, rowKey(scenario, id)).Decode(&d); err != nil {
		return nil, fmt.Errorf("get row %s/%s: %w", scenario, id, translate(err))
	}
	return d.row(), nil
}

// UpdateRowFields replaces the row's fields, sets is_fetched=0 and bumps its
// version, checking p.IfVersion when it is not 0. It is one
// findOneAndUpdate: the version check is part of its filter.
func (s *Store) UpdateRowFields(ctx context.Context, p store.UpdateRowParams) (*task.Row, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	filter := rowKey(p.Scenario, p.ID)
	if p.IfVersion > 0 {
		filter = append(filter, bson.E{Key: "version", Value: p.IfVersion})
	}
	k := searchKeysOf(p.Fields, "")
	update := bson.D{
		{Key: "$set", Value: bson.D{{Key: "fields", Value: p.Fields}, {Key: "is_fetched", Value: 0},
			{Key: "updated_at", Value: s.nowMS()}, {Key: "st", Value: k.text}, {Key: "sg", Value: k.grams}}},
		{Key: "$inc", Value: bson.D{{Key: "version", Value: 1}}},
	}
	var d rowDoc
	err := s.rows.FindOneAndUpdate(ctx, filter, update,
		options.FindOneAndUpdate().SetReturnDocument(options.After)).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) && p.IfVersion > 0 {
		// Missing, or another version?
		err = s.checkRowVersion(ctx, p.Scenario, p.ID, p.IfVersion)
	}
	if err != nil {
		return nil, fmt.Errorf("update row %s/%s: %w", p.Scenario, p.ID, translate(err))
	}
	return d.row(), nil
}

// checkRowVersion fails with task.ErrNotFound when the row is missing and
// with task.ErrConflict when want > 0 and the row has another version.
func (s *Store) checkRowVersion(ctx context.Context, scenario, id string, want int64) error {
	have, err := s.rowVersion(ctx, scenario, id)
	if err != nil {
		return err
	}
	if want > 0 && have != want {
		return fmt.Errorf("%w: row version is %d, not %d", task.ErrConflict, have, want)
	}
	return nil
}

// rowVersion returns the row's version or task.ErrNotFound.
func (s *Store) rowVersion(ctx context.Context, scenario, id string) (int64, error) {
	var d struct {
		Version int64 `bson:"version"`
	}
	err := s.rows.FindOne(ctx, rowKey(scenario, id),
		options.FindOne().SetProjection(bson.D{{Key: "version", Value: 1}})).Decode(&d)
	return d.Version, translate(err)
}

// DeleteRow marks the row's tasks deleted and disabled, then removes the
// row; a missing row is task.ErrNotFound.
//
// Without a transaction the order matters: interrupted between the two
// steps, the row is still there and its task is disabled, never the
// reverse (an enabled task without a row would keep firing). Calling
// DeleteRow again completes it.
func (s *Store) DeleteRow(ctx context.Context, scenario, id string) error {
	return s.DeleteRowIf(ctx, scenario, id, 0)
}

// DeleteRowIf is DeleteRow when the row's version is ifVersion (0: any):
// checked first, and again by the delete's filter. A row edited between
// the two keeps its tasks retired and is marked unfetched, so that the
// sync maps it again (reviving its task), and the answer is
// task.ErrConflict.
func (s *Store) DeleteRowIf(ctx context.Context, scenario, id string, ifVersion int64) error {
	ctx, cancel := s.call(ctx)
	defer cancel()
	err := s.checkRowVersion(ctx, scenario, id, ifVersion)
	if err == nil {
		err = s.retireRowTasks(ctx, scenario, id, "", s.nowMS())
	}
	if err == nil {
		filter := rowKey(scenario, id)
		if ifVersion > 0 {
			filter = append(filter, bson.E{Key: "version", Value: ifVersion})
		}
		var res *mongo.DeleteResult
		res, err = s.rows.DeleteOne(ctx, filter)
		if err == nil && res.DeletedCount == 0 {
			err = task.ErrNotFound
			if ifVersion > 0 {
				err = s.resyncRow(ctx, scenario, id)
			}
		}
	}
	if err == nil {
		// A sync that read the row before it was deleted may have
		// upserted its task after the first retire: retire again, now
		// that no sync can find the row.
		err = s.retireRowTasks(ctx, scenario, id, "", s.nowMS())
	}
	if err != nil {
		return fmt.Errorf("delete row %s/%s: %w", scenario, id, translate(err))
	}
	return nil
}

// resyncRow marks a row whose delete lost to an edit unfetched, so that
// the sync maps it again after DeleteRowIf retired its tasks; it answers
// task.ErrConflict, or task.ErrNotFound when the row is gone after all.
func (s *Store) resyncRow(ctx context.Context, scenario, id string) error {
	res, err := s.rows.UpdateOne(ctx, rowKey(scenario, id), bson.D{{Key: "$set", Value: bson.D{{Key: "is_fetched", Value: 0}}}})
	switch {
	case err != nil:
		return err
	case res.MatchedCount == 0:
		return task.ErrNotFound
	}
	return fmt.Errorf("%w: the row changed while it was deleted", task.ErrConflict)
}

// retireRowTasks marks the tasks of a row deleted and disabled, except
// keepTaskID (when not empty).
func (s *Store) retireRowTasks(ctx context.Context, scenario, rowID, keepTaskID string, now int64) error {
	filter := bson.D{{Key: "scenario", Value: scenario}, {Key: "row_id", Value: rowID}, {Key: "deleted", Value: 0}}
	if keepTaskID != "" {
		filter = append(filter, bson.E{Key: "task_id", Value: bson.D{{Key: "$ne", Value: keepTaskID}}})
	}
	_, err := s.tasks.UpdateMany(ctx, filter, bson.D{
		{Key: "$set", Value: bson.D{{Key: "deleted", Value: 1}, {Key: "is_enable", Value: 0}, {Key: "updated_at", Value: now},
			{Key: "arm_at", Value: int64(0)}}},
		{Key: "$inc", Value: bson.D{{Key: "version", Value: 1}}},
	})
	return err
}

// ListRows pages a scenario's rows in id order after afterID.
func (s *Store) ListRows(ctx context.Context, scenario, afterID string, limit int) ([]*task.Row, error) {
	if err := store.CheckLimit(limit); err != nil {
		return nil, fmt.Errorf("list rows of %s: %w", scenario, err)
	}
	filter := bson.D{{Key: "scenario", Value: scenario}, {Key: "id", Value: bson.D{{Key: "$gt", Value: afterID}}}}
	opts := findOpts().SetSort(bson.D{{Key: "id", Value: 1}}).SetLimit(int64(limit))
	rows, err := s.findRows(ctx, filter, opts)
	if err != nil {
		return nil, fmt.Errorf("list rows of %s: %w", scenario, err)
	}
	return rows, nil
}

// ListUnfetchedRows returns up to limit rows with is_fetched=0, the longest
// waiting first.
func (s *Store) ListUnfetchedRows(ctx context.Context, limit int) ([]*task.Row, error) {
	if err := store.CheckLimit(limit); err != nil {
		return nil, fmt.Errorf("list unfetched rows: %w", err)
	}
	opts := findOpts().SetSort(bson.D{{Key: "updated_at", Value: 1}}).SetLimit(int64(limit))
	rows, err := s.findRows(ctx, bson.D{{Key: "is_fetched", Value: 0}}, opts)
	if err != nil {
		return nil, fmt.Errorf("list unfetched rows: %w", err)
	}
	return rows, nil
}

func (s *Store) findRows(ctx context.Context, filter any, opts *options.FindOptionsBuilder) ([]*task.Row, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	cur, err := s.rows.Find(ctx, filter, opts)
	docs, err := findAll[rowDoc](ctx, cur, err)
	if err != nil {
		return nil, err
	}
	out := make([]*task.Row, len(docs))
	for i := range docs {
		out[i] = docs[i].row()
	}
	return out, nil
}
