// Package task holds cronsheet's domain types: the canonical Task, the fire
// ledger's Run, outbox messages, states and sentinel errors, and the error
// wrappers executors use to classify failures.
//
// It imports only the standard library; every other package points toward it.
package task
