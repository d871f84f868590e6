// Package fire turns one scheduled slot of a task into a delivered run.
//
// A fire checks that this node still owns the task at the armed version,
// inserts the ledger record (the only gate: a duplicate key means the slot
// was already fired, and nothing is sent), then delivers through an executor
// with the task's ttl as each attempt's deadline, retrying with exponential
// backoff and jitter until max_retries, after which the run is dead. Plan
// computes which slots were missed while no node ran the task and when the
// next one is due.
//
// fire imports task, mapping and executors; it knows nothing of gocron or
// HTTP.
package fire
