package mongo

import (
	"context"
	"sync"
	"sync/atomic"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// collection is a MongoDB collection whose writes can be serialised
// within this process. On MongoDB they are not: each write is the
// server's atomic single-document operation. FerretDB v1 instead reads
// the matching documents, changes them in its own process and writes them
// back, so two concurrent writes to one document from this process could
// both pass a conditional filter (a compare-and-set, a claim, a fence) or
// lose one another's fields (a lost update). When the store is FerretDB
// (writeGate on), every write to a collection waits for the previous one
// to that collection to end, which makes this process's conditional
// writes behave as on MongoDB; several processes on one FerretDB are
// still not atomic against each other (docs/FERRETDB.md).
type collection struct {
	*mongo.Collection
	gate *writeGate
}

// writeGate is one collection's write lock and the store-wide switch.
type writeGate struct {
	on *atomic.Bool // shared by all of a Store's collections
	mu sync.Mutex
}

// enter waits for the collection's turn to write when the gate is on, and
// returns the function that ends the turn.
func (g *writeGate) enter() func() {
	if g == nil || !g.on.Load() {
		return func() {}
	}
	g.mu.Lock()
	return g.mu.Unlock
}

// collections hands out one collection per name, so every caller of a
// name shares its write lock.
type collections struct {
	db     *mongo.Database
	serial atomic.Bool
	mu     sync.Mutex
	byName map[string]*collection
}

func newCollections(db *mongo.Database) *collections {
	return &collections{db: db, byName: map[string]*collection{}}
}

// get returns the collection called name.
func (cs *collections) get(name string) *collection {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	c, ok := cs.byName[name]
	if !ok {
		c = &collection{Collection: cs.db.Collection(name), gate: &writeGate{on: &cs.serial}}
		cs.byName[name] = c
	}
	return c
}

// BulkWrite is mongo.Collection's, serialised when the gate is on.
func (c *collection) BulkWrite(ctx context.Context, models []mongo.WriteModel, opts ...options.Lister[options.BulkWriteOptions]) (*mongo.BulkWriteResult, error) {
	defer c.gate.enter()()
	return c.Collection.BulkWrite(ctx, models, opts...)
}

// InsertOne is mongo.Collection's, serialised when the gate is on.
func (c *collection) InsertOne(ctx context.Context, document any, opts ...options.Lister[options.InsertOneOptions]) (*mongo.InsertOneResult, error) {
	defer c.gate.enter()()
	return c.Collection.InsertOne(ctx, document, opts...)
}

// InsertMany is mongo.Collection's, serialised when the gate is on.
func (c *collection) InsertMany(ctx context.Context, documents any, opts ...options.Lister[options.InsertManyOptions]) (*mongo.InsertManyResult, error) {
	defer c.gate.enter()()
	return c.Collection.InsertMany(ctx, documents, opts...)
}

// DeleteOne is mongo.Collection's, serialised when the gate is on.
func (c *collection) DeleteOne(ctx context.Context, filter any, opts ...options.Lister[options.DeleteOneOptions]) (*mongo.DeleteResult, error) {
	defer c.gate.enter()()
	return c.Collection.DeleteOne(ctx, filter, opts...)
}

// DeleteMany is mongo.Collection's, serialised when the gate is on.
func (c *collection) DeleteMany(ctx context.Context, filter any, opts ...options.Lister[options.DeleteManyOptions]) (*mongo.DeleteResult, error) {
	defer c.gate.enter()()
	return c.Collection.DeleteMany(ctx, filter, opts...)
}

// UpdateByID is mongo.Collection's, serialised when the gate is on.
func (c *collection) UpdateByID(ctx context.Context, id any, update any, opts ...options.Lister[options.UpdateOneOptions]) (*mongo.UpdateResult, error) {
	defer c.gate.enter()()
	return c.Collection.UpdateByID(ctx, id, update, opts...)
}

// UpdateOne is mongo.Collection's, serialised when the gate is on.
func (c *collection) UpdateOne(ctx context.Context, filter any, update any, opts ...options.Lister[options.UpdateOneOptions]) (*mongo.UpdateResult, error) {
	defer c.gate.enter()()
	return c.Collection.UpdateOne(ctx, filter, update, opts...)
}

// UpdateMany is mongo.Collection's, serialised when the gate is on.
func (c *collection) UpdateMany(ctx context.Context, filter any, update any, opts ...options.Lister[options.UpdateManyOptions]) (*mongo.UpdateResult, error) {
	defer c.gate.enter()()
	return c.Collection.UpdateMany(ctx, filter, update, opts...)
}

// ReplaceOne is mongo.Collection's, serialised when the gate is on.
func (c *collection) ReplaceOne(ctx context.Context, filter any, replacement any, opts ...options.Lister[options.ReplaceOptions]) (*mongo.UpdateResult, error) {
	defer c.gate.enter()()
	return c.Collection.ReplaceOne(ctx, filter, replacement, opts...)
}

// FindOneAndDelete is mongo.Collection's, serialised when the gate is on.
func (c *collection) FindOneAndDelete(ctx context.Context, filter any, opts ...options.Lister[options.FindOneAndDeleteOptions]) *mongo.SingleResult {
	defer c.gate.enter()()
	return c.Collection.FindOneAndDelete(ctx, filter, opts...)
}

// FindOneAndReplace is mongo.Collection's, serialised when the gate is on.
func (c *collection) FindOneAndReplace(ctx context.Context, filter any, replacement any, opts ...options.Lister[options.FindOneAndReplaceOptions]) *mongo.SingleResult {
	defer c.gate.enter()()
	return c.Collection.FindOneAndReplace(ctx, filter, replacement, opts...)
}

// FindOneAndUpdate is mongo.Collection's, serialised when the gate is on.
func (c *collection) FindOneAndUpdate(ctx context.Context, filter any, update any, opts ...options.Lister[options.FindOneAndUpdateOptions]) *mongo.SingleResult {
	defer c.gate.enter()()
	return c.Collection.FindOneAndUpdate(ctx, filter, update, opts...)
}
