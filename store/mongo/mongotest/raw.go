package mongotest

import (
	"context"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	driver "go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// DeleteRowRaw deletes the row scenario/id from the rows collection of db
// with the driver alone, as another tool editing the collection would:
// no store method runs, so nothing retires the row's tasks.
func DeleteRowRaw(t testing.TB, uri, db, scenario, id string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := driver.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		t.Fatalf("connect to %s: %v", uri, err)
	}
	defer func() { _ = c.Disconnect(ctx) }()
	res, err := c.Database(db).Collection("rows").DeleteOne(ctx, bson.D{{Key: "scenario", Value: scenario}, {Key: "id", Value: id}})
	if err != nil {
		t.Fatalf("delete row %s/%s in %s: %v", scenario, id, db, err)
	}
	if res.DeletedCount != 1 {
		t.Fatalf("delete row %s/%s in %s: deleted %d", scenario, id, db, res.DeletedCount)
	}
}
