// Package store defines the storage cronsheet needs: scenario rows, canonical
// tasks, the fire ledger (runs) and the outbox. Drivers live in sub-packages
// (store/sqlite, store/mongo) and all pass the conformance suite in
// store/storetest.
//
// Drivers translate their errors at this boundary: a missing document is
// task.ErrNotFound, a unique-key or version clash is task.ErrConflict.
// Drivers keep times to the millisecond.
package store

// Store is everything patrols, executors and the API need from storage.
// Every method is safe for concurrent use.
type Store interface {
	Rows
	Tasks
	Ledger
	Outbox
	Control
	Jobs
	Nodes
	// Close releases the store's resources.
	Close() error
}
