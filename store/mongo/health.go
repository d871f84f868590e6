package mongo

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
	"go.mongodb.org/mongo-driver/v2/mongo/readpref"

	"cronsheet/store"
)

// collMeta holds the store's own documents: {_id: "healthz"}, which Open
// writes and Probe reads.
const collMeta = "meta"

// healthID is the _id of the document Probe reads. It is plain ASCII, so
// every server stores it (FerretDB on PostgreSQL refuses NUL bytes).
const healthID = "healthz"

// writeHealthDoc upserts the document Probe reads.
func (s *Store) writeHealthDoc(ctx context.Context) error {
	_, err := s.colls.get(collMeta).UpdateOne(ctx, bson.D{{Key: "_id", Value: healthID}},
		bson.D{{Key: "$setOnInsert", Value: bson.D{{Key: "created_at", Value: s.nowMS()}}}},
		options.UpdateOne().SetUpsert(true))
	if err != nil {
		return fmt.Errorf("write health document: %w", err)
	}
	return nil
}

// Probe pings the primary, reads the health document Open wrote (a server
// that answers pings but cannot read this database's data fails it), and
// asks the server what it is: buildInfo's version and hello's replica set.
func (s *Store) Probe(ctx context.Context) (store.Health, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	h := store.Health{Driver: "mongo"}
	if err := s.client.Ping(ctx, readpref.Primary()); err != nil {
		return h, fmt.Errorf("probe mongo: ping: %w", err)
	}
	var doc bson.M
	err := s.colls.get(collMeta).FindOne(ctx, bson.D{{Key: "_id", Value: healthID}}).Decode(&doc)
	if err != nil {
		return h, fmt.Errorf("probe mongo: read %s/%s: %w", collMeta, healthID, translate(err))
	}
	info, err := s.ServerInfo(ctx)
	if err != nil {
		return h, fmt.Errorf("probe mongo: %w", err)
	}
	h.Version, h.FerretDB = info.Version, info.FerretDB
	var hello struct {
		SetName string `bson:"setName"`
	}
	if err := s.client.Database("admin").RunCommand(ctx, bson.D{{Key: "hello", Value: 1}}).Decode(&hello); err != nil {
		return h, fmt.Errorf("probe mongo: hello: %w", err)
	}
	h.ReplicaSet = hello.SetName
	h.Transactions = h.ReplicaSet != "" && !h.FerretDB
	h.ChangeStreams = h.Transactions
	return h, nil
}
