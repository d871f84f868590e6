// Package store defines the storage cronsheet needs: scenario rows, canonical
// tasks, the fire ledger (runs) and the outbox. Drivers live in sub-packages
// (store/sqlite, store/mongo) and all pass the conformance suite in
// store/storetest.
//
// Drivers translate their errors at this boundary: a missing document is
// task.ErrNotFound, a unique-key or version clash is task.ErrConflict.
// Drivers keep times to the millisecond (units.go converts).
//
// Each contract has its file: Store's parts in rows.go, tasks.go,
// ledger.go, outbox.go, control.go (targets, task states, feedback, run
// queries), jobs.go and nodes.go; the rest of Product in rowtable.go,
// audit.go, dump.go, flows.go, health.go (Prober), ccslots.go, stats.go
// (RunStats), users.go and retention.go (Retention).
//
// Product is the whole contract: every driver implements all of it, and
// the server refuses a store that does not. Two parts stay optional,
// because a driver can keep their promise only on some servers:
//   - Clock (ServerTime): only a store whose server has a clock of its
//     own (MongoDB) has one; SQLite's processes share the host clock.
//   - RunFinisher (FinishRuns): its promise that a failed batch stored
//     nothing needs a multi-document transaction, which MongoDB lacks on
//     a standalone server and FerretDB lacks always; the SQLite driver
//     has it, and callers finish runs one by one on a store without it.
//
// RunWriter (WriteRuns: a burst's fire records, then its outcomes, in one
// call) is on both drivers, one transaction on SQLite, RecordFires then
// FinishRun calls on MongoDB.
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
