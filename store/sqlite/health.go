package sqlite

import (
	"context"
	"fmt"

	"cronsheet/store"
)

// Probe pings the database through the read pool and reads the schema
// version Open stamped into the file (PRAGMA user_version): a file that is
// gone, unreadable or not this store's fails it. So does a store whose
// latest write was refused for disk full (noteWrite), with an error coded
// unavailable that says so: reads still work then, but no fire, outcome or
// edit can be stored until space is freed.
func (s *Store) Probe(ctx context.Context) (store.Health, error) {
	h := store.Health{Driver: "sqlite"}
	if err := s.r.PingContext(ctx); err != nil {
		return h, fmt.Errorf("probe sqlite: ping: %w", err)
	}
	var v int
	if err := s.r.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return h, fmt.Errorf("probe sqlite: read schema version: %w", err)
	}
	if v != schemaVersion {
		return h, fmt.Errorf("probe sqlite: schema version is %d, want %d", v, schemaVersion)
	}
	if err := s.r.QueryRowContext(ctx, "SELECT sqlite_version()").Scan(&h.Version); err != nil {
		return h, fmt.Errorf("probe sqlite: read version: %w", err)
	}
	if err := s.fullErr(); err != nil {
		return h, fmt.Errorf("probe sqlite: %w", err)
	}
	return h, nil
}
