package schedule

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	_ "time/tzdata" // tests must not depend on the machine's zoneinfo
)

func TestParseCanonical(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{"every seconds", "every 30s", "every 30s"},
		{"every minutes", "every 5m", "every 5m"},
		{"every hours", "every 2h", "every 2h"},
		{"every days", "every 1d", "every 1d"},
		{"every 60s is 1m", "every 60s", "every 1m"},
		{"every 24h is 1d", "every 24h", "every 1d"},
		{"every compound", "every 1h30m", "every 90m"},
		{"every compound seconds", "every 1d1s", "every 86401s"},
		{"every max", "every 366d", "every 366d"},
		{"every case and spaces", "  EVERY   3600S ", "every 1h"},
		{"in", "in 30m", "in 30m"},
		{"in normalised", "in 120m", "in 2h"},
		{"daily", "daily 08:30", "daily 08:30"},
		{"daily short hour", "daily 8:30", "daily 08:30"},
		{"daily seconds", "daily 08:30:15", "daily 08:30:15"},
		{"daily zero seconds dropped", "daily 08:30:00", "daily 08:30"},
		{"daily list sorted deduped", "daily 17:30,8:00,08:00", "daily 08:00,17:30"},
		{"daily list with spaces", "daily 17:30, 8:00 ,9:00", "daily 08:00,09:00,17:30"},
		{"weekdays", "weekdays 09:00", "weekdays 09:00"},
		{"weekends", "Weekends 10:00", "weekends 10:00"},
		{"weekly", "weekly mon,thu 09:00", "weekly mon,thu 09:00"},
		{"weekly order dedupe", "weekly thu,mon,THU 9:00", "weekly mon,thu 09:00"},
		{"weekly full names", "weekly Monday,sunday 09:00", "weekly mon,sun 09:00"},
		{"weekly range is weekdays", "weekly mon-fri 09:00", "weekdays 09:00"},
		{"weekly sat sun is weekends", "weekly sun,sat 10:00", "weekends 10:00"},
		{"weekly all is daily", "weekly mon-sun 10:00", "daily 10:00"},
		{"weekly wrapping range", "weekly fri-mon 10:00", "weekly mon,fri,sat,sun 10:00"},
		{"monthly", "monthly 1,15 09:00", "monthly 1,15 09:00"},
		{"monthly last", "monthly last 18:00", "monthly last 18:00"},
		{"monthly sorted", "monthly last,15,1,15 09:00", "monthly 1,15,last 09:00"},
		{"monthly range", "monthly 1-3 09:00", "monthly 1,2,3 09:00"},
		{"monthly 31 next to last dropped", "monthly 31,last 18:00", "monthly last 18:00"},
		{"monthly last with 28-30 is 31", "monthly 28,29,30,last 18:00", "monthly 28,29,30,31 18:00"},
		{"monthly all is daily", "monthly 1-31 18:00", "daily 18:00"},
		{"monthly 1-30,last is daily", "monthly 1-30,last 18:00", "daily 18:00"},
		{"at", "at 2026-12-01 15:00", "at 2026-12-01 15:00"},
		{"at seconds", "at 2026-12-01 15:00:30", "at 2026-12-01 15:00:30"},
		{"at zero seconds", "at 2026-12-1 15:00:00", "at 2026-12-01 15:00"},
		{"cron", "cron */10 * * * * *", "cron */10 * * * * *"},
		{"cron names", "cron 0 0 9 * JAN,mar MON-FRI", "cron 0 0 9 * 1,3 1-5"},
		{"cron question mark", "cron 0 0 9 ? * mon", "cron 0 0 9 * * 1"},
		{"cron dow 7", "cron 0 0 9 * * 7", "cron 0 0 9 * * 0"},
		{"cron full list is star", "cron 0-59 0 0 * * *", "cron * 0 0 * * *"},
		{"cron step from start", "cron 0,15,30,45 0 0 * * *", "cron */15 0 0 * * *"},
		{"cron stepped range", "cron 0 5-55/10 * * * *", "cron 0 5-55/10 * * * *"},
		{"cron a/n", "cron 0 0 1/6 * * *", "cron 0 0 1-19/6 * * *"},
		{"cron runs", "cron 0 0 1,2,3,5,7,8 * * *", "cron 0 0 1-3,5,7,8 * * *"},
		{"cron dom star step kept", "cron 0 0 0 */2 * 1", "cron 0 0 0 */2 * 1"},
		{"cron dom full list stays list", "cron 0 0 0 1-31 * 1", "cron 0 0 0 1-31 * 1"},
		{"cron dom lone star step", "cron 0 0 0 */40 * *", "cron 0 0 0 */31 * *"},
		{"cron sec lone step is a value", "cron */60 0 0 * * *", "cron 0 0 0 * * *"},
		{"cron dow star step", "cron 0 0 0 * * */8", "cron 0 0 0 * * */7"},
		{"tz suffix kept", "daily 08:00 tz Asia/Shanghai", "daily 08:00 tz Asia/Shanghai"},
		{"tz keyword case", "daily 08:00 TZ Europe/Berlin", "daily 08:00 tz Europe/Berlin"},
		{"tz utc any case", "every 1h tz utc", "every 1h tz UTC"},
		{"cron with tz", "cron 0 0 9 * * 1 tz America/New_York", "cron 0 0 9 * * 1 tz America/New_York"},
		{"cron 5 fields", "cron 0 9 * * 1-5", "cron 0 0 9 * * 1-5"},
		{"cron 5 fields step", "cron */15 * * * *", "cron 0 */15 * * * *"},
		{"cron 5 fields names", "cron 30 8 1 jan,jul *", "cron 0 30 8 1 */6 *"},
		{"cron 5 fields tz", "cron 0 9 * * mon tz Asia/Shanghai", "cron 0 0 9 * * 1 tz Asia/Shanghai"},
		{"@daily", "@daily", "daily 00:00"},
		{"@midnight", "@midnight", "daily 00:00"},
		{"@hourly", "@hourly", "cron 0 0 * * * *"},
		{"@weekly", "@weekly", "weekly sun 00:00"},
		{"@monthly", "@monthly", "monthly 1 00:00"},
		{"@yearly", "@yearly", "cron 0 0 0 1 1 *"},
		{"@annually", "@Annually", "cron 0 0 0 1 1 *"},
		{"@every", "@every 5m", "every 5m"},
		{"@every compound", "@every 1h30m", "every 90m"},
		{"@daily tz", "@DAILY tz Asia/Shanghai", "daily 00:00 tz Asia/Shanghai"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := Parse(tt.in, "Europe/Berlin")
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.in, err)
			}
			if got := s.String(); got != tt.want {
				t.Fatalf("Parse(%q).String() = %q, want %q", tt.in, got, tt.want)
			}
			again, err := Parse(s.String(), "Europe/Berlin")
			if err != nil {
				t.Fatalf("Parse(canonical %q): %v", s.String(), err)
			}
			if again.String() != s.String() {
				t.Fatalf("canonical %q re-parses as %q", s.String(), again.String())
			}
		})
	}
}

func TestParseLocationAndOnce(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, defTZ, wantLoc string
		once                     bool
	}{
		{"default zone", "daily 08:00", "Asia/Tokyo", "Asia/Tokyo", false},
		{"empty default is UTC", "daily 08:00", "", "UTC", false},
		{"suffix wins", "daily 08:00 tz Europe/Berlin", "Asia/Tokyo", "Europe/Berlin", false},
		{"suffix ignores bad default", "daily 08:00 tz Europe/Berlin", "Nowhere/Land", "Europe/Berlin", false},
		{"at is once", "at 2026-01-01 00:00", "", "UTC", true},
		{"in is once", "in 5m", "", "UTC", true},
		{"every repeats", "every 5m", "", "UTC", false},
		{"cron repeats", "cron 0 * * * * *", "", "UTC", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s, err := Parse(tt.in, tt.defTZ)
			if err != nil {
				t.Fatal(err)
			}
			if got := s.Location().String(); got != tt.wantLoc {
				t.Errorf("Location() = %q, want %q", got, tt.wantLoc)
			}
			if s.IsOnce() != tt.once {
				t.Errorf("IsOnce() = %v, want %v", s.IsOnce(), tt.once)
			}
			if strings.Contains(s.String(), " tz ") != strings.Contains(tt.in, " tz ") {
				t.Errorf("String() = %q: tz suffix must appear only when the text had it", s.String())
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	kw := "every, daily, weekdays, weekends, weekly, monthly, at, in, cron"
	tests := []struct {
		name, in, want string
		pos            int
	}{
		{"typo keyword", "dayly 8:00", `unknown word "dayly" at 1; did you mean "daily"?; expected ` + kw, 1},
		{"empty", "", "empty schedule at 1; expected " + kw, 1},
		{"blank", "   \t ", "empty schedule at 1; expected " + kw, 1},
		{"hour 25", "daily 25:00", `time out of range "25:00" at 2; expected 00:00 to 23:59:59`, 2},
		{"bad time", "daily 8h", `bad time "8h" at 2; expected HH:MM, HH:MM:SS`, 2},
		{"bad time in list", "daily 08:00,8:7", `bad time "8:7" at 2; expected HH:MM, HH:MM:SS`, 2},
		{"missing time", "daily", "missing time at 2; expected HH:MM, HH:MM:SS", 2},
		{"missing time before tz", "daily tz UTC", "missing time at 2; expected HH:MM, HH:MM:SS", 2},
		{"funday", "weekly funday 09:00", `unknown day "funday" at 2; did you mean "sunday"?; expected mon, tue, wed, thu, fri, sat, sun`, 2},
		{"funday in list", "weekly mon, funday 09:00", `unknown day "funday" at 2; did you mean "sunday"?; expected mon, tue, wed, thu, fri, sat, sun`, 2},
		{"monthly 32", "monthly 32 09:00", `bad day of month "32" at 2; expected 1 to 31, last`, 2},
		{"monthly 0", "monthly 0 09:00", `bad day of month "0" at 2; expected 1 to 31, last`, 2},
		{"bad tz", "daily 08:00 tz Mars/Olympus", `unknown time zone "Mars/Olympus" at 4; expected an IANA zone name such as Europe/Berlin`, 4},
		{"local tz refused", "daily 08:00 tz Local", `unknown time zone "Local" at 4; expected an IANA zone name such as Europe/Berlin`, 4},
		{"missing tz", "daily 08:00 tz", "missing time zone at 4; expected an IANA zone name such as Europe/Berlin", 4},
		{"word after tz", "daily 08:00 tz UTC now", `unexpected word after time zone "now" at 5; expected end of text`, 5},
		{"bad default tz", "daily 08:00", `unknown default time zone "Nowhere/Land"`, 0},
		{"cron 4 fields", "cron */5 * * *", "cron needs 5 fields (min hour dom month dow) or 6 (sec min hour dom month dow), got 4 at 6", 6},
		{"cron 5 fields bad minute", "cron 61 * * * *", `bad cron min "61" at 2; expected min 0-59`, 2},
		{"unknown macro", "@sometimes", `unknown word "@sometimes" at 1; expected ` + kw, 1},
		{"macro with more", "@daily 08:00", `unexpected word "08:00" at 2; expected tz ZONE, end of text`, 2},
		{"@every without duration", "@every", "missing duration at 2; expected a number with unit s, m, h or d (e.g. 30s, 5m, 2h, 1d, 1h30m)", 2},
		{"cron 7 fields", "cron 0 0 0 * * * 2026", `unexpected word "2026" at 8; expected tz ZONE, end of text`, 8},
		{"cron bad minute", "cron 0 61 * * * *", `bad cron min "61" at 3; expected min 0-59`, 3},
		{"cron bad month", "cron 0 0 0 1 foo *", `bad cron month "foo" at 6; expected month 1-12 or jan-dec`, 6},
		{"cron reversed range", "cron 0 0 5-1 * * *", `cron range start after end "5-1" at 4; expected hour 0-23`, 4},
		{"cron bad step", "cron */0 * * * * *", `bad cron step "*/0" at 2; expected a step of 1 to 99`, 2},
		{"cron never fires", "cron 0 0 0 31 2 *", `day of month never occurs in the chosen months "31" at 5`, 5},
		{"cron never fires 30 feb", "cron 0 0 0 30 feb ?", `day of month never occurs in the chosen months "30" at 5`, 5},
		{"every zero", "every 0s", `duration out of range "0s" at 2; expected 1s to 366d`, 2},
		{"every too long", "every 367d", `duration out of range "367d" at 2; expected 1s to 366d`, 2},
		{"every bad unit", "every 5x", `bad duration "5x" at 2; expected a number with unit s, m, h or d (e.g. 30s, 5m, 2h, 1d, 1h30m)`, 2},
		{"every units out of order", "every 30m1h", `bad duration "30m1h" at 2; expected a number with unit s, m, h or d (e.g. 30s, 5m, 2h, 1d, 1h30m)`, 2},
		{"every missing", "every", "missing duration at 2; expected a number with unit s, m, h or d (e.g. 30s, 5m, 2h, 1d, 1h30m)", 2},
		{"at no such date", "at 2026-02-30 10:00", `no such date "2026-02-30" at 2; expected a date from 1000-01-01 to 9999-12-31`, 2},
		{"at bad date", "at tomorrow 10:00", `bad date "tomorrow" at 2; expected YYYY-MM-DD`, 2},
		{"at list refused", "at 2026-01-01 10:00,11:00", `bad time "10:00,11:00" at 3; expected HH:MM, HH:MM:SS`, 3},
		{"extra word", "daily 08:00 17:00", `unexpected word "17:00" at 3; expected tz ZONE, end of text`, 3},
		{"empty list item", "daily 08:00,,09:00", `empty item in list "08:00,,09:00" at 2`, 2},
		{"too long", strings.Repeat("x", MaxTextLen+1), "schedule longer than 256 bytes", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			defTZ := "UTC"
			if tt.name == "bad default tz" || tt.name == "suffix ignores bad default" {
				defTZ = "Nowhere/Land"
			}
			s, err := Parse(tt.in, defTZ)
			if err == nil {
				t.Fatalf("Parse(%q) = %q, want error", tt.in, s)
			}
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("Parse(%q) error %T, want *ParseError", tt.in, err)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("Parse(%q) error\n got: %s\nwant: %s", tt.in, got, tt.want)
			}
			if pe.Pos != tt.pos {
				t.Errorf("Parse(%q) Pos = %d, want %d", tt.in, pe.Pos, tt.pos)
			}
		})
	}
}

func TestParseCanonicalTooLong(t *testing.T) {
	t.Parallel()
	// 24 times of 7 bytes grow by one byte each in canonical form.
	times := make([]string, 24)
	for i := range times {
		times[i] = fmt.Sprintf("9:%02d:%02d", i, i+1)
	}
	in := "monthly 1,3,5,7,9,11,13,15 " + strings.Join(times, ",") + " tz America/Argentina/Buenos_Aires"
	if len(in) > MaxTextLen {
		t.Fatalf("test input is %d bytes, want <= %d", len(in), MaxTextLen)
	}
	_, err := Parse(in, "")
	var pe *ParseError
	if !errors.As(err, &pe) || !strings.Contains(pe.Msg, "canonical form") {
		t.Fatalf("Parse(%d bytes) error = %v, want canonical-length error", len(in), err)
	}
}

func TestParseDefaultLocationIsNotMutated(t *testing.T) {
	t.Parallel()
	s, err := Parse("daily 08:00", "")
	if err != nil {
		t.Fatal(err)
	}
	if s.Location() != time.UTC {
		t.Fatalf("Location() = %v, want time.UTC", s.Location())
	}
}
