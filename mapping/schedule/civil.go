package schedule

import "time"

// Civil (wall-clock) arithmetic. A wall time is counted in seconds since
// 1970-01-01 00:00:00 as if the zone were UTC; days are counted the same way.
// These helpers do not go through time.Date, whose choice of instant inside
// a DST gap or overlap is unspecified.

const secsPerDay = 86400

// floorDiv returns a/b rounded toward negative infinity (b > 0).
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b < 0 {
		q--
	}
	return q
}

// daysFromCivil returns the day number of y-m-d (proleptic Gregorian).
func daysFromCivil(y int64, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := floorDiv(y, 400)
	yoe := y - era*400
	mp := int64((m + 9) % 12)
	doy := (153*mp+2)/5 + int64(d) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// civilFromDays is the inverse of daysFromCivil.
func civilFromDays(z int64) (y int64, m, d int) {
	z += 719468
	era := floorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = int(doy - (153*mp+2)/5 + 1)
	if mp < 10 {
		m = int(mp + 3)
	} else {
		m = int(mp - 9)
	}
	y = yoe + era*400
	if m <= 2 {
		y++
	}
	return y, m, d
}

// weekdayOf returns the weekday of day number z (0 = Sunday).
func weekdayOf(z int64) int {
	// Day 0 (1970-01-01) was a Thursday.
	w := (z + 4) % 7
	if w < 0 {
		w += 7
	}
	return int(w)
}

func isLeap(y int64) bool {
	return y%4 == 0 && (y%100 != 0 || y%400 == 0)
}

// daysIn returns the number of days in month m of year y.
func daysIn(y int64, m int) int {
	switch m {
	case 2:
		if isLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// nextMonthStart returns the day number of the first day of the month after
// y-m.
func nextMonthStart(y int64, m int) int64 {
	if m == 12 {
		return daysFromCivil(y+1, 1, 1)
	}
	return daysFromCivil(y, m+1, 1)
}

// maxWallSoFar returns the highest wall reading shown at or before after, in
// whole seconds. It differs from after's own wall reading only inside a
// fall-back overlap, where the clock already showed later times before it
// was set back.
func maxWallSoFar(after time.Time, loc *time.Location) int64 {
	a := after.In(loc)
	_, off := a.Zone()
	m := a.Unix() + int64(off)
	if start, _ := a.ZoneBounds(); !start.IsZero() {
		prev := start.Unix() - 1
		_, poff := time.Unix(prev, 0).In(loc).Zone()
		if pm := prev + int64(poff); pm > m {
			m = pm
		}
	}
	return m
}

// firstInstant returns the first instant whose wall-clock reading in loc is
// at or after the wall time w. For a wall time that exists once this is that
// instant; in a fall-back overlap it is the first occurrence; in a
// spring-forward gap it is the end of the gap (the transition instant).
func firstInstant(w int64, loc *time.Location) time.Time {
	// Fast path: w exists with the offset guessed from its neighbourhood and
	// the zone period began long enough ago (48h > any offset jump) that no
	// earlier instant can have shown a later wall time.
	_, off := time.Unix(w, 0).In(loc).Zone()
	t := time.Unix(w-int64(off), 0).In(loc)
	if _, off2 := t.Zone(); off2 == off {
		start, _ := t.ZoneBounds()
		if start.IsZero() || t.Unix()-start.Unix() >= 2*secsPerDay {
			return t
		}
	}
	return firstInstantSlow(w, loc)
}

// firstInstantSlow walks the zone periods from one day before w (no UTC
// offset reaches 24h, so every earlier instant shows an earlier wall time)
// and returns the first instant whose wall reading reaches w.
func firstInstantSlow(w int64, loc *time.Location) time.Time {
	cur := w - secsPerDay
	for range 64 {
		t := time.Unix(cur, 0).In(loc)
		_, off := t.Zone()
		_, end := t.ZoneBounds()
		c := max(w-int64(off), cur)
		if end.IsZero() || c < end.Unix() {
			return time.Unix(c, 0).In(loc)
		}
		cur = end.Unix()
	}
	// Unreachable with real zone data: 64 transitions within two days.
	return time.Unix(cur, 0).In(loc)
}
