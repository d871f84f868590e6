// Package mongotest gives tests a MongoDB (or FerretDB) to run on: the
// server named by CRONSHEET_TEST_MONGO_URI, and a database of their own that
// is dropped when the test ends.
package mongotest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"
	"time"

	"cronsheet/store/mongo"
)

// URI returns CRONSHEET_TEST_MONGO_URI. Without it the test is skipped,
// with a message saying how to enable what (e.g. "the MongoDB driver's
// tests"); under CI=true, where the Mongo run is required, it fails.
func URI(t testing.TB, what string) string {
	t.Helper()
	if uri := os.Getenv("CRONSHEET_TEST_MONGO_URI"); uri != "" {
		return uri
	}
	how := "CRONSHEET_TEST_MONGO_URI is not set: set it to a MongoDB or FerretDB URI " +
		"(e.g. mongodb://127.0.0.1:27017/) to run " + what + "; " +
		"`bash .ci/run` starts FerretDB on PostgreSQL and sets it"
	if os.Getenv("CI") == "true" {
		t.Fatal(how + " (required under CI=true)")
	}
	t.Skip(how)
	return ""
}

// TempDatabase returns a new database name starting with prefix on uri,
// dropped when t ends (after the cleanups registered later, such as a node
// using it, have run).
func TempDatabase(t testing.TB, uri, prefix string) string {
	t.Helper()
	var b [6]byte
	_, _ = rand.Read(b[:])
	return Database(t, uri, prefix+hex.EncodeToString(b[:]))
}

// Database returns db, to be dropped when t ends, like TempDatabase; the
// caller makes the name unique (naming it again in the same test is fine:
// the second drop finds nothing).
func Database(t testing.TB, uri, db string) string {
	t.Helper()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		s, err := mongo.Open(ctx, mongo.Config{URI: uri, Database: db})
		if err != nil {
			t.Errorf("open to drop %s: %v", db, err)
			return
		}
		defer s.Close()
		if err := s.Drop(ctx); err != nil {
			t.Errorf("drop %s: %v", db, err)
		}
	})
	return db
}
