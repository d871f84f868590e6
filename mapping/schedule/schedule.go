package schedule

import (
	"strconv"
	"strings"
	"time"
)

// kind tells which family a Schedule belongs to.
type kind uint8

const (
	kindEvery   kind = iota // every D: anchor+D, anchor+2D, ...
	kindIn                  // in D: once at anchor+D
	kindAt                  // at DATE TIME: once at a wall time
	kindDays                // daily, weekdays, weekends, weekly, monthly, cron
	kindInstant             // Instant: once at an exact instant (not parsed)
)

// Schedule is a parsed schedule: its canonical text, its zone and the rule
// that yields its fire instants. Build one with Parse. A Schedule is
// immutable and safe for concurrent use.
type Schedule struct {
	text string
	loc  *time.Location
	kind kind
	secs int64     // kindEvery, kindIn: the interval; kindAt: the wall time
	days daySpec   // kindDays: which calendar days fire
	tod  todSet    // kindDays: which times of those days fire
	at   time.Time // kindInstant: the instant
}

// Instant returns the schedule that fires once, at exactly at (to the
// nanosecond; jobs' due times are milliseconds). It is built, not parsed:
// its text, "once at " and at in RFC 3339, is for display and Parse does
// not accept it.
func Instant(at time.Time) *Schedule {
	at = at.UTC()
	return &Schedule{text: "once at " + at.Format(time.RFC3339Nano), loc: time.UTC, kind: kindInstant, at: at}
}

// ParseError reports why Parse rejected a text.
//
// Pos is the 1-based position of the offending word, counting
// whitespace-separated words from the start of the text; a comma list is one
// word even when spaces follow its commas. For a missing word, Pos is the
// position where that word was expected. Pos is 0 when the error concerns the
// whole text (too long) or the default zone rather than a word.
type ParseError struct {
	Pos      int      // 1-based word position; 0 = the whole text
	Word     string   // the offending word or list item; "" when missing
	Expected []string // what would have been accepted there, if known
	Msg      string   // what is wrong, e.g. "unknown word"
	Suggest  string   // the accepted word Word is a likely typo of, if any
}

// Error formats the error as
// `unknown word "dayly" at 1; did you mean "daily"?; expected every, daily, ...`.
func (e *ParseError) Error() string {
	var b strings.Builder
	b.WriteString(e.Msg)
	if e.Word != "" {
		b.WriteByte(' ')
		b.WriteString(strconv.Quote(e.Word))
	}
	if e.Pos > 0 {
		b.WriteString(" at ")
		b.WriteString(strconv.Itoa(e.Pos))
	}
	if e.Suggest != "" {
		b.WriteString("; did you mean ")
		b.WriteString(strconv.Quote(e.Suggest))
		b.WriteByte('?')
	}
	if len(e.Expected) > 0 {
		b.WriteString("; expected ")
		b.WriteString(strings.Join(e.Expected, ", "))
	}
	return b.String()
}

// String returns the schedule's canonical text. Parse(s.String(), tz)
// yields a schedule with the same text and the same fires.
func (s *Schedule) String() string { return s.text }

// Location returns the zone the schedule's wall-clock times are read in:
// the tz suffix when the text has one, else the default zone given to Parse.
func (s *Schedule) Location() *time.Location { return s.loc }

// IsOnce reports whether the schedule fires at most once (the "at" and "in"
// forms, and Instant).
func (s *Schedule) IsOnce() bool {
	return s.kind == kindAt || s.kind == kindIn || s.kind == kindInstant
}

// Next returns the first fire instant strictly after after, in the
// schedule's location, or the zero time when there is none. anchor is the
// instant the schedule became active; only "every" and "in" use it, and
// they count from Phase(anchor), so their slots are whole seconds.
//
// Calendar forms look at most HorizonYears ahead of after; every schedule
// Parse accepts fires within that horizon, so a zero result means the
// schedule is a one-shot that has passed. after must lie within about a
// million years of 1970; beyond that Next returns the zero time.
func (s *Schedule) Next(after, anchor time.Time) time.Time {
	if s == nil || outOfRange(after) {
		return time.Time{}
	}
	switch s.kind {
	case kindEvery:
		if outOfRange(anchor) {
			return time.Time{}
		}
		return s.nextEvery(after, Phase(anchor))
	case kindIn:
		if outOfRange(anchor) {
			return time.Time{}
		}
		t := time.Unix(Phase(anchor).Unix()+s.secs, 0)
		if t.After(after) {
			return t.In(s.loc)
		}
		return time.Time{}
	case kindAt:
		if t := firstInstant(s.secs, s.loc); t.After(after) {
			return t
		}
		return time.Time{}
	case kindInstant:
		if s.at.After(after) {
			return s.at
		}
		return time.Time{}
	}
	return s.nextDays(after)
}

// Phase returns the whole second at or after anchor: where "every" and
// "in" count from, so an interval's slots are whole seconds and its first
// fire is never less than one interval after the activation. (The
// activation instant itself stays exact: slots of any schedule lie strictly
// after it, so a slot in the same second as a sub-second activation, but
// after it, fires.)
func Phase(anchor time.Time) time.Time {
	p := anchor.Truncate(time.Second)
	if p.Before(anchor) {
		p = p.Add(time.Second)
	}
	return p
}

// NextN returns the first n fire instants strictly after after, in
// increasing order; fewer when the schedule runs out (a one-shot), and nil
// when n <= 0.
func (s *Schedule) NextN(after, anchor time.Time, n int) []time.Time {
	if n <= 0 {
		return nil
	}
	out := make([]time.Time, 0, min(n, 64))
	for len(out) < n {
		t := s.Next(after, anchor)
		if t.IsZero() {
			break
		}
		out = append(out, t)
		after = t
	}
	return out
}

// maxAbsUnix bounds the instants Next works with (about ±1.1 million years
// around 1970), far inside int64 seconds, so no arithmetic overflows.
const maxAbsUnix = 1 << 45

func outOfRange(t time.Time) bool {
	u := t.Unix()
	return u > maxAbsUnix || u < -maxAbsUnix
}

// nextEvery returns anchor+k*interval for the smallest k >= 1 that lands
// strictly after after. Intervals are whole seconds of elapsed time.
func (s *Schedule) nextEvery(after, anchor time.Time) time.Time {
	d := s.secs
	ds := after.Unix() - anchor.Unix()
	if after.Nanosecond() < anchor.Nanosecond() {
		ds-- // elapsed time is ds seconds plus a fraction in [0, 1)
	}
	k := int64(1)
	if ds >= 0 {
		k = ds/d + 1
	}
	return time.Unix(anchor.Unix()+k*d, int64(anchor.Nanosecond())).In(s.loc)
}
