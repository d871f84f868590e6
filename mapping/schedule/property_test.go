package schedule

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

// genSchedule writes a random valid schedule text in a random (not
// canonical) spelling: mixed case, extra spaces, full names, ranges,
// unsorted and repeated list items.
func genSchedule(r *rand.Rand) string {
	pick := func(opts ...string) string { return opts[r.IntN(len(opts))] }
	var body string
	switch r.IntN(9) {
	case 0, 1:
		body = pick("every", "in") + " " + genDuration(r)
	case 2:
		body = "daily " + genTimes(r)
	case 3:
		body = pick("weekdays", "weekends") + " " + genTimes(r)
	case 4:
		days := []string{"mon", "tue", "wed", "thu", "fri", "sat", "sun", "monday", "sunday", "mon-fri", "fri-mon", "sat-sun"}
		body = "weekly " + genList(r, days, 1+r.IntN(4)) + " " + genTimes(r)
	case 5:
		days := []string{"1", "2", "15", "28", "29", "30", "31", "last", "1-5", "10-12", "28-31"}
		body = "monthly " + genList(r, days, 1+r.IntN(5)) + " " + genTimes(r)
	case 6:
		body = fmt.Sprintf("at %04d-%02d-%02d %s", 2020+r.IntN(20), 1+r.IntN(12), 1+r.IntN(28), genTime(r))
	default:
		body = genCron(r)
	}
	if r.IntN(3) == 0 {
		body += " tz " + pick("UTC", "Europe/Berlin", "America/New_York", "Asia/Shanghai", "Australia/Lord_Howe", "America/Santiago")
	}
	return mangle(r, body)
}

func genDuration(r *rand.Rand) string {
	switch r.IntN(4) {
	case 0:
		return fmt.Sprintf("%ds", 1+r.IntN(200000))
	case 1:
		return fmt.Sprintf("%dm", 1+r.IntN(3000))
	case 2:
		return fmt.Sprintf("%dh%dm", r.IntN(48), 1+r.IntN(59))
	}
	return fmt.Sprintf("%dd", 1+r.IntN(366))
}

func genTime(r *rand.Rand) string {
	h, m, s := r.IntN(24), r.IntN(60), 0
	if r.IntN(3) == 0 {
		s = r.IntN(60)
	}
	if r.IntN(2) == 0 {
		return fmt.Sprintf("%d:%02d:%02d", h, m, s)
	}
	return fmt.Sprintf("%02d:%02d", h, m)
}

func genTimes(r *rand.Rand) string {
	times := make([]string, 1+r.IntN(4))
	for i := range times {
		times[i] = genTime(r)
	}
	if r.IntN(4) == 0 {
		times = append(times, times[0]) // a duplicate
	}
	return strings.Join(times, ",")
}

func genList(r *rand.Rand, items []string, n int) string {
	out := make([]string, n)
	for i := range out {
		out[i] = items[r.IntN(len(items))]
	}
	return strings.Join(out, ",")
}

func genCron(r *rand.Rand) string {
	field := func(lo, hi int, names []string) string {
		v := func() string {
			x := lo + r.IntN(hi-lo+1)
			if names != nil && r.IntN(2) == 0 {
				return names[x-lo]
			}
			return fmt.Sprint(x)
		}
		switch r.IntN(7) {
		case 0:
			return "*"
		case 1:
			return fmt.Sprintf("*/%d", 1+r.IntN(hi-lo+1))
		case 2:
			a := lo + r.IntN(hi-lo+1)
			b := a + r.IntN(hi-a+1)
			return fmt.Sprintf("%d-%d/%d", a, b, 1+r.IntN(5))
		case 3:
			return v() + "," + v() + "," + v()
		case 4:
			a := lo + r.IntN(hi-lo+1)
			return fmt.Sprintf("%d-%d", a, a+r.IntN(hi-a+1))
		}
		return v()
	}
	months := []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}
	dows := []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}
	return strings.Join([]string{"cron", field(0, 59, nil), field(0, 59, nil), field(0, 23, nil),
		field(1, 31, nil), field(1, 12, months), field(0, 6, dows)}, " ")
}

// mangle changes case and spacing without changing the meaning.
func mangle(r *rand.Rand, s string) string {
	words := strings.Fields(s)
	for i, w := range words {
		if i > 0 && strings.EqualFold(words[i-1], "tz") {
			continue // zone names are case-sensitive
		}
		if r.IntN(4) == 0 {
			words[i] = strings.ToUpper(w)
		}
	}
	sep := strings.Repeat(" ", 1+r.IntN(3))
	return strings.Repeat(" ", r.IntN(2)) + strings.Join(words, sep) + strings.Repeat("\t", r.IntN(2))
}

func TestCanonicalRoundTripProperty(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(20260308, 1))
	afters := []time.Time{
		time.Date(2026, 3, 7, 22, 0, 0, 0, time.UTC),
		time.Date(2026, 10, 24, 22, 0, 0, 0, time.UTC),
		time.Date(2026, 10, 31, 23, 0, 0, 0, time.UTC),
		time.Date(2027, 2, 27, 0, 0, 0, 0, time.UTC),
	}
	for i := range 3000 {
		text := genSchedule(r)
		s, err := Parse(text, "Europe/Berlin")
		if err != nil {
			if strings.HasPrefix(strings.ToLower(strings.TrimSpace(text)), "cron") && strings.Contains(err.Error(), "never occurs") {
				continue // a random cron may name a day its months lack
			}
			t.Fatalf("case %d: Parse(%q): %v", i, text, err)
		}
		again, err := Parse(s.String(), "Europe/Berlin")
		if err != nil {
			t.Fatalf("case %d: Parse(%q) = %q, which fails to parse: %v", i, text, s, err)
		}
		if again.String() != s.String() {
			t.Fatalf("case %d: canonical %q re-parses as %q", i, s, again)
		}
		for _, after := range afters {
			anchor := after.Add(-time.Duration(r.IntN(100000)) * time.Second)
			a, b := s.NextN(after, anchor, 20), again.NextN(after, anchor, 20)
			if !slices.EqualFunc(a, b, time.Time.Equal) {
				t.Fatalf("case %d: %q fires\n%v\nbut canonical %q fires\n%v", i, text, a, s, b)
			}
			if len(a) == 0 && !s.IsOnce() {
				t.Fatalf("case %d: %q has no fires after %v", i, s, after)
			}
			prev := after
			for _, f := range a {
				if !f.After(prev) {
					t.Fatalf("case %d: %q fire %v not after %v", i, s, f, prev)
				}
				prev = f
			}
		}
	}
}
