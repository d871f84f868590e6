package webtable_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"cronsheet/server"
	"cronsheet/store"
	"cronsheet/store/mongo"
	"cronsheet/store/mongo/mongotest"
	"cronsheet/store/sqlite"
)

// testDriver is the store driver the handler and browser tests run on:
// CRONSHEET_TEST_DRIVER=mongo runs them on CRONSHEET_TEST_MONGO_URI (.ci/run
// does, after the SQLite run); anything else, SQLite.
func testDriver() string {
	if os.Getenv("CRONSHEET_TEST_DRIVER") == "mongo" {
		return "mongo"
	}
	return "sqlite"
}

// openStore opens an empty store of the test driver, closed (and on
// MongoDB dropped) when t ends.
func openStore(t testing.TB) store.Product {
	t.Helper()
	var st store.Product
	if testDriver() == "mongo" {
		uri := mongotest.URI(t, "the web table tests on the mongo driver")
		db := mongotest.TempDatabase(t, uri, "cronsheet_webtable_")
		cfg := mongo.Config{URI: uri, Database: db}
		if _, ok := t.(*testing.B); ok {
			// FerretDB reads a scenario's every row per page (see
			// docs/FERRETDB.md): at 100k rows a page takes longer than the
			// default call timeout.
			cfg.Timeout = 10 * time.Minute
		}
		s, err := mongo.Open(t.Context(), cfg)
		if err != nil {
			t.Fatalf("open store: %v", err)
		}
		st = s
	} else {
		s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "cronsheet.db"))
		if err != nil {
			t.Fatalf("open store: %v", err)
		}
		st = s
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// useTestDriver points a node's config at a fresh store of the test
// driver.
func useTestDriver(t testing.TB, cfg *server.Config) {
	t.Helper()
	if testDriver() != "mongo" {
		cfg.Store.Path = filepath.Join(t.TempDir(), "cronsheet.db")
		return
	}
	uri := mongotest.URI(t, "the web table tests on the mongo driver")
	cfg.Store.Driver, cfg.Store.URI = "mongo", uri
	cfg.Store.Database = mongotest.TempDatabase(t, uri, "cronsheet_webtable_")
}
