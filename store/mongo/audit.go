package mongo

import (
	"context"
	"errors"
	"fmt"
	"math"
	"unicode/utf8"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"cronsheet/store"
	"cronsheet/task"
)

// The audit trail (store.AuditLog) on MongoDB: collection audit, one
// document per record, _id the record's id (the next integer after the
// largest, as AddOutbox assigns them: the unique _id decides races).
// ix_audit_row (scenario, row_id, _id) serves ListAudit; it is created on
// the store's first audit call (indexes.go creates the others at Open).
const (
	collAudit    = "audit"
	auditRowIdx  = "ix_audit_row"
	auditAtIdx   = "ix_audit_at" // the retention patrol's walk by age
	auditMaxTrys = 50
)

var _ store.AuditLog = (*Store)(nil)

type auditDoc struct {
	ID       int64          `bson:"_id"`
	Scenario string         `bson:"scenario"`
	RowID    string         `bson:"row_id"`
	Action   string         `bson:"action"`
	Who      string         `bson:"who"`
	At       int64          `bson:"at"`
	Old      map[string]any `bson:"old"`
	New      map[string]any `bson:"new"`
}

// prepareAudit creates the audit index once per store (FerretDB v1 must not
// be asked to create an index that exists, so the names are checked first).
func (s *Store) prepareAudit(ctx context.Context) error {
	if s.auditReady.Load() {
		return nil
	}
	c := s.colls.get(collAudit)
	have, err := indexNames(ctx, c)
	if err != nil {
		return fmt.Errorf("list indexes of %s: %w", collAudit, err)
	}
	if !have[auditRowIdx] {
		_, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{
			Keys:    bson.D{{Key: "scenario", Value: 1}, {Key: "row_id", Value: 1}, {Key: "_id", Value: 1}},
			Options: options.Index().SetName(auditRowIdx),
		})
		if err != nil {
			return fmt.Errorf("create index %s: %w", auditRowIdx, err)
		}
	}
	if !have[auditAtIdx] {
		_, err := c.Indexes().CreateOne(ctx, mongo.IndexModel{
			Keys:    bson.D{{Key: "at", Value: 1}, {Key: "_id", Value: 1}},
			Options: options.Index().SetName(auditAtIdx),
		})
		if err != nil {
			return fmt.Errorf("create index %s: %w", auditAtIdx, err)
		}
	}
	s.auditReady.Store(true)
	return nil
}

// AddAudit appends one audit record, see store.AuditLog.
func (s *Store) AddAudit(ctx context.Context, rec *store.AuditRecord) error {
	if rec == nil || rec.Scenario == "" || rec.RowID == "" || rec.Action == "" {
		return fmt.Errorf("add audit: %w", task.Invalid("audit", "scenario, row id and action are required"))
	}
	at := store.UnixMS(rec.At)
	if at == 0 {
		at = s.nowMS()
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	if err := s.prepareAudit(ctx); err != nil {
		return fmt.Errorf("add audit: %w", err)
	}
	c := s.colls.get(collAudit)
	d := auditDoc{Scenario: rec.Scenario, RowID: rec.RowID, Action: rec.Action,
		Who: cutUTF8(rec.Who, store.MaxAuditWho), At: at, Old: rec.Old, New: rec.New}
	for range auditMaxTrys {
		var last auditDoc
		err := c.FindOne(ctx, bson.D{}, options.FindOne().SetSort(bson.D{{Key: "_id", Value: -1}}).
			SetProjection(bson.D{{Key: "_id", Value: 1}})).Decode(&last)
		if err != nil && !errors.Is(err, mongo.ErrNoDocuments) {
			return fmt.Errorf("add audit %s/%s: %w", rec.Scenario, rec.RowID, err)
		}
		d.ID = last.ID + 1
		_, err = c.InsertOne(ctx, d)
		if err == nil {
			rec.ID, rec.At = d.ID, store.FromUnixMS(at)
			return nil
		}
		if !isDuplicate(err) {
			return fmt.Errorf("add audit %s/%s: %w", rec.Scenario, rec.RowID, err)
		}
	}
	return fmt.Errorf("add audit %s/%s: %w: no free id after %d tries", rec.Scenario, rec.RowID,
		task.ErrConflict, auditMaxTrys)
}

// ListAudit returns a row's audit records newest first, see store.AuditLog.
func (s *Store) ListAudit(ctx context.Context, scenario, rowID string, beforeID int64, limit int) ([]*store.AuditRecord, error) {
	if limit < 1 || limit > store.MaxAuditPage {
		return nil, task.Invalid("limit", "must be from 1 to %d, got %d", store.MaxAuditPage, limit)
	}
	if beforeID <= 0 {
		beforeID = math.MaxInt64
	}
	recs, err := s.findAudit(ctx, bson.D{
		{Key: "scenario", Value: scenario}, {Key: "row_id", Value: rowID},
		{Key: "_id", Value: bson.D{{Key: "$lt", Value: beforeID}}},
	}, limit)
	if err != nil {
		return nil, fmt.Errorf("list audit %s/%s: %w", scenario, rowID, err)
	}
	return recs, nil
}

// QueryAudit returns the records q matches, newest first, see
// store.AuditLog.
func (s *Store) QueryAudit(ctx context.Context, q store.AuditQuery) ([]*store.AuditRecord, error) {
	if q.Limit < 1 || q.Limit > store.MaxAuditPage {
		return nil, task.Invalid("limit", "must be from 1 to %d, got %d", store.MaxAuditPage, q.Limit)
	}
	if q.BeforeID <= 0 {
		q.BeforeID = math.MaxInt64
	}
	filter := bson.D{{Key: "_id", Value: bson.D{{Key: "$lt", Value: q.BeforeID}}}}
	for _, f := range []struct{ key, value string }{
		{"scenario", q.Scenario}, {"row_id", q.RowID}, {"who", q.Who}, {"action", q.Action},
	} {
		if f.value != "" {
			filter = append(filter, bson.E{Key: f.key, Value: f.value})
		}
	}
	recs, err := s.findAudit(ctx, filter, q.Limit)
	if err != nil {
		return nil, fmt.Errorf("query audit: %w", err)
	}
	return recs, nil
}

// findAudit returns the records filter matches, newest first, at most
// limit.
func (s *Store) findAudit(ctx context.Context, filter bson.D, limit int) ([]*store.AuditRecord, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	cur, err := s.colls.get(collAudit).Find(ctx, filter,
		findOpts().SetSort(bson.D{{Key: "_id", Value: -1}}).SetLimit(int64(limit)))
	docs, err := findAll[auditDoc](ctx, cur, err)
	if err != nil {
		return nil, err
	}
	out := make([]*store.AuditRecord, len(docs))
	for i, d := range docs {
		out[i] = &store.AuditRecord{ID: d.ID, Scenario: d.Scenario, RowID: d.RowID, Action: d.Action,
			Who: d.Who, At: store.FromUnixMS(d.At), Old: plainFields(d.Old), New: plainFields(d.New)}
	}
	return out, nil
}

// cutUTF8 cuts s to at most n bytes, on a character boundary.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
