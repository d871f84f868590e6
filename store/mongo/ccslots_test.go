package mongo_test

import (
	"testing"

	"cronsheet/store"
	"cronsheet/store/mongo"
	"cronsheet/store/mongo/mongotest"
	"cronsheet/store/storetest"
)

func TestCCSlotsConformance(t *testing.T) {
	uri := testURI(t)
	storetest.RunCCSlots(t, func(t *testing.T) store.Product {
		return keepOpen{openTemp(t, uri)}
	}, suiteOptions(t, uri)...)
}

// TestCCSlotsTwoClients races takers through two clients of one
// database, as two processes would: on FerretDB, whose writes are
// serialised only within one client, only the unique index keeps the
// limit.
func TestCCSlotsTwoClients(t *testing.T) {
	uri := testURI(t)
	db := mongotest.TempDatabase(t, uri, "cronsheet_test_")
	var handles []*mongo.Store
	for range 2 {
		s, err := mongo.Open(t.Context(), mongo.Config{URI: uri, Database: db})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		handles = append(handles, s)
	}
	storetest.RaceCCSlots(t, handles[0], handles[1])
}

func TestTargetHealthConformance(t *testing.T) {
	uri := testURI(t)
	storetest.RunTargetHealth(t, func(t *testing.T) store.Product {
		return keepOpen{openTemp(t, uri)}
	}, suiteOptions(t, uri)...)
}
