package sqlite_test

import (
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"cronsheet/store/sqlite"
)

func TestProbe(t *testing.T) {
	path := filepath.Join(t.TempDir(), "probe.db")
	s, err := sqlite.Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	h, err := s.Probe(t.Context())
	if err != nil {
		t.Fatalf("Probe: %v", err)
	}
	if h.Driver != "sqlite" || !strings.HasPrefix(h.Version, "3.") || h.ReplicaSet != "" || h.Transactions {
		t.Errorf("Probe = %+v, want driver sqlite, version 3.x, no replica set", h)
	}
	// The probe reads what Open stamped: another schema version fails it.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.ExecContext(t.Context(), "PRAGMA user_version = 9999"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Probe(t.Context()); err == nil || !strings.Contains(err.Error(), "schema version is 9999") {
		t.Errorf("Probe of a foreign schema = %v, want the schema version named", err)
	}
}
