package store

import (
	"context"
	"time"
)

// TargetUsers finds what names a target, so that a target in use is not
// deleted from under its tasks. Both drivers offer it (Product).
//
// "In use" holds against writes racing the delete through holds and a
// tombstone, built from single-record inserts, reads and deletes only, so
// that it holds on MongoDB/FerretDB (no transactions, no atomic
// compare-and-set) as on SQLite:
//
//   - a writer that names target T (a row, a flow) first holds T
//     (HoldTargets: its hold is stored, then T's tombstone is read), then
//     checks that T exists, writes, and releases its hold;
//   - a delete of T first stores T's tombstone (BeginTargetDelete), then
//     counts T's holds and what names T (tasks, unsynced rows, flows),
//     deletes T when nothing does, and removes the tombstone.
//
// A writer that found no tombstone stored its hold before the tombstone
// was stored (the delete then sees the hold or, once it is released, the
// written record), or after it was removed (T is gone: the writer's check
// fails). Holds and tombstones older than GuardTTL are ignored: a crashed
// writer or delete leaves one behind.
type TargetUsers interface {
	// TasksUsingTarget returns the ids of the rows' tasks (not jobs, not
	// flow steps, whose flows name their targets themselves) not deleted
	// whose targets or alert targets name id, in task id order, at most limit
	// (positive, else task.ErrInvalid), and how many there are in all.
	TasksUsingTarget(ctx context.Context, id string, limit int) (ids []string, total int, err error)
	// HoldTargets stores holder's hold on each of ids at now, then fails
	// with task.ErrConflict when one of them has a tombstone younger than
	// GuardTTL (its delete is under way); the holds stay until
	// ReleaseTargets.
	HoldTargets(ctx context.Context, holder string, ids []string, now time.Time) error
	// ReleaseTargets removes holder's holds.
	ReleaseTargets(ctx context.Context, holder string) error
	// BeginTargetDelete stores id's tombstone at now; one younger than
	// GuardTTL already there is task.ErrConflict (another delete is under
	// way).
	BeginTargetDelete(ctx context.Context, id string, now time.Time) error
	// TargetHolds counts the holds on id stored at or after since.
	TargetHolds(ctx context.Context, id string, since time.Time) (int, error)
	// EndTargetDelete removes id's tombstone.
	EndTargetDelete(ctx context.Context, id string) error
}

// GuardTTL is how long a target hold or tombstone counts (TargetUsers): a
// write or a delete takes well under a second; one left by a crash stops
// counting after this.
const GuardTTL = time.Minute
