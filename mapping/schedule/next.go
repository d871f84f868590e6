package schedule

import (
	"math/bits"
	"sort"
	"time"
)

// HorizonYears is how far ahead of its after argument Next searches a
// calendar schedule: a full 400-year Gregorian cycle, after which the
// calendar repeats exactly. Because Parse rejects rules that match no day of
// that cycle, every accepted calendar schedule fires within the horizon and
// Next never needs to give up on one.
const HorizonYears = 400

// horizonDays is HorizonYears in days (a 400-year cycle has 146097 days).
const horizonDays = 146097

// daySpec selects calendar days by month, day of month and weekday. The
// day-of-month and weekday tests combine the way Vixie cron combines them:
// when both are restricted (neither written starting with "*"), a day that
// passes either test matches (or); otherwise it must pass both.
type daySpec struct {
	months uint16 // bit m set: month m (1..12) allowed
	doms   uint32 // bit d set: day of month d (1..31) allowed
	last   bool   // the last day of each month is allowed too
	dows   uint8  // bit w set: weekday w (0 = Sunday) allowed
	or     bool   // Vixie rule: dom and dow both restricted
}

// match reports whether day d of a month with dim days, falling on weekday
// wd, is selected (the month itself already checked).
func (ds *daySpec) match(d, dim, wd int) bool {
	dom := ds.doms&(1<<d) != 0 || (ds.last && d == dim)
	dow := ds.dows&(1<<wd) != 0
	if ds.or {
		return dom || dow
	}
	return dom && dow
}

// todSet is the set of times of day (seconds since midnight, wall clock) a
// selected day fires at: an explicit sorted list for the named forms, or
// hour/minute/second bit sets for cron.
type todSet struct {
	list  []int32 // sorted, distinct; nil for cron
	hours uint64  // cron: bit h set for hour h
	mins  uint64  // cron: bit m set for minute m
	secs  uint64  // cron: bit s set for second s
}

// nextBit returns the lowest set bit of mask at or above from, or -1.
func nextBit(mask uint64, from int) int {
	if from >= 64 {
		return -1
	}
	x := mask >> uint(from)
	if x == 0 {
		return -1
	}
	return from + bits.TrailingZeros64(x)
}

// next returns the earliest time of day at or after from, if any.
func (ts *todSet) next(from int) (int, bool) {
	if ts.list != nil {
		i := sort.Search(len(ts.list), func(i int) bool { return int(ts.list[i]) >= from })
		if i == len(ts.list) {
			return 0, false
		}
		return int(ts.list[i]), true
	}
	h, m, s := from/3600, from/60%60, from%60
	for {
		nh := nextBit(ts.hours, h)
		if nh < 0 {
			return 0, false
		}
		if nh != h {
			h, m, s = nh, 0, 0
		}
		nm := nextBit(ts.mins, m)
		if nm < 0 {
			h, m, s = h+1, 0, 0
			continue
		}
		if nm != m {
			m, s = nm, 0
		}
		ns := nextBit(ts.secs, s)
		if ns < 0 {
			m, s = m+1, 0
			continue
		}
		return h*3600 + m*60 + ns, true
	}
}

// nextDays computes Next for the calendar forms. It walks the scheduled wall
// times in increasing order, starting at the highest wall reading already
// shown at after, skipping months, then days, then times of day by their
// sets; each wall time w maps to firstInstant(w), the first instant whose
// wall reading reaches w. That map never decreases, so the first mapped
// instant past after is the answer; this yields the gap, overlap and
// distinct-instant rules at once.
func (s *Schedule) nextDays(after time.Time) time.Time {
	from := maxWallSoFar(after, s.loc)
	day := floorDiv(from, secsPerDay)
	tod := int(from - day*secsPerDay)
	end := day + horizonDays
	for day <= end {
		y, m, d := civilFromDays(day)
		if s.days.months&(1<<m) == 0 {
			day, tod = nextMonthStart(y, m), 0
			continue
		}
		dim := daysIn(y, m)
		wd := weekdayOf(day)
		for d <= dim && !s.days.match(d, dim, wd) {
			d, day, wd, tod = d+1, day+1, (wd+1)%7, 0
		}
		if d > dim {
			continue // day is already the 1st of the next month
		}
		for {
			t, ok := s.tod.next(tod)
			if !ok {
				break
			}
			if inst := firstInstant(day*secsPerDay+int64(t), s.loc); inst.After(after) {
				return inst
			}
			tod = t + 1
		}
		day, tod = day+1, 0
	}
	return time.Time{}
}
