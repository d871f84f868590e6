package store

import "context"

// TargetUsers finds what names a target, so that a target in use is not
// deleted from under its tasks. Both drivers offer it (Product).
type TargetUsers interface {
	// TasksUsingTarget returns the ids of the rows' tasks (not jobs, not
	// flow steps, whose flows name their targets themselves) not deleted
	// whose targets or alert targets name id, in task id order, at most limit
	// (positive, else task.ErrInvalid), and how many there are in all.
	TasksUsingTarget(ctx context.Context, id string, limit int) (ids []string, total int, err error)
}
