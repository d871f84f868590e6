// Package schedule parses cronsheet's schedule language (cron_para) into a
// Schedule with one canonical text, and computes its fire instants. It is
// pure code: no I/O beyond loading zone data, no clock, no project imports.
//
// # Language
//
// A schedule is one of the forms below, optionally followed by "tz ZONE".
// Keywords and names are case-insensitive, words are separated by any white
// space, and spaces after the commas of a list are tolerated. Input and
// canonical text are both limited to MaxTextLen bytes.
//
//	every 30s | every 5m | every 2h | every 1d | every 1h30m
//	    Repeats every interval of elapsed time, counted from the anchor:
//	    anchor+D, anchor+2D, ... DST does not affect it. Units d, h, m, s,
//	    in that order, each at most once; 1s to 366d in total.
//	in 30m
//	    Fires once, at anchor+D. Same durations as every.
//	daily 08:30 | daily 8:30:15 | daily 08:00,17:30
//	weekdays 09:00 | weekends 10:00
//	weekly mon,thu 09:00 | weekly mon-fri 09:00 | weekly monday 09:00
//	monthly 1,15 09:00 | monthly last 18:00 | monthly 1-5,last 09:00
//	    Times are H:MM, HH:MM or HH:MM:SS; a comma list holds at most 24.
//	    Weekday names are mon..sun or in full; ranges may wrap (fri-mon).
//	    Days of the month are 1..31, ranges, and last (the month's last day).
//	at 2026-12-01 15:00 | at 2026-12-01 15:00:30
//	    Fires once, at that wall time. Years 1000..9999.
//	cron */10 * * * * *
//	    Six fields: sec min hour dom month dow. Each is "*", "?", "*/n", or
//	    a comma list of values, ranges a-b, and steps a-b/n or a/n (a up to
//	    the maximum). Months may be jan..dec, weekdays sun..sat; dow 7 is
//	    Sunday too. Day of month and weekday combine by the Vixie cron rule:
//	    when both fields are restricted (neither starts with "*" or "?"), a
//	    day matching either fires; otherwise a day must match both. So
//	    "cron 0 0 9 1 * mon" fires on the 1st and on every Monday, while
//	    "cron 0 0 9 */2 * mon" fires on Mondays with an odd day of month.
//	cron 0 9 * * 1-5
//	    The standard five fields (min hour dom month dow): second 0, stored
//	    as the six-field "cron 0 0 9 * * 1-5".
//	@hourly | @daily | @midnight | @weekly | @monthly | @yearly | @annually
//	    The cron macros, stored as "cron 0 0 * * * *", "daily 00:00",
//	    "weekly sun 00:00", "monthly 1 00:00" and "cron 0 0 0 1 1 *".
//	@every 5m
//	    Stored as "every 5m".
//	每周一 10点 | 工作日 9:00 | 每月最后一天 18:00 | 每隔5分钟 | 10分钟后
//	    A text holding Han characters is a Chinese phrase, rewritten into
//	    the forms above before parsing (see zh.go for the phrases read).
//	... tz Asia/Shanghai
//	    The zone the wall-clock times are read in: an IANA name, exactly
//	    as spelled there (case matters, except for UTC). Without it, the
//	    default zone given to Parse applies (UTC when that is "").
//
// # Canonical text
//
// String returns one canonical text per schedule; Parse accepts it and
// gives back the same text. It is lower case with single spaces and:
//   - durations use the largest unit that divides them exactly
//     (every 60s → every 1m, every 1h30m → every 90m, every 24h → every 1d);
//   - times are HH:MM, with :SS only when the seconds are not zero; lists
//     are sorted and deduplicated (daily 17:30,8:00 → daily 08:00,17:30);
//   - weekly lists the 3-letter names Monday first (weekly thu,mon →
//     weekly mon,thu); all seven days become daily, mon..fri weekdays and
//     sat,sun weekends;
//   - monthly lists days ascending then last, with ranges expanded; 31 is
//     dropped next to last (it always is a last day), last becomes 31 when
//     28, 29 and 30 are listed, and all 31 days become daily;
//   - at writes YYYY-MM-DD HH:MM[:SS];
//   - cron writes numbers (no names, dow 7 as 0); "*" for a full set and
//     "*/n" for every n-th value from the start; a single progression of
//     three or more values as a-b/n; otherwise values and runs a-b of
//     three or more. In dom and dow, a field written with "*" or "?" stays
//     "*" or "*/n" and any other stays a list, because the dom/dow rule
//     depends on it. Cron texts are normalised, not minimised: a cron that
//     fires like a named form keeps its cron spelling;
//   - " tz ZONE" is kept when the text had it and never added.
//
// # Time rules
//
// Every wall-clock form (daily, weekdays, weekends, weekly, monthly, at and
// cron) follows the same rules. A wall time fires at the first instant whose
// wall-clock reading reaches it, which means:
//   - a wall time that does not exist (spring-forward gap) fires at the
//     first instant after the gap: daily 02:30 on a day when clocks jump
//     02:00→03:00 fires at 03:00;
//   - a wall time that occurs twice (fall-back overlap) fires once, at its
//     first occurrence;
//   - fires are distinct instants: wall times that land on the same instant
//     (02:15 and 02:45 both in a gap) fire once;
//   - a day a rule names but a month lacks (monthly 31, cron day 29 in a
//     common February) is skipped, not moved; monthly last is the month's
//     last day.
//
// Intervals (every, in) are elapsed time, untouched by DST.
//
// # Bounds
//
// Next evaluates calendar forms field by field (month, day, then time of
// day) and never steps second by second. It looks at most HorizonYears (a
// whole 400-year Gregorian cycle) ahead; Parse rejects a cron whose day of
// month exists in none of its months (cron 0 0 0 31 2 *), so every accepted
// calendar schedule fires within that horizon.
package schedule
