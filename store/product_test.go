package store_test

import (
	"path/filepath"
	"strings"
	"testing"

	"cronsheet/store"
	"cronsheet/store/sqlite"
)

// coreOnly hides every interface of a store but store.Store.
type coreOnly struct{ store.Store }

func TestAsProduct(t *testing.T) {
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "p.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, err := store.AsProduct(st); err != nil {
		t.Errorf("AsProduct(sqlite) = %v", err)
	}
	_, err = store.AsProduct(coreOnly{st})
	if err == nil {
		t.Fatal("AsProduct of a core-only store: no error")
	}
	for _, want := range []string{"cannot serve cronsheet", "RowTable", "AuditLog", "Dumper"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
}
