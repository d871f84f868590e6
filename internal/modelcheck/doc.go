// Package modelcheck holds a randomized model checker of the public API:
// its test drives the real binary (cmd/cronsheet on SQLite) through long
// random sequences of row, job, task and feedback calls and kill -9
// restarts, counts deliveries at a hook by trigger id, and checks the
// engine's promises after every step and at the end. The package has no
// code outside its tests.
package modelcheck
