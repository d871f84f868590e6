package schedule

import (
	"fmt"
	"strings"
	"time"
)

// MaxTextLen is the longest text Parse accepts, in bytes. It bounds the
// canonical text too, so every canonical text parses again.
const MaxTextLen = 256

const (
	maxTimes     = 24               // times of day in one list
	maxListItems = 64               // items in one day list or cron field
	maxInterval  = 366 * secsPerDay // longest every/in duration, seconds
)

// word is one whitespace-separated word of the text, with comma lists that
// were written with spaces ("mon, thu") joined back into one word.
type word struct {
	text string // as written (zone names are case-sensitive)
	low  string // lower case, for everything else
	pos  int    // 1-based position
}

func keywordList() []string {
	return []string{"every", "daily", "weekdays", "weekends", "weekly", "monthly", "at", "in", "cron"}
}

// macroText maps the usual cron macros onto their canonical schedules:
// they fire at the start of the hour, day, week (Sunday), month or year,
// as in cron; "@every D" is parsed as "every D".
func macroText(name string) (string, bool) {
	switch name {
	case "@hourly":
		return "cron 0 0 * * * *", true
	case "@daily", "@midnight":
		return "daily 00:00", true
	case "@weekly":
		return "weekly sun 00:00", true
	case "@monthly":
		return "monthly 1 00:00", true
	case "@yearly", "@annually":
		return "cron 0 0 0 1 1 *", true
	}
	return "", false
}

func endExpected() []string { return []string{"tz ZONE", "end of text"} }

func timeExpected() []string { return []string{"HH:MM", "HH:MM:SS"} }

func perr(w word, msg string, expected ...string) *ParseError {
	return &ParseError{Pos: w.pos, Word: w.text, Msg: msg, Expected: expected}
}

// Parse parses text in the schedule language (see the package doc) and
// returns its Schedule. defaultTZ is the IANA zone used when the text has no
// "tz" suffix; "" means UTC. Errors are *ParseError values.
func Parse(text, defaultTZ string) (*Schedule, error) {
	if len(text) > MaxTextLen {
		return nil, &ParseError{Msg: fmt.Sprintf("schedule longer than %d bytes", MaxTextLen)}
	}
	if hasHan(text) {
		return parseChinese(text, defaultTZ)
	}
	words := splitWords(text)
	if len(words) == 0 {
		return nil, &ParseError{Pos: 1, Msg: "empty schedule", Expected: keywordList()}
	}
	body, zone, err := splitZone(words)
	if err != nil {
		return nil, err
	}
	var loc *time.Location
	suffix := ""
	if zone != nil {
		name, l, ok := loadZone(zone.text)
		if !ok {
			return nil, perr(*zone, "unknown time zone", "an IANA zone name such as Europe/Berlin")
		}
		loc, suffix = l, " tz "+name
	} else {
		_, l, ok := loadZone(defaultTZ)
		if defaultTZ == "" {
			l, ok = time.UTC, true
		}
		if !ok {
			return nil, &ParseError{Word: defaultTZ, Msg: "unknown default time zone"}
		}
		loc = l
	}
	s, canon, err := parseBody(body)
	if err != nil {
		return nil, err
	}
	s.loc, s.text = loc, canon+suffix
	if len(s.text) > MaxTextLen {
		return nil, &ParseError{Msg: fmt.Sprintf("schedule longer than %d bytes in canonical form %q", MaxTextLen, s.text)}
	}
	return s, nil
}

// splitWords splits text at white space, joining a word that ends with a
// comma, or a word that starts with one, to the word before it.
func splitWords(text string) []word {
	var out []word
	for _, f := range strings.Fields(text) {
		if n := len(out); n > 0 && (strings.HasSuffix(out[n-1].text, ",") || strings.HasPrefix(f, ",")) {
			out[n-1].text += f
			continue
		}
		out = append(out, word{text: f, pos: len(out) + 1})
	}
	for i := range out {
		out[i].low = strings.ToLower(out[i].text)
	}
	return out
}

// splitZone separates an optional trailing "tz ZONE" from the body.
func splitZone(words []word) (body []word, zone *word, err error) {
	for i := 1; i < len(words); i++ {
		if words[i].low != "tz" {
			continue
		}
		switch {
		case i == len(words)-1:
			return nil, nil, &ParseError{Pos: i + 2, Msg: "missing time zone", Expected: []string{"an IANA zone name such as Europe/Berlin"}}
		case i < len(words)-2:
			return nil, nil, perr(words[i+2], "unexpected word after time zone", "end of text")
		}
		return words[:i], &words[i+1], nil
	}
	return words, nil, nil
}

// loadZone loads an IANA zone by name; "utc" in any case means UTC. The
// machine-dependent "Local" is refused.
func loadZone(name string) (string, *time.Location, bool) {
	if strings.EqualFold(name, "utc") {
		return "UTC", time.UTC, true
	}
	if name == "" || len(name) > 64 || strings.EqualFold(name, "local") || name[0] == '/' || strings.Contains(name, "..") {
		return "", nil, false
	}
	for _, c := range name {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune("/_+-", c)
		if !ok {
			return "", nil, false
		}
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return "", nil, false
	}
	return name, loc, true
}

// cursor walks the body words.
type cursor struct {
	words []word
	i     int
}

// take returns the next word, or a "missing" error naming what was expected.
func (c *cursor) take(what string, expected ...string) (word, error) {
	if c.i >= len(c.words) {
		return word{}, &ParseError{Pos: c.i + 1, Msg: "missing " + what, Expected: expected}
	}
	c.i++
	return c.words[c.i-1], nil
}

// end fails if words are left over.
func (c *cursor) end() error {
	if c.i < len(c.words) {
		e := perr(c.words[c.i], "unexpected word", endExpected()...)
		e.Suggest = suggest(c.words[c.i].low, []string{"tz"})
		return e
	}
	return nil
}

// parseBody parses the schedule without its zone suffix and returns it with
// its canonical text.
func parseBody(words []word) (*Schedule, string, error) {
	c := &cursor{words: words, i: 1}
	kw := words[0]
	var (
		s     *Schedule
		canon string
		err   error
	)
	switch kw.low {
	case "every", "in":
		s, canon, err = parseInterval(c, kw.low)
	case "daily", "weekdays", "weekends", "weekly", "monthly":
		s, canon, err = parseCalendar(c, kw.low)
	case "at":
		s, canon, err = parseAt(c)
	case "cron":
		s, canon, err = parseCron(c)
	case "@every":
		s, canon, err = parseInterval(c, "every")
	default:
		text, ok := macroText(kw.low)
		if !ok {
			e := perr(kw, "unknown word", keywordList()...)
			e.Suggest = suggest(kw.low, append(keywordList(), "@hourly", "@daily", "@midnight", "@weekly", "@monthly", "@yearly", "@annually", "@every"))
			return nil, "", e
		}
		// The macro's own text is canonical and always parses.
		s, canon, err = parseBody(splitWords(text))
	}
	if err == nil {
		err = c.end()
	}
	if err != nil {
		return nil, "", err
	}
	return s, canon, nil
}

// parseInterval parses "every D" and "in D".
func parseInterval(c *cursor, kw string) (*Schedule, string, error) {
	w, err := c.take("duration", durationExpected()...)
	if err != nil {
		return nil, "", err
	}
	secs, err := parseDuration(w)
	if err != nil {
		return nil, "", err
	}
	k := kindEvery
	if kw == "in" {
		k = kindIn
	}
	return &Schedule{kind: k, secs: secs}, kw + " " + formatDuration(secs), nil
}

// parseAt parses "at YYYY-MM-DD HH:MM[:SS]".
func parseAt(c *cursor) (*Schedule, string, error) {
	dw, err := c.take("date", "YYYY-MM-DD")
	if err != nil {
		return nil, "", err
	}
	y, m, d, err := parseDate(dw)
	if err != nil {
		return nil, "", err
	}
	tw, err := c.take("time", timeExpected()...)
	if err != nil {
		return nil, "", err
	}
	tod, err := parseTime(tw, tw.low)
	if err != nil {
		return nil, "", err
	}
	wall := daysFromCivil(int64(y), m, d)*secsPerDay + int64(tod)
	canon := fmt.Sprintf("at %04d-%02d-%02d %s", y, m, d, formatTime(tod))
	return &Schedule{kind: kindAt, secs: wall}, canon, nil
}

// parseCalendar parses daily, weekdays, weekends, weekly and monthly.
func parseCalendar(c *cursor, kw string) (*Schedule, string, error) {
	days := daySpec{months: allMonths, doms: allDoms, dows: allDows}
	switch kw {
	case "weekdays":
		days.dows = weekdayDows
	case "weekends":
		days.dows = weekendDows
	case "weekly":
		w, err := c.take("days of the week", dayNameExpected()...)
		if err != nil {
			return nil, "", err
		}
		if days.dows, err = parseWeekdays(w); err != nil {
			return nil, "", err
		}
	case "monthly":
		w, err := c.take("days of the month", "1 to 31", "last")
		if err != nil {
			return nil, "", err
		}
		if days.doms, days.last, err = parseMonthDays(w); err != nil {
			return nil, "", err
		}
	}
	w, err := c.take("time", timeExpected()...)
	if err != nil {
		return nil, "", err
	}
	list, err := parseTimeList(w)
	if err != nil {
		return nil, "", err
	}
	s := &Schedule{kind: kindDays, days: days, tod: todSet{list: list}}
	return s, calendarText(days) + " " + formatTimeList(list), nil
}
