// Package patrol holds the loops of the memos design (design note 000,
// docs/SEEDS.md) that turn edited rows into armed schedules:
//
//   - Sync: rows with is_fetched=0 → mapping → validation → upsert time_task;
//     an invalid row gets is_active=-1 and its error.
//   - Publish: claim enabled, unclaimed tasks atomically and arm them.
//   - Reconcile (the delete and ensure patrols): disarm and release tasks
//     that were disabled, finished or deleted; release tasks claimed here but
//     not armed here; disarm what this node armed but no longer holds;
//     release claims whose lease expired (their node died); purge deleted
//     tasks.
//   - Renew: extend the leases of this node's claims.
//
// Each is a struct with RunOnce(ctx) returning counts; Runner drives them
// with a jittered ticker and wakes them at once after an API edit.
//
// patrol imports task, store (for parameter types) and mapping only.
package patrol
