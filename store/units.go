package store

import (
	"time"

	"cronsheet/task"
)

// UnixMS converts t to unix milliseconds, the unit drivers store times in;
// the zero time is 0.
func UnixMS(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// FromUnixMS converts unix milliseconds back to a UTC time; 0 is the zero
// time.
func FromUnixMS(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}

// CheckPark checks the arguments of Tasks.ParkTasks: an owner, and at most
// MaxStatusBatch tasks.
func CheckPark(owner string, ps []ParkParams) error {
	if owner == "" {
		return task.Invalid("owner", "required")
	}
	if len(ps) > MaxStatusBatch {
		return task.Invalid("tasks", "at most %d", MaxStatusBatch)
	}
	return nil
}

// CheckLimit rejects a page size that is not positive (task.ErrInvalid).
func CheckLimit(limit int) error {
	if limit <= 0 {
		return task.Invalid("limit", "must be positive, got %d", limit)
	}
	return nil
}
