package webtable_test

import (
	"path/filepath"
	"testing"

	"cronsheet/config"
	"cronsheet/internal/apitest"
	"cronsheet/store/mongo/mongotest"
)

// useTestDriver points a node's config at a fresh store of the test
// driver (apitest.Driver).
func useTestDriver(t testing.TB, cfg *config.Config) {
	t.Helper()
	if apitest.Driver() != "mongo" {
		cfg.Store.Path = filepath.Join(t.TempDir(), "cronsheet.db")
		return
	}
	uri := mongotest.URI(t, "the web table tests on the mongo driver")
	cfg.Store.Driver, cfg.Store.URI = "mongo", uri
	cfg.Store.Database = mongotest.TempDatabase(t, uri, apitest.MongoPrefix)
}
