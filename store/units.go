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

// CheckLimit rejects a page size that is not positive (task.ErrInvalid).
func CheckLimit(limit int) error {
	if limit <= 0 {
		return task.Invalid("limit", "must be positive, got %d", limit)
	}
	return nil
}
