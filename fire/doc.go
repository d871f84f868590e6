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
// The Firer owns each run's state machine (transition.go): the attempts
// and their outcomes, acceptance, the target's final report (Feedback),
// the timeout of an accepted run (ExpireAccepted), takeover and cancel
// all go through it. Each transition is written fenced in the store with
// what it means for the task (its last status and, when the run uses up
// the schedule, done with no next fire), then told once to Config.OnRun,
// the overlap policy and the task's alerts.
//
// fire imports task, mapping and executors; it knows nothing of gocron or
// HTTP.
package fire
