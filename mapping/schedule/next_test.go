package schedule

import (
	"testing"
	"time"
)

// mustParse parses text or fails the test.
func mustParse(t testing.TB, text, tz string) *Schedule {
	t.Helper()
	s, err := Parse(text, tz)
	if err != nil {
		t.Fatalf("Parse(%q, %q): %v", text, tz, err)
	}
	return s
}

// rfc parses an RFC 3339 instant or fails the test.
func rfc(t testing.TB, v string) time.Time {
	t.Helper()
	tm, err := time.Parse(time.RFC3339, v)
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

// checkFires compares NextN(after, anchor, len(want)) with want (RFC 3339)
// and checks that every fire is strictly after the one before.
func checkFires(t *testing.T, s *Schedule, after, anchor time.Time, want []string) {
	t.Helper()
	got := s.NextN(after, anchor, len(want))
	if len(got) != len(want) {
		t.Fatalf("%q NextN(%v) = %v, want %v", s, after, got, want)
	}
	prev := after
	for i, g := range got {
		if w := rfc(t, want[i]); !g.Equal(w) {
			t.Errorf("%q fire %d = %v, want %v", s, i, g.Format(time.RFC3339), want[i])
		}
		if !g.After(prev) {
			t.Errorf("%q fire %d = %v, not after %v", s, i, g, prev)
		}
		if g.Location() != s.Location() {
			t.Errorf("%q fire %d in %v, want %v", s, i, g.Location(), s.Location())
		}
		prev = g
	}
}

// New York 2026: clocks jump 02:00 EST -> 03:00 EDT on 8 March and fall back
// 02:00 EDT -> 01:00 EST on 1 November. Berlin 2026: 02:00 CET -> 03:00 CEST
// on 29 March, 03:00 CEST -> 02:00 CET on 25 October. All four are Sundays.
func TestNextDST(t *testing.T) {
	t.Parallel()
	const ny, berlin = "America/New_York", "Europe/Berlin"
	tests := []struct {
		name, text, tz, after string
		want                  []string
	}{
		// Spring-forward gap: a missing wall time fires at the end of the gap.
		{"daily gap ny", "daily 02:30", ny, "2026-03-07T12:00:00-05:00",
			[]string{"2026-03-08T03:00:00-04:00", "2026-03-09T02:30:00-04:00"}},
		{"daily gap berlin", "daily 02:30", berlin, "2026-03-28T12:00:00+01:00",
			[]string{"2026-03-29T03:00:00+02:00", "2026-03-30T02:30:00+02:00"}},
		{"daily gap two times one fire", "daily 02:15,02:45", ny, "2026-03-07T12:00:00-05:00",
			[]string{"2026-03-08T03:00:00-04:00", "2026-03-09T02:15:00-04:00", "2026-03-09T02:45:00-04:00"}},
		{"daily gap and gap end one fire", "daily 02:30,03:00,03:30", berlin, "2026-03-29T00:00:00+01:00",
			[]string{"2026-03-29T03:00:00+02:00", "2026-03-29T03:30:00+02:00", "2026-03-30T02:30:00+02:00"}},
		{"weekly gap ny", "weekly sun 02:30", ny, "2026-03-01T12:00:00-05:00",
			[]string{"2026-03-08T03:00:00-04:00", "2026-03-15T02:30:00-04:00"}},
		{"weekly gap berlin", "weekly sun 02:30", berlin, "2026-03-23T00:00:00+01:00",
			[]string{"2026-03-29T03:00:00+02:00", "2026-04-05T02:30:00+02:00"}},
		{"monthly gap ny", "monthly 8 02:30", ny, "2026-03-01T00:00:00-05:00",
			[]string{"2026-03-08T03:00:00-04:00", "2026-04-08T02:30:00-04:00"}},
		{"monthly gap berlin", "monthly 29 02:30", berlin, "2026-03-01T00:00:00+01:00",
			[]string{"2026-03-29T03:00:00+02:00", "2026-04-29T02:30:00+02:00"}},
		{"cron gap ny", "cron 0 30 2 * * *", ny, "2026-03-07T12:00:00-05:00",
			[]string{"2026-03-08T03:00:00-04:00", "2026-03-09T02:30:00-04:00"}},
		{"cron gap berlin", "cron 0 30 2 * * sun", berlin, "2026-03-23T00:00:00+01:00",
			[]string{"2026-03-29T03:00:00+02:00", "2026-04-05T02:30:00+02:00"}},
		{"cron gap minutes merge", "cron 0 */20 * * * *", ny, "2026-03-08T01:30:00-05:00",
			[]string{"2026-03-08T01:40:00-05:00", "2026-03-08T03:00:00-04:00", "2026-03-08T03:20:00-04:00"}},
		{"cron gap seconds", "cron */30 59 1,2 * * *", berlin, "2026-03-29T01:59:10+01:00",
			[]string{"2026-03-29T01:59:30+01:00", "2026-03-29T03:00:00+02:00", "2026-03-30T01:59:00+02:00"}},
		{"at in gap", "at 2026-03-08 02:30", ny, "2026-01-01T00:00:00Z",
			[]string{"2026-03-08T03:00:00-04:00"}},
		// Fall-back overlap: a repeated wall time fires once, at its first occurrence.
		{"daily overlap ny", "daily 01:30", ny, "2026-10-31T12:00:00-04:00",
			[]string{"2026-11-01T01:30:00-04:00", "2026-11-02T01:30:00-05:00"}},
		{"daily overlap berlin", "daily 02:30", berlin, "2026-10-24T12:00:00+02:00",
			[]string{"2026-10-25T02:30:00+02:00", "2026-10-26T02:30:00+01:00"}},
		{"daily overlap after first pass", "daily 01:30", ny, "2026-11-01T01:40:00-04:00",
			[]string{"2026-11-02T01:30:00-05:00"}},
		{"daily overlap during second pass", "daily 01:30", ny, "2026-11-01T01:10:00-05:00",
			[]string{"2026-11-02T01:30:00-05:00"}},
		{"daily overlap second pass later time", "daily 01:30,01:50", ny, "2026-11-01T01:40:00-04:00",
			[]string{"2026-11-01T01:50:00-04:00", "2026-11-02T01:30:00-05:00"}},
		{"weekly overlap ny", "weekly sun 01:30", ny, "2026-10-26T00:00:00-04:00",
			[]string{"2026-11-01T01:30:00-04:00", "2026-11-08T01:30:00-05:00"}},
		{"weekly overlap berlin", "weekly sun 02:30", berlin, "2026-10-19T00:00:00+02:00",
			[]string{"2026-10-25T02:30:00+02:00", "2026-11-01T02:30:00+01:00"}},
		{"monthly overlap ny", "monthly 1 01:30", ny, "2026-10-15T00:00:00-04:00",
			[]string{"2026-11-01T01:30:00-04:00", "2026-12-01T01:30:00-05:00"}},
		{"monthly overlap berlin", "monthly 25 02:30", berlin, "2026-10-01T00:00:00+02:00",
			[]string{"2026-10-25T02:30:00+02:00", "2026-11-25T02:30:00+01:00"}},
		{"cron overlap ny", "cron 0 0,30 1 * * *", ny, "2026-11-01T00:45:00-04:00",
			[]string{"2026-11-01T01:00:00-04:00", "2026-11-01T01:30:00-04:00", "2026-11-02T01:00:00-05:00"}},
		{"cron overlap berlin hourly", "cron 0 0 * * * *", berlin, "2026-10-25T00:30:00+02:00",
			[]string{"2026-10-25T01:00:00+02:00", "2026-10-25T02:00:00+02:00", "2026-10-25T03:00:00+01:00", "2026-10-25T04:00:00+01:00"}},
		{"at in overlap", "at 2026-11-01 01:30", ny, "2026-01-01T00:00:00Z",
			[]string{"2026-11-01T01:30:00-04:00"}},
		// Chile moves its clocks at midnight: the gap and overlap cross days.
		{"midnight gap santiago", "daily 00:30", "America/Santiago", "2026-09-05T12:00:00-04:00",
			[]string{"2026-09-06T01:00:00-03:00", "2026-09-07T00:30:00-03:00"}},
		{"midnight overlap santiago", "daily 23:30", "America/Santiago", "2026-04-04T12:00:00-03:00",
			[]string{"2026-04-04T23:30:00-03:00", "2026-04-05T23:30:00-04:00"}},
		// Lord Howe shifts by 30 minutes.
		{"half hour gap lord howe", "daily 02:15", "Australia/Lord_Howe", "2026-10-03T12:00:00+10:30",
			[]string{"2026-10-04T02:30:00+11:00", "2026-10-05T02:15:00+11:00"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := mustParse(t, tt.text, tt.tz)
			checkFires(t, s, rfc(t, tt.after), time.Time{}, tt.want)
		})
	}
}

func TestNextCalendar(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text, after string
		want              []string
	}{
		{"monthly 31 skips short months", "monthly 31 12:00", "2026-01-31T12:00:00Z",
			[]string{"2026-03-31T12:00:00Z", "2026-05-31T12:00:00Z", "2026-07-31T12:00:00Z", "2026-08-31T12:00:00Z", "2026-10-31T12:00:00Z"}},
		{"monthly 29 skips common feb", "monthly 29 00:00", "2027-01-30T00:00:00Z",
			[]string{"2027-03-29T00:00:00Z"}},
		{"monthly 29 leap feb", "monthly 29 00:00", "2028-01-30T00:00:00Z",
			[]string{"2028-02-29T00:00:00Z", "2028-03-29T00:00:00Z"}},
		{"monthly last common feb", "monthly last 18:00", "2027-02-01T00:00:00Z",
			[]string{"2027-02-28T18:00:00Z", "2027-03-31T18:00:00Z", "2027-04-30T18:00:00Z"}},
		{"monthly last leap feb", "monthly last 18:00", "2028-02-01T00:00:00Z",
			[]string{"2028-02-29T18:00:00Z", "2028-03-31T18:00:00Z"}},
		{"monthly 1,last", "monthly 1,last 09:00", "2026-04-15T00:00:00Z",
			[]string{"2026-04-30T09:00:00Z", "2026-05-01T09:00:00Z", "2026-05-31T09:00:00Z"}},
		{"weekdays", "weekdays 09:00", "2026-03-06T10:00:00Z", // a Friday
			[]string{"2026-03-09T09:00:00Z", "2026-03-10T09:00:00Z"}},
		{"weekends", "weekends 10:00", "2026-03-06T10:00:00Z",
			[]string{"2026-03-07T10:00:00Z", "2026-03-08T10:00:00Z", "2026-03-14T10:00:00Z"}},
		{"weekly", "weekly mon,thu 09:00", "2026-03-09T09:00:00Z",
			[]string{"2026-03-12T09:00:00Z", "2026-03-16T09:00:00Z"}},
		{"daily list", "daily 08:00,17:30:15", "2026-03-09T08:00:00Z",
			[]string{"2026-03-09T17:30:15Z", "2026-03-10T08:00:00Z"}},
		{"sub-second after", "daily 08:00", "2026-03-09T07:59:59.999999999Z",
			[]string{"2026-03-09T08:00:00Z"}},
		{"cron every 10s", "cron */10 * * * * *", "2026-03-09T08:00:05Z",
			[]string{"2026-03-09T08:00:10Z", "2026-03-09T08:00:20Z"}},
		{"cron crosses year", "cron 0 0 0 1 1 *", "2026-06-01T00:00:00Z",
			[]string{"2027-01-01T00:00:00Z", "2028-01-01T00:00:00Z"}},
		{"cron feb 29", "cron 0 0 0 29 2 *", "2096-03-01T00:00:00Z",
			[]string{"2104-02-29T00:00:00Z"}},
		{"cron vixie or", "cron 0 0 9 1 * mon", "2026-05-30T00:00:00Z", // 1 June 2026 is a Monday
			[]string{"2026-06-01T09:00:00Z", "2026-06-08T09:00:00Z", "2026-06-15T09:00:00Z", "2026-06-22T09:00:00Z", "2026-06-29T09:00:00Z", "2026-07-01T09:00:00Z"}},
		{"cron vixie and with star", "cron 0 0 9 */2 * mon", "2026-06-01T10:00:00Z",
			[]string{"2026-06-15T09:00:00Z", "2026-06-29T09:00:00Z", "2026-07-13T09:00:00Z"}},
		{"cron rare feb 29 sunday", "cron 0 0 0 29 2 */7", "2026-01-01T00:00:00Z",
			[]string{"2032-02-29T00:00:00Z", "2060-02-29T00:00:00Z"}},
		{"cron last second of year", "cron 59 59 23 31 12 *", "2026-12-31T23:59:59Z",
			[]string{"2027-12-31T23:59:59Z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			checkFires(t, mustParse(t, tt.text, "UTC"), rfc(t, tt.after), time.Time{}, tt.want)
		})
	}
}

func TestNextOnceAndIntervals(t *testing.T) {
	t.Parallel()
	anchor := rfc(t, "2026-03-08T00:30:00-05:00") // New York, before the gap
	tests := []struct {
		name, text, after string
		want              []string
	}{
		{"at in the past", "at 2026-01-01 00:00", "2026-03-01T00:00:00Z", nil},
		{"at exactly after", "at 2026-03-01 00:00 tz UTC", "2026-03-01T00:00:00Z", nil},
		{"at future fires once", "at 2026-12-01 15:00 tz UTC", "2026-03-01T00:00:00Z", []string{"2026-12-01T15:00:00Z"}},
		{"in fires once", "in 30m", "2026-03-08T00:00:00-05:00", []string{"2026-03-08T01:00:00-05:00"}},
		{"in passed", "in 30m", "2026-03-08T01:00:00-05:00", nil},
		{"every before anchor", "every 1h", "2026-01-01T00:00:00Z",
			[]string{"2026-03-08T01:30:00-05:00", "2026-03-08T03:30:00-04:00", "2026-03-08T04:30:00-04:00"}},
		{"every elapsed over gap", "every 1h", "2026-03-08T01:30:00-05:00",
			[]string{"2026-03-08T03:30:00-04:00", "2026-03-08T04:30:00-04:00"}},
		{"every at anchor", "every 90m", "2026-03-08T00:30:00-05:00",
			[]string{"2026-03-08T02:00:00-05:00", "2026-03-08T04:30:00-04:00"}},
		{"every 1d is 24h not wall", "every 1d", "2026-03-08T00:30:00-05:00",
			[]string{"2026-03-09T01:30:00-04:00", "2026-03-10T01:30:00-04:00"}},
		{"every far after", "every 7d", "2126-03-08T00:00:00Z", // 36524 days = 5217 weeks + 5 days
			[]string{"2126-03-10T05:30:00Z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := mustParse(t, tt.text, "America/New_York")
			checkFires(t, s, rfc(t, tt.after), anchor, tt.want)
			if len(tt.want) == 0 && !s.Next(rfc(t, tt.after), anchor).IsZero() {
				t.Errorf("Next = %v, want zero time", s.Next(rfc(t, tt.after), anchor))
			}
		})
	}
}

func TestIntervalsCountFromTheWholeSecondAfterTheAnchor(t *testing.T) {
	t.Parallel()
	anchor := time.Date(2026, 1, 1, 0, 0, 0, 500, time.UTC)
	phase := time.Date(2026, 1, 1, 0, 0, 1, 0, time.UTC)
	if got := Phase(anchor); !got.Equal(phase) {
		t.Fatalf("Phase(%v) = %v, want %v", anchor, got, phase)
	}
	if got := Phase(phase); !got.Equal(phase) {
		t.Fatalf("Phase of a whole second = %v, want it unchanged", got)
	}
	every := mustParse(t, "every 1s", "")
	got := every.NextN(anchor.Add(1500*time.Millisecond), anchor, 2)
	want := []time.Time{phase.Add(time.Second), phase.Add(2 * time.Second)}
	for i := range want {
		if i >= len(got) || !got[i].Equal(want[i]) {
			t.Fatalf("every 1s: NextN = %v, want %v", got, want)
		}
	}
	in := mustParse(t, "in 30s", "")
	if got := in.Next(anchor, anchor); !got.Equal(phase.Add(30 * time.Second)) {
		t.Fatalf("in 30s: Next = %v, want %v", got, phase.Add(30*time.Second))
	}
	// A calendar schedule ignores the phase: its first slot is the first
	// whole second strictly after the activation instant.
	cron := mustParse(t, "cron * * * * * *", "")
	if got := cron.Next(anchor, anchor); !got.Equal(phase) {
		t.Fatalf("every second, activated at %v: Next = %v, want %v", anchor, got, phase)
	}
}

func TestNextEdgeArguments(t *testing.T) {
	t.Parallel()
	s := mustParse(t, "daily 08:00", "")
	if got := s.NextN(time.Now(), time.Time{}, 0); got != nil {
		t.Errorf("NextN(n=0) = %v, want nil", got)
	}
	if got := s.Next(time.Unix(1<<50, 0), time.Time{}); !got.IsZero() {
		t.Errorf("Next(far future) = %v, want zero", got)
	}
	var nilSched *Schedule
	if got := nilSched.Next(time.Now(), time.Now()); !got.IsZero() {
		t.Errorf("nil Next = %v, want zero", got)
	}
	// The zero time (year 1) works as an after.
	if got := s.Next(time.Time{}, time.Time{}); !got.Equal(time.Date(1, 1, 1, 8, 0, 0, 0, time.UTC)) {
		t.Errorf("Next(zero) = %v", got)
	}
}

func TestInstant(t *testing.T) {
	at := time.Date(2026, 12, 1, 15, 0, 0, 123_000_000, time.FixedZone("X", 3600))
	s := Instant(at)
	if !s.IsOnce() || s.String() != "once at 2026-12-01T14:00:00.123Z" {
		t.Errorf("Instant = %q once=%v", s.String(), s.IsOnce())
	}
	if got := s.Next(at.Add(-time.Millisecond), time.Time{}); !got.Equal(at) {
		t.Errorf("Next before the instant = %v, want %v", got, at)
	}
	if got := s.Next(at, time.Time{}); !got.IsZero() {
		t.Errorf("Next at the instant = %v, want none (strictly after)", got)
	}
	if got := s.NextN(time.Time{}, time.Time{}, 3); len(got) != 1 {
		t.Errorf("NextN = %v, want the one instant", got)
	}
}
