package task

import "time"

// The instants a schedule, a job or a row may name, in milliseconds since
// the Unix epoch: from the epoch to the last millisecond of year 9999 (the
// last year RFC 3339 can write). Stores keep instants as milliseconds since
// the epoch, and 0 there means "none", so an earlier instant would be read
// back as no time at all, or as a negative number nothing ever fires at.
const (
	// MinInstantMilli is the earliest instant accepted as input: the epoch.
	MinInstantMilli = 0
	// MaxInstantMilli is the latest instant accepted as input:
	// 9999-12-31T23:59:59.999Z.
	MaxInstantMilli = 253402300799999
)

// CheckInstant returns a *ValidationError naming field when t lies outside
// [MinInstantMilli, MaxInstantMilli], and nil otherwise. The zero time is
// out of range too: callers handle "not given" before calling it.
func CheckInstant(field string, t time.Time) error {
	lo, hi := time.UnixMilli(MinInstantMilli).UTC(), time.UnixMilli(MaxInstantMilli).UTC()
	if t.Before(lo) || t.After(hi) {
		return Invalid(field, "%s is out of range: give a time from %s to %s",
			t.UTC().Format(time.RFC3339Nano), lo.Format(time.RFC3339), hi.Format(time.RFC3339))
	}
	return nil
}
