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
// returns the context to write with and the function that ends the turn.
//
// With the gate on, the write is not cut short by ctx's cancellation, only
// by its deadline: a write the client abandons goes on inside FerretDB,
// and the turn would end while it still runs, so the next write (a
// shutdown's release of every claim, say) could interleave with it and
// lose to its stale copy of a document. Waiting for the answer keeps the
// turn until the server is done. A write past its deadline can still be
// abandoned; that is the store timeout, an outage, not a stop.
func (g *writeGate) enter(ctx context.Context) (context.Context, func()) {
	if g == nil || !g.on.Load() {
		return ctx, func() {}
	}
	g.mu.Lock()
	wctx, cancel := context.WithoutCancel(ctx), context.CancelFunc(func() {})
	if dl, ok := ctx.Deadline(); ok {
		wctx, cancel = context.WithDeadline(wctx, dl)
	}
	return wctx, func() {
		cancel()
		g.mu.Unlock()
	}
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
	ctx, done := c.gate.enter(ctx)
	defer done()
	return c.Collection.BulkWrite(ctx, models, opts...)
}

// InsertOne is mongo.Collection's, serialised when the gate is on.
func (c *collection) InsertOne(ctx context.Context, document any, opts ...options.Lister[options.InsertOneOptions]) (*mongo.InsertOneResult, error) {
	ctx, done := c.gate.enter(ctx)
	defer done()
	return c.Collection.InsertOne(ctx, document, opts...)
}

// InsertMany is mongo.Collection's, serialised when the gate is on.
func (c *collection) InsertMany(ctx context.Context, documents any, opts ...options.Lister[options.InsertManyOptions]) (*mongo.InsertManyResult, error) {
	ctx, done := c.gate.enter(ctx)
	defer done()
	return c.Collection.InsertMany(ctx, documents, opts...)
}

// DeleteOne is mongo.Collection's, serialised when the gate is on.
func (c *collection) DeleteOne(ctx context.Context, filter any, opts ...options.Lister[options.DeleteOneOptions]) (*mongo.DeleteResult, error) {
	ctx, done := c.gate.enter(ctx)
	defer done()
	return c.Collection.DeleteOne(ctx, filter, opts...)
}

// DeleteMany is mongo.Collection's, serialised when the gate is on.
func (c *collection) DeleteMany(ctx context.Context, filter any, opts ...options.Lister[options.DeleteManyOptions]) (*mongo.DeleteResult, error) {
	ctx, done := c.gate.enter(ctx)
	defer done()
	return c.Collection.DeleteMany(ctx, filter, opts...)
}

// UpdateByID is mongo.Collection's, serialised when the gate is on.
func (c *collection) UpdateByID(ctx context.Context, id any, update any, opts ...options.Lister[options.UpdateOneOptions]) (*mongo.UpdateResult, error) {
	ctx, done := c.gate.enter(ctx)
	defer done()
	return c.Collection.UpdateByID(ctx, id, update, opts...)
}

// UpdateOne is mongo.Collection's, serialised when the gate is on.
func (c *collection) UpdateOne(ctx context.Context, filter any, update any, opts ...options.Lister[options.UpdateOneOptions]) (*mongo.UpdateResult, error) {
	ctx, done := c.gate.enter(ctx)
	defer done()
	return c.Collection.UpdateOne(ctx, filter, update, opts...)
}

// UpdateMany is mongo.Collection's, serialised when the gate is on.
func (c *collection) UpdateMany(ctx context.Context, filter any, update any, opts ...options.Lister[options.UpdateManyOptions]) (*mongo.UpdateResult, error) {
	ctx, done := c.gate.enter(ctx)
	defer done()
	return c.Collection.UpdateMany(ctx, filter, update, opts...)
}

// ReplaceOne is mongo.Collection's, serialised when the gate is on.
func (c *collection) ReplaceOne(ctx context.Context, filter any, replacement any, opts ...options.Lister[options.ReplaceOptions]) (*mongo.UpdateResult, error) {
	ctx, done := c.gate.enter(ctx)
	defer done()
	return c.Collection.ReplaceOne(ctx, filter, replacement, opts...)
}

// FindOneAndDelete is mongo.Collection's, serialised when the gate is on.
func (c *collection) FindOneAndDelete(ctx context.Context, filter any, opts ...options.Lister[options.FindOneAndDeleteOptions]) *mongo.SingleResult {
	ctx, done := c.gate.enter(ctx)
	defer done()
	return c.Collection.FindOneAndDelete(ctx, filter, opts...)
}

// FindOneAndReplace is mongo.Collection's, serialised when the gate is on.
func (c *collection) FindOneAndReplace(ctx context.Context, filter any, replacement any, opts ...options.Lister[options.FindOneAndReplaceOptions]) *mongo.SingleResult {
	ctx, done := c.gate.enter(ctx)
	defer done()
	return c.Collection.FindOneAndReplace(ctx, filter, replacement, opts...)
}

// FindOneAndUpdate is mongo.Collection's, serialised when the gate is on.
func (c *collection) FindOneAndUpdate(ctx context.Context, filter any, update any, opts ...options.Lister[options.FindOneAndUpdateOptions]) *mongo.SingleResult {
	ctx, done := c.gate.enter(ctx)
	defer done()
	return c.Collection.FindOneAndUpdate(ctx, filter, update, opts...)
}
