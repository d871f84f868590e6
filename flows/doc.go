// Package flows runs task flows (design 001): each trigger of a flow makes
// an execution whose record in the store says what is next. A step is
// delivered through the fire path (the firer's Trigger, so the same
// ledger, fences, retries and feedback as tasks) on a hidden step task,
// at a slot fixed in the execution before it fires: repeating a trigger
// is a no-op of the ledger's unique key (task_id, slot, target), so any
// node may resume an execution after a crash and each step fires once.
// The engine learns outcomes from the firer's run changes (OnRun) and, as
// a safety net, by reading the ledger for every running execution
// periodically.
//
// It imports task and store only; server wires it to the firer.
package flows
