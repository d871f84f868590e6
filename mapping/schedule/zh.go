package schedule

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// Chinese phrases. A text holding Han characters is read as a Chinese
// phrase and rewritten into the language above before parsing, so it has
// the same canonical text, fires and errors as its English form:
//
//	每天 8点 | 每天早上8点半 | 每日 9:00、17:30   → daily 08:00 | daily 08:30 | daily 09:00,17:30
//	工作日 9:00 | 每个工作日上午9点               → weekdays 09:00
//	周末 10点 | 每周末上午十点                     → weekends 10:00
//	每周一 10点 | 每周一、三 9点 | 每周一至周五 9点 → weekly mon 10:00 | weekly mon,wed 09:00 | weekdays 09:00
//	每月1号 9点 | 每月1日和15日 9点 | 每月最后一天 18:00 → monthly 1 09:00 | monthly 1,15 09:00 | monthly last 18:00
//	每隔5分钟 | 每5分钟 | 每小时 | 每半小时 | 每2天  → every 5m | every 5m | every 1h | every 30m | every 2d
//	10分钟后 | 2小时后                              → in 10m | in 2h
//	2026年12月1日 15点                              → at 2026-12-01 15:00
//
// Times are H点, H点半, H点M分, H:MM or H:MM:SS, in Arabic or Chinese
// numerals (十点, 两点); 凌晨, 早上, 上午 keep the hour, 中午 reads 1 as
// 13, and 下午, 傍晚, 晚上 add 12 to hours below 12. A period word applies
// to the times after it in a list (下午3点和5点 → 15:00,17:00). Lists are
// separated by 、 ， , 和 or 及. Full-width digits and colons are read
// as ASCII, and spaces are ignored.

// hasHan reports whether text holds a Han character.
func hasHan(text string) bool {
	for _, r := range text {
		if unicode.Is(unicode.Han, r) {
			return true
		}
	}
	return false
}

// zhExamples are the Chinese phrases an error suggests.
func zhExamples() []string {
	return []string{"每天 8点", "工作日 9:00", "每周一 10点", "每月最后一天 18:00", "每隔5分钟", "10分钟后", "2026年12月1日 15点"}
}

// fromChinese rewrites a Chinese phrase (without its "tz ZONE" suffix)
// into the schedule language. The error names the part it could not read.
func fromChinese(phrase string) (string, error) {
	z := &zhReader{s: []rune(normalizeZh(phrase))}
	out, err := z.phrase()
	if err != nil {
		return "", err
	}
	if z.rest() != "" {
		return "", z.fail("unexpected words")
	}
	return out, nil
}

// normalizeZh maps full-width digits and colons to ASCII, every list
// separator to 、 and white space to a space (which ends a list of days:
// 每月1 9点 is the 1st at 09:00).
func normalizeZh(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case unicode.IsSpace(r):
			r = ' '
		case r >= '０' && r <= '９':
			r = '0' + (r - '０')
		case r == '：':
			r = ':'
		case r == '，' || r == ',' || r == '、' || r == '和' || r == '及':
			r = '、'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// zhReader walks a normalised Chinese phrase.
type zhReader struct {
	s []rune
	i int
}

func (z *zhReader) rest() string { z.skipSpace(); return string(z.s[z.i:]) }

func (z *zhReader) skipSpace() {
	for z.i < len(z.s) && z.s[z.i] == ' ' {
		z.i++
	}
}

func (z *zhReader) fail(msg string) error {
	word := z.rest()
	if word == "" {
		word = string(z.s)
	}
	return &ParseError{Word: word, Msg: msg, Expected: zhExamples()}
}

// eat consumes the first of words the text continues with.
func (z *zhReader) eat(words ...string) bool {
	for _, w := range words {
		if strings.HasPrefix(z.rest(), w) {
			z.i += len([]rune(w))
			return true
		}
	}
	return false
}

// phrase reads one whole schedule phrase.
func (z *zhReader) phrase() (string, error) {
	if out, ok, err := z.dateTime(); ok || err != nil {
		return out, err
	}
	if n, unit, ok := z.duration(); ok {
		if z.eat("后", "以后", "之后") {
			return fmt.Sprintf("in %d%s", n, unit), nil
		}
		return "", z.fail("a duration must end with 后 (in) or start with 每 (every)")
	}
	z.eat("每个", "每")
	switch {
	case z.eat("天", "日"):
		return z.withTimes("daily")
	case z.eat("工作日"):
		return z.withTimes("weekdays")
	case z.eat("周末"):
		return z.withTimes("weekends")
	case z.eat("周", "星期", "礼拜"):
		days, err := z.weekdays()
		if err != nil {
			return "", err
		}
		return z.withTimes("weekly " + days)
	case z.eat("月"):
		days, err := z.monthDays()
		if err != nil {
			return "", err
		}
		return z.withTimes("monthly " + days)
	}
	return z.every()
}

// every reads "隔5分钟", "5分钟", "小时", "半小时" after 每.
func (z *zhReader) every() (string, error) {
	z.eat("隔")
	if z.eat("半小时", "半个小时", "半个钟头") {
		return "every 30m", nil
	}
	if n, unit, ok := z.duration(); ok {
		return fmt.Sprintf("every %d%s", n, unit), nil
	}
	if unit, ok := z.unit(); ok {
		return "every 1" + unit, nil
	}
	return "", z.fail("unknown Chinese schedule phrase")
}

// duration reads a number and a unit: 5分钟, 两小时, 3天.
func (z *zhReader) duration() (int, string, bool) {
	start := z.i
	n, ok := z.number()
	if !ok {
		return 0, "", false
	}
	z.eat("个")
	unit, ok := z.unit()
	if !ok {
		z.i = start
		return 0, "", false
	}
	return n, unit, true
}

// unit reads a time unit and returns its letter in the schedule language.
func (z *zhReader) unit() (string, bool) {
	switch {
	case z.eat("秒钟", "秒"):
		return "s", true
	case z.eat("分钟", "分"):
		return "m", true
	case z.eat("小时", "钟头"):
		return "h", true
	case z.eat("天", "日"):
		return "d", true
	}
	return "", false
}

// dateTime reads "2026年12月1日 15点" as an at schedule.
func (z *zhReader) dateTime() (string, bool, error) {
	start := z.i
	y, ok := z.arabic(4)
	if !ok || !z.eat("年") {
		z.i = start
		return "", false, nil
	}
	m, ok := z.number()
	if !ok || !z.eat("月") {
		return "", true, z.fail("a date is written 2026年12月1日")
	}
	d, ok := z.number()
	if !ok || !z.eat("日", "号") {
		return "", true, z.fail("a date is written 2026年12月1日")
	}
	times, err := z.times()
	if err != nil {
		return "", true, err
	}
	if strings.Contains(times, ",") {
		return "", true, z.fail("a date takes one time")
	}
	return fmt.Sprintf("at %04d-%d-%d %s", y, m, d, times), true, nil
}

// withTimes reads the time list that ends a calendar phrase.
func (z *zhReader) withTimes(head string) (string, error) {
	times, err := z.times()
	if err != nil {
		return "", err
	}
	return head + " " + times, nil
}

// weekdays reads 一, 一、三, 一至五, 一到周五 after 每周.
func (z *zhReader) weekdays() (string, error) {
	var items []string
	for {
		z.eat("周", "星期", "礼拜")
		a, ok := z.weekday()
		if !ok {
			return "", z.fail("unknown day of the week (一 to 日)")
		}
		item := a
		if z.eat("至", "到", "-", "~") {
			z.eat("周", "星期", "礼拜")
			b, ok := z.weekday()
			if !ok {
				return "", z.fail("unknown day of the week (一 to 日)")
			}
			item += "-" + b
		}
		items = append(items, item)
		if !z.listSep(func() bool { z.eat("周", "星期", "礼拜"); _, ok := z.weekday(); return ok }) {
			return strings.Join(items, ","), nil
		}
	}
}

// listSep consumes a list separator (with no space before it) when the
// item after it reads as another item of the same list (more reports
// whether it does); otherwise it leaves the text as it was, for the times.
func (z *zhReader) listSep(more func() bool) bool {
	if z.i >= len(z.s) || z.s[z.i] != '、' {
		return false
	}
	at := z.i
	z.i++
	ok := more()
	if ok {
		z.i = at + 1
	} else {
		z.i = at
	}
	return ok
}

func (z *zhReader) weekday() (string, bool) {
	if z.i >= len(z.s) {
		return "", false
	}
	i := strings.IndexRune("一二三四五六日天七", z.s[z.i])
	if i < 0 {
		return "", false
	}
	z.i++
	idx := len([]rune("一二三四五六日天七"[:i]))
	names := dayNames()
	return names[min(idx, 6)], true
}

// monthDays reads 1号, 1日和15日, 最后一天, 月底 after 每月.
func (z *zhReader) monthDays() (string, error) {
	var items []string
	for {
		switch {
		case z.eat("最后一天", "最后1天", "月底", "月末", "底"):
			items = append(items, "last")
		default:
			a, ok := z.number()
			if !ok {
				return "", z.fail("a day of the month is written 1号 or 最后一天")
			}
			item := strconv.Itoa(a)
			z.eat("号", "日")
			if z.eat("至", "到", "-", "~") {
				b, ok := z.number()
				if !ok {
					return "", z.fail("a day of the month is written 1号 or 最后一天")
				}
				z.eat("号", "日")
				item += "-" + strconv.Itoa(b)
			}
			items = append(items, item)
		}
		if !z.listSep(z.monthDayFollows) {
			return strings.Join(items, ","), nil
		}
	}
}

// monthDayFollows reports whether a day of the month (not a time) starts
// here.
func (z *zhReader) monthDayFollows() bool {
	if z.eat("最后一天", "最后1天", "月底", "月末") {
		return true
	}
	if _, ok := z.number(); !ok {
		return false
	}
	z.skipSpace()
	if z.i >= len(z.s) {
		return true
	}
	return !strings.ContainsRune("点时:", z.s[z.i])
}

// times reads a list of times of day: 8点, 早上8点半, 9:00、17:30,
// 下午3点和5点. It returns them in the schedule language, comma-joined.
func (z *zhReader) times() (string, error) {
	var list []string
	period := ""
	for {
		if p, ok := z.period(); ok {
			period = p
		}
		t, err := z.timeOfDay(period)
		if err != nil {
			return "", err
		}
		list = append(list, t)
		z.skipSpace()
		if z.i >= len(z.s) || z.s[z.i] != '、' {
			return strings.Join(list, ","), nil
		}
		z.i++
	}
}

// period reads a part of the day and returns its name.
func (z *zhReader) period() (string, bool) {
	for _, p := range []string{"凌晨", "早上", "早晨", "清晨", "上午", "中午", "下午", "傍晚", "晚上", "夜里", "夜间", "晚"} {
		if z.eat(p) {
			return p, true
		}
	}
	return "", false
}

// timeOfDay reads one time (H点, H点半, H点M分, H点一刻, H:MM[:SS]) and
// applies period to its hour.
func (z *zhReader) timeOfDay(period string) (string, error) {
	h, ok := z.number()
	if !ok {
		if z.rest() == "" {
			return "", &ParseError{Msg: "missing time", Expected: []string{"8点", "早上8点半", "9:00", "17:30"}}
		}
		return "", z.fail("a time is written 8点, 8点半 or 9:00")
	}
	h = hourIn(period, h)
	if z.eat(":") {
		rest, ok := z.clockRest()
		if !ok {
			return "", z.fail("a time is written 8点, 8点半 or 9:00")
		}
		return fmt.Sprintf("%d:%s", h, rest), nil
	}
	if !z.eat("点", "时") {
		return "", z.fail("a time is written 8点, 8点半 or 9:00")
	}
	m := 0
	switch {
	case z.eat("半"):
		m = 30
	case z.eat("一刻"):
		m = 15
	case z.eat("三刻"):
		m = 45
	default:
		if n, ok := z.number(); ok {
			m = n
			z.eat("分")
		}
	}
	z.eat("钟", "整")
	return fmt.Sprintf("%d:%02d", h, m), nil
}

// clockRest reads the MM or MM:SS after "H:".
func (z *zhReader) clockRest() (string, bool) {
	m, ok := z.arabic(2)
	if !ok {
		return "", false
	}
	if !z.eat(":") {
		return fmt.Sprintf("%02d", m), true
	}
	sec, ok := z.arabic(2)
	if !ok {
		return "", false
	}
	return fmt.Sprintf("%02d:%02d", m, sec), true
}

// hourIn reads hour h in a part of the day: afternoon and evening hours
// below 12 are p.m., noon's 1 is 13, and midnight's 12 is 0.
func hourIn(period string, h int) int {
	switch period {
	case "下午", "傍晚", "晚上", "夜里", "夜间", "晚":
		if h < 12 {
			return h + 12
		}
		if h == 12 && period != "下午" {
			return 0
		}
	case "中午":
		if h < 11 {
			return h + 12
		}
	case "凌晨":
		if h == 12 {
			return 0
		}
	}
	return h
}

// number reads an Arabic number (up to 4 digits) or a Chinese one up to 99
// (五, 十, 十五, 二十三, 两).
func (z *zhReader) number() (int, bool) {
	z.skipSpace()
	if n, ok := z.arabic(4); ok {
		return n, true
	}
	value := func(r rune) (int, bool) {
		v, ok := map[rune]int{'零': 0, '〇': 0, '一': 1, '二': 2, '两': 2, '三': 3, '四': 4,
			'五': 5, '六': 6, '七': 7, '八': 8, '九': 9}[r]
		return v, ok
	}
	start, n := z.i, 0
	if z.i < len(z.s) {
		if v, ok := value(z.s[z.i]); ok {
			n = v
			z.i++
		}
	}
	if z.i < len(z.s) && z.s[z.i] == '十' {
		if z.i == start {
			n = 1
		}
		n *= 10
		z.i++
		if z.i < len(z.s) {
			if v, ok := value(z.s[z.i]); ok {
				n += v
				z.i++
			}
		}
	}
	return n, z.i > start
}

// arabic reads 1 to maxDigits ASCII digits.
func (z *zhReader) arabic(maxDigits int) (int, bool) {
	start := z.i
	for z.i < len(z.s) && z.i-start < maxDigits && z.s[z.i] >= '0' && z.s[z.i] <= '9' {
		z.i++
	}
	if z.i == start {
		return 0, false
	}
	n, err := strconv.Atoi(string(z.s[start:z.i]))
	return n, err == nil
}

// parseChinese parses a text holding a Chinese phrase, optionally followed
// by " tz ZONE": the phrase is rewritten into the schedule language and
// parsed; an error from that parse says what the phrase was read as.
func parseChinese(text, defaultTZ string) (*Schedule, error) {
	phrase, zone := text, ""
	if i := zoneSuffix(text); i >= 0 {
		phrase, zone = text[:i], text[i:]
	}
	english, err := fromChinese(phrase)
	if err != nil {
		return nil, err
	}
	s, err := Parse(english+zone, defaultTZ)
	if pe, ok := err.(*ParseError); ok {
		msg := pe.Msg
		if pe.Word != "" {
			msg += " " + strconv.Quote(pe.Word)
		}
		msg += fmt.Sprintf(" (%s read as %q)", strings.TrimSpace(phrase), english)
		return nil, &ParseError{Msg: msg, Expected: pe.Expected}
	}
	return s, err
}

// zoneSuffix returns the byte index of the last " tz " (any case) in text,
// or -1.
func zoneSuffix(text string) int {
	for i := len(text) - 4; i >= 0; i-- {
		if text[i] == ' ' && text[i+1]|0x20 == 't' && text[i+2]|0x20 == 'z' && text[i+3] == ' ' {
			return i
		}
	}
	return -1
}
