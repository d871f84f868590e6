package schedule

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

// cronField describes one of the six cron fields.
type cronField struct {
	name     string
	min, max int      // accepted values (dow accepts 7 for Sunday)
	top      int      // highest value a "*" covers (dow: 6)
	names    []string // names for min, min+1, ... (month, dow)
	starStep bool     // "*" carries no meaning beyond its set: render sets as */n
}

func cronFields() [6]cronField {
	return [6]cronField{
		{name: "sec", min: 0, max: 59, top: 59, starStep: true},
		{name: "min", min: 0, max: 59, top: 59, starStep: true},
		{name: "hour", min: 0, max: 23, top: 23, starStep: true},
		{name: "dom", min: 1, max: 31, top: 31},
		{name: "month", min: 1, max: 12, top: 12, starStep: true,
			names: []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"}},
		{name: "dow", min: 0, max: 7, top: 6,
			names: []string{"sun", "mon", "tue", "wed", "thu", "fri", "sat"}},
	}
}

func (f *cronField) expected() []string {
	e := fmt.Sprintf("%s %d-%d", f.name, f.min, f.max)
	if f.names != nil {
		e += fmt.Sprintf(" or %s-%s", f.names[0], f.names[len(f.names)-1])
	}
	return []string{e}
}

// parseCron parses "cron SEC MIN HOUR DOM MONTH DOW", or the standard
// five fields "cron MIN HOUR DOM MONTH DOW" (minute resolution), read as
// second 0 and written in the six-field canonical form.
func parseCron(c *cursor) (*Schedule, string, error) {
	switch n := len(c.words) - c.i; {
	case n == 5:
		sec := word{text: "0", low: "0", pos: c.words[c.i].pos}
		c.words = append(append(c.words[:c.i:c.i], sec), c.words[c.i:]...)
	case n < 5:
		return nil, "", &ParseError{Pos: len(c.words) + 1,
			Msg: fmt.Sprintf("cron needs 5 fields (min hour dom month dow) or 6 (sec min hour dom month dow), got %d", n)}
	}
	fields := cronFields()
	var masks [6]uint64
	var star [6]bool
	var words [6]word
	for i := range fields {
		if c.i >= len(c.words) {
			return nil, "", &ParseError{Pos: c.i + 1,
				Msg:      fmt.Sprintf("cron needs 6 fields (sec min hour dom month dow), got %d", i),
				Expected: []string{fields[i].name}}
		}
		w, _ := c.take(fields[i].name)
		m, st, err := parseCronField(w, &fields[i])
		if err != nil {
			return nil, "", err
		}
		masks[i], star[i], words[i] = m, st, w
	}
	days := daySpec{
		months: uint16(masks[4]),
		doms:   uint32(masks[3]),
		dows:   uint8(masks[5]),
		or:     !star[3] && !star[5],
	}
	if !days.or && !anyValidDay(days.months, days.doms) {
		return nil, "", perr(words[3], "day of month never occurs in the chosen months")
	}
	s := &Schedule{kind: kindDays, days: days,
		tod: todSet{secs: masks[0], mins: masks[1], hours: masks[2]}}
	parts := make([]string, 6)
	for i := range fields {
		parts[i] = renderCronField(masks[i], star[i], &fields[i])
	}
	return s, "cron " + strings.Join(parts, " "), nil
}

// anyValidDay reports whether some allowed month has some allowed day.
func anyValidDay(months uint16, doms uint32) bool {
	for m := 1; m <= 12; m++ {
		if months&(1<<m) != 0 && doms&(1<<(daysIn(2000, m)+1)-1) != 0 {
			return true
		}
	}
	return false
}

// parseCronField parses one field: "*", "?", "*/n", or a list of values,
// ranges a-b and steps a-b/n or a/n (a to the maximum). It returns the set
// as a bit mask and whether the field was written starting with "*" (or
// "?"), which matters for the dom/dow rule.
func parseCronField(w word, f *cronField) (uint64, bool, error) {
	text := w.low
	if head, step, ok := strings.Cut(text, "/"); ok && (head == "*" || head == "?") {
		n, err := cronStep(w, step)
		if err != nil {
			return 0, false, err
		}
		return progression(f.min, f.top, n), true, nil
	}
	if text == "*" || text == "?" {
		return progression(f.min, f.top, 1), true, nil
	}
	items, err := splitList(w, maxListItems)
	if err != nil {
		return 0, false, err
	}
	var mask uint64
	for _, it := range items {
		m, err := parseCronItem(w, it, f)
		if err != nil {
			return 0, false, err
		}
		mask |= m
	}
	return mask, false, nil
}

// parseCronItem parses one list item of a cron field.
func parseCronItem(w word, it string, f *cronField) (uint64, error) {
	bad := &ParseError{Pos: w.pos, Word: it, Msg: "bad cron " + f.name, Expected: f.expected()}
	rng, stepText, hasStep := strings.Cut(it, "/")
	from, to, isRange := strings.Cut(rng, "-")
	a, ok := cronValue(from, f)
	b := a
	if ok && isRange {
		b, ok = cronValue(to, f)
	} else if ok && hasStep {
		b = f.max
	}
	if !ok {
		return 0, bad
	}
	if a > b {
		bad.Msg = "cron range start after end"
		return 0, bad
	}
	n := 1
	if hasStep {
		var err error
		if n, err = cronStep(w, stepText); err != nil {
			return 0, err
		}
	}
	m := progression(a, b, n)
	if f.name == "dow" && m&(1<<7) != 0 {
		m = m&^(1<<7) | 1 // 7 is Sunday too
	}
	return m, nil
}

// cronValue parses a number or (for month and dow) a name.
func cronValue(s string, f *cronField) (int, bool) {
	for i, n := range f.names {
		if s == n {
			return f.min + i, true
		}
	}
	v, ok := digits(s, 1, 2)
	return v, ok && v >= f.min && v <= f.max
}

// cronStep parses the n of "/n": 1 to 99.
func cronStep(w word, s string) (int, error) {
	n, ok := digits(s, 1, 2)
	if !ok || n < 1 {
		return 0, &ParseError{Pos: w.pos, Word: w.text, Msg: "bad cron step",
			Expected: []string{"a step of 1 to 99"}}
	}
	return n, nil
}

// progression returns the mask of a, a+n, a+2n, ... up to b (n >= 1).
func progression(a, b, n int) uint64 {
	var m uint64
	n = max(n, 1)
	for v := a; v <= b; v += n {
		m |= 1 << v
	}
	return m
}

// renderCronField writes a field's canonical text from its set. For dom and
// dow, a field written with "*" stays "*" or "*/n" (the dom/dow rule depends
// on it) and any other stays a list. Other fields render a full set as "*"
// and an every-n-from-the-start set as "*/n". Otherwise: a single
// progression of three or more values is "a-b/n"; else a list of values
// and runs "a-b" of three or more.
func renderCronField(mask uint64, star bool, f *cronField) string {
	vals := setValues(mask)
	if star || f.starStep {
		full := progression(f.min, f.top, 1)
		if mask == full {
			return "*"
		}
		n := f.top - f.min + 1 // a lone first value: the largest step
		if len(vals) >= 2 {
			n = vals[1] - vals[0]
		}
		if mask == progression(f.min, f.top, n) && (len(vals) >= 2 || !f.starStep) {
			return "*/" + strconv.Itoa(n)
		}
	}
	if len(vals) >= 3 {
		n := vals[1] - vals[0]
		if n > 1 && mask == progression(vals[0], vals[len(vals)-1], n) {
			return fmt.Sprintf("%d-%d/%d", vals[0], vals[len(vals)-1], n)
		}
	}
	var parts []string
	for i := 0; i < len(vals); {
		j := i
		for j+1 < len(vals) && vals[j+1] == vals[j]+1 {
			j++
		}
		if j-i >= 2 {
			parts = append(parts, fmt.Sprintf("%d-%d", vals[i], vals[j]))
			i = j + 1
			continue
		}
		parts = append(parts, strconv.Itoa(vals[i]))
		i++
	}
	return strings.Join(parts, ",")
}

// setValues lists the set bits of mask in increasing order.
func setValues(mask uint64) []int {
	vals := make([]int, 0, bits.OnesCount64(mask))
	for mask != 0 {
		v := bits.TrailingZeros64(mask)
		vals = append(vals, v)
		mask &^= 1 << v
	}
	return vals
}
