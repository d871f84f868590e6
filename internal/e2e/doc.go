// Package e2e holds the multi-process tests: each builds the cronsheet
// binary once (cmd/cronsheet), starts real processes on a temporary
// SQLite store, kills them with SIGKILL where the test says so, and counts
// deliveries at a local hook. It has no code of its own outside tests.
package e2e
