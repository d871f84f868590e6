package sqlite_test

import (
	"path/filepath"
	"testing"

	"cronsheet/store"
	"cronsheet/store/sqlite"
	"cronsheet/store/storetest"
)

func TestCCSlotsConformance(t *testing.T) {
	storetest.RunCCSlots(t, func(t *testing.T) store.Product { return openTemp(t) })
}

// TestCCSlotsTwoHandles races takers through two handles of one file, as
// two processes would.
func TestCCSlotsTwoHandles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cc.db")
	var handles []*sqlite.Store
	for range 2 {
		s, err := sqlite.Open(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		handles = append(handles, s)
	}
	storetest.RaceCCSlots(t, handles[0], handles[1])
}

func TestTargetHealthConformance(t *testing.T) {
	storetest.RunTargetHealth(t, func(t *testing.T) store.Product { return openTemp(t) })
}
