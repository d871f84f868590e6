package schedule

import (
	"slices"
	"sort"
	"testing"
	"time"
)

// oracleDay is what the brute-force oracle knows about a calendar day.
type oracleDay struct {
	d, dim int
	m      time.Month
	wd     time.Weekday
}

// bruteFires computes the fires of match in (t0, t1] the slow way: it reads
// the wall clock every second, keeps the highest reading so far, and fires
// each scheduled wall time w at the first second whose highest reading
// reaches w. It shares no code with Next.
func bruteFires(loc *time.Location, t0, t1 int64, match func(day oracleDay, tod int) bool) []time.Time {
	n := int(t1 - t0 + 1)
	runMax := make([]int64, n)
	for i := range n {
		_, off := time.Unix(t0+int64(i), 0).In(loc).Zone()
		w := t0 + int64(i) + int64(off)
		if i > 0 {
			w = max(w, runMax[i-1])
		}
		runMax[i] = w
	}
	var fires []time.Time
	for w := runMax[0] + 1; w <= runMax[n-1]; w++ {
		u := time.Unix(w, 0).UTC()
		y, m, d := u.Date()
		day := oracleDay{d: d, m: m, wd: u.Weekday(), dim: time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()}
		if !match(day, int(w-floorDiv(w, 86400)*86400)) {
			continue
		}
		i := sort.Search(n, func(i int) bool { return runMax[i] >= w })
		f := time.Unix(t0+int64(i), 0)
		if len(fires) == 0 || !fires[len(fires)-1].Equal(f) {
			fires = append(fires, f)
		}
	}
	return fires
}

func hms(h, m, s int) int { return h*3600 + m*60 + s }

func TestNextMatchesBruteForce(t *testing.T) {
	t.Parallel()
	windows := []struct{ zone, around string }{
		{"America/New_York", "2026-03-08T07:00:00Z"},
		{"America/New_York", "2026-11-01T06:00:00Z"},
		{"Europe/Berlin", "2026-03-29T01:00:00Z"},
		{"Europe/Berlin", "2026-10-25T01:00:00Z"},
		{"America/Santiago", "2026-09-06T04:00:00Z"},
		{"America/Santiago", "2026-04-05T03:00:00Z"},
		{"Australia/Lord_Howe", "2026-10-03T15:30:00Z"},
		{"Australia/Lord_Howe", "2026-04-04T15:00:00Z"},
		{"Pacific/Apia", "2011-12-30T10:00:00Z"},     // skipped 30 December 2011
		{"America/Sitka", "1867-10-19T00:30:00Z"},    // clocks set back 24h
		{"America/New_York", "2038-03-14T07:00:00Z"}, // past the zone's table
	}
	in := func(v int, set ...int) bool { return slices.Contains(set, v) }
	schedules := []struct {
		text  string
		match func(day oracleDay, tod int) bool
	}{
		{"daily 00:30,01:30,02:00,02:15,02:30,03:00,23:30", func(_ oracleDay, tod int) bool {
			return in(tod, hms(0, 30, 0), hms(1, 30, 0), hms(2, 0, 0), hms(2, 15, 0), hms(2, 30, 0), hms(3, 0, 0), hms(23, 30, 0))
		}},
		{"cron */20 */15 0-3,23 * * *", func(_ oracleDay, tod int) bool {
			h := tod / 3600
			return tod%20 == 0 && tod/60%15 == 0 && (h <= 3 || h == 23)
		}},
		{"weekends 00:15,02:30:30", func(day oracleDay, tod int) bool {
			return (day.wd == time.Saturday || day.wd == time.Sunday) && in(tod, hms(0, 15, 0), hms(2, 30, 30))
		}},
		{"monthly 1,4,5,6,14,19,25,26,28,last 01:45,02:30,23:59:59", func(day oracleDay, tod int) bool {
			return (in(day.d, 1, 4, 5, 6, 14, 19, 25, 26, 28) || day.d == day.dim) && in(tod, hms(1, 45, 0), hms(2, 30, 0), hms(23, 59, 59))
		}},
		{"cron 0 30 0-3 5-10 * sun", func(day oracleDay, tod int) bool { // dom or dow
			return (day.d >= 5 && day.d <= 10 || day.wd == time.Sunday) && tod%3600 == 1800 && tod/3600 <= 3
		}},
		{"cron 0 15 1,2 */2 * sat,sun", func(day oracleDay, tod int) bool { // dom and dow
			return day.d%2 == 1 && (day.wd == time.Saturday || day.wd == time.Sunday) && in(tod, hms(1, 15, 0), hms(2, 15, 0))
		}},
	}
	for _, w := range windows {
		for _, sc := range schedules {
			t.Run(w.zone+"/"+w.around+"/"+sc.text, func(t *testing.T) {
				t.Parallel()
				s := mustParse(t, sc.text, w.zone)
				around := rfc(t, w.around)
				t0, t1 := around.Add(-36*time.Hour), around.Add(36*time.Hour)
				if _, o0 := t0.In(s.Location()).Zone(); func() bool { _, o1 := t1.In(s.Location()).Zone(); return o0 == o1 }() {
					t.Fatalf("window around %v has no offset change in %v", around, w.zone)
				}
				want := bruteFires(s.Location(), t0.Unix(), t1.Unix(), sc.match)
				var got []time.Time
				for f := s.Next(t0, time.Time{}); !f.IsZero() && !f.After(t1); f = s.Next(f, time.Time{}) {
					got = append(got, f)
				}
				if len(want) == 0 {
					t.Fatal("oracle found no fires; the window misses the schedule")
				}
				if !slices.EqualFunc(got, want, time.Time.Equal) {
					t.Errorf("fires differ\n got: %v\nwant: %v", got, want)
				}
			})
		}
	}
}
