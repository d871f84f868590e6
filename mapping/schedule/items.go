package schedule

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Masks for the named calendar forms.
const (
	allMonths   uint16 = 0x1FFE     // bits 1..12
	allDoms     uint32 = 0xFFFFFFFE // bits 1..31
	allDows     uint8  = 0x7F       // bits 0..6 (Sunday = 0)
	weekdayDows uint8  = 0x3E       // Monday..Friday
	weekendDows uint8  = 0x41       // Saturday, Sunday
)

func durationExpected() []string {
	return []string{"a number with unit s, m, h or d (e.g. 30s, 5m, 2h, 1d, 1h30m)"}
}

// parseDuration parses a duration such as 30s, 5m, 1h30m: numbers with units
// d, h, m, s in that order, each at most once. It must come to 1s..366d.
func parseDuration(w word) (int64, error) {
	s := w.low
	units := "dhms"
	var total int64
	for s != "" {
		i := 0
		for i < len(s) && i < 8 && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == 0 || i == len(s) || i == 8 {
			return 0, perr(w, "bad duration", durationExpected()...)
		}
		n, _ := strconv.ParseInt(s[:i], 10, 64)
		u := strings.IndexByte(units, s[i])
		if u < 0 {
			return 0, perr(w, "bad duration", durationExpected()...)
		}
		total += n * [...]int64{secsPerDay, 3600, 60, 1}[4-len(units)+u]
		units, s = units[u+1:], s[i+1:]
	}
	if total < 1 || total > maxInterval {
		return 0, perr(w, "duration out of range", "1s to 366d")
	}
	return total, nil
}

// formatDuration writes secs in the largest unit that divides it exactly.
func formatDuration(secs int64) string {
	switch {
	case secs%secsPerDay == 0:
		return strconv.FormatInt(secs/secsPerDay, 10) + "d"
	case secs%3600 == 0:
		return strconv.FormatInt(secs/3600, 10) + "h"
	case secs%60 == 0:
		return strconv.FormatInt(secs/60, 10) + "m"
	}
	return strconv.FormatInt(secs, 10) + "s"
}

// digits parses s as a decimal number of minLen..maxLen digits.
func digits(s string, minLen, maxLen int) (int, bool) {
	if len(s) < minLen || len(s) > maxLen {
		return 0, false
	}
	n := 0
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
		n = n*10 + int(s[i]-'0')
	}
	return n, true
}

// parseDate parses YYYY-MM-DD (month and day may have one digit).
func parseDate(w word) (y, m, d int, err error) {
	parts := strings.Split(w.low, "-")
	ok := len(parts) == 3
	if ok {
		var ok1, ok2, ok3 bool
		y, ok1 = digits(parts[0], 4, 4)
		m, ok2 = digits(parts[1], 1, 2)
		d, ok3 = digits(parts[2], 1, 2)
		ok = ok1 && ok2 && ok3
	}
	if !ok {
		return 0, 0, 0, perr(w, "bad date", "YYYY-MM-DD")
	}
	if y < 1000 || m < 1 || m > 12 || d < 1 || d > daysIn(int64(y), m) {
		return 0, 0, 0, perr(w, "no such date", "a date from 1000-01-01 to 9999-12-31")
	}
	return y, m, d, nil
}

// parseTime parses H:MM, HH:MM or HH:MM:SS into seconds since midnight. item
// is the text to parse; w locates it in errors.
func parseTime(w word, item string) (int, error) {
	parts := strings.Split(item, ":")
	e := &ParseError{Pos: w.pos, Word: item, Msg: "bad time", Expected: timeExpected()}
	if len(parts) < 2 || len(parts) > 3 {
		return 0, e
	}
	h, ok := digits(parts[0], 1, 2)
	mi, ok2 := digits(parts[1], 2, 2)
	sec, ok3 := 0, true
	if len(parts) == 3 {
		sec, ok3 = digits(parts[2], 2, 2)
	}
	if !ok || !ok2 || !ok3 {
		return 0, e
	}
	if h > 23 || mi > 59 || sec > 59 {
		e.Msg, e.Expected = "time out of range", []string{"00:00 to 23:59:59"}
		return 0, e
	}
	return h*3600 + mi*60 + sec, nil
}

// formatTime writes seconds since midnight as HH:MM, or HH:MM:SS when the
// seconds are not zero.
func formatTime(tod int) string {
	if tod%60 != 0 {
		return fmt.Sprintf("%02d:%02d:%02d", tod/3600, tod/60%60, tod%60)
	}
	return fmt.Sprintf("%02d:%02d", tod/3600, tod/60%60)
}

// splitList splits a comma list, rejecting empty items and long lists.
func splitList(w word, limit int) ([]string, error) {
	items := strings.Split(w.low, ",")
	if len(items) > limit {
		return nil, perr(w, fmt.Sprintf("list longer than %d items", limit))
	}
	if slices.Contains(items, "") {
		return nil, perr(w, "empty item in list")
	}
	return items, nil
}

// parseTimeList parses comma-separated times; the result is sorted and
// deduplicated.
func parseTimeList(w word) ([]int32, error) {
	items, err := splitList(w, maxTimes)
	if err != nil {
		return nil, err
	}
	list := make([]int32, 0, len(items))
	for _, it := range items {
		tod, err := parseTime(w, it)
		if err != nil {
			return nil, err
		}
		list = append(list, int32(tod))
	}
	slices.Sort(list)
	return slices.Compact(list), nil
}

func formatTimeList(list []int32) string {
	parts := make([]string, len(list))
	for i, t := range list {
		parts[i] = formatTime(int(t))
	}
	return strings.Join(parts, ",")
}

// dayNames are the canonical weekday names in canonical (Monday-first) order.
func dayNames() [7]string { return [7]string{"mon", "tue", "wed", "thu", "fri", "sat", "sun"} }

func dayNameExpected() []string { d := dayNames(); return d[:] }

// dayIndex maps a weekday name (3 letters or in full) to its Monday-first
// index 0..6.
func dayIndex(s string) (int, bool) {
	full := [7]string{"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}
	for i, n := range dayNames() {
		if s == n || s == full[i] {
			return i, true
		}
	}
	return 0, false
}

// parseWeekdays parses a list of weekday names and ranges ("mon,thu",
// "mon-fri", "fri-mon" wraps) into a weekday mask (bit 0 = Sunday).
func parseWeekdays(w word) (uint8, error) {
	items, err := splitList(w, maxListItems)
	if err != nil {
		return 0, err
	}
	var mask uint8
	for _, it := range items {
		from, to, isRange := strings.Cut(it, "-")
		a, ok := dayIndex(from)
		b := a
		if ok && isRange {
			b, ok = dayIndex(to)
		}
		if !ok {
			bad := from
			if _, fromOK := dayIndex(from); fromOK {
				bad = to
			}
			full := []string{"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}
			return 0, &ParseError{Pos: w.pos, Word: it, Msg: "unknown day", Expected: dayNameExpected(),
				Suggest: suggest(bad, append(dayNameExpected(), full...))}
		}
		for i := a; ; i = (i + 1) % 7 {
			mask |= 1 << ((i + 1) % 7) // Monday-first index -> Sunday = 0
			if i == b {
				break
			}
		}
	}
	return mask, nil
}

// parseMonthDays parses a list of days of the month, ranges and "last"
// ("1,15", "1-5,last") and normalises it: 31 is dropped next to last (the
// 31st is always a last day), and last becomes 31 when 28, 29 and 30 are all
// listed (then both select the same days).
func parseMonthDays(w word) (uint32, bool, error) {
	items, err := splitList(w, maxListItems)
	if err != nil {
		return 0, false, err
	}
	var mask uint32
	last := false
	for _, it := range items {
		if it == "last" {
			last = true
			continue
		}
		from, to, isRange := strings.Cut(it, "-")
		a, ok := digits(from, 1, 2)
		b := a
		if ok && isRange {
			b, ok = digits(to, 1, 2)
		}
		if !ok || a < 1 || b > 31 || a > b {
			return 0, false, &ParseError{Pos: w.pos, Word: it, Msg: "bad day of month", Expected: []string{"1 to 31", "last"}}
		}
		for d := a; d <= b; d++ {
			mask |= 1 << d
		}
	}
	const d28to30 = 1<<28 | 1<<29 | 1<<30
	if last && mask&d28to30 == d28to30 {
		mask, last = mask|1<<31, false
	}
	if last {
		mask &^= 1 << 31
	}
	return mask, last, nil
}

// calendarText returns the canonical head of a named calendar form: daily,
// weekdays, weekends, "weekly mon,thu" or "monthly 1,15,last".
func calendarText(d daySpec) string {
	if d.doms == allDoms && !d.last {
		switch d.dows {
		case allDows:
			return "daily"
		case weekdayDows:
			return "weekdays"
		case weekendDows:
			return "weekends"
		}
		var names []string
		for i, n := range dayNames() {
			if d.dows&(1<<((i+1)%7)) != 0 {
				names = append(names, n)
			}
		}
		return "weekly " + strings.Join(names, ",")
	}
	var days []string
	for i := 1; i <= 31; i++ {
		if d.doms&(1<<i) != 0 {
			days = append(days, strconv.Itoa(i))
		}
	}
	if d.last {
		days = append(days, "last")
	}
	return "monthly " + strings.Join(days, ",")
}
