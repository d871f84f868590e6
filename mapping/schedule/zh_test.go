package schedule

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseChinese(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"每天 8点", "daily 08:00"},
		{"每天早上8点", "daily 08:00"},
		{"每天晚上9点", "daily 21:00"},
		{"每日 9:00、17:30", "daily 09:00,17:30"},
		{"每天下午3点和5点", "daily 15:00,17:00"},
		{"每天上午十点半", "daily 10:30"},
		{"每天8点15分", "daily 08:15"},
		{"每天8点一刻", "daily 08:15"},
		{"每天 23:59:30", "daily 23:59:30"},
		{"每天中午12点", "daily 12:00"},
		{"每天中午1点", "daily 13:00"},
		{"每天凌晨两点", "daily 02:00"},
		{"每天晚上12点", "daily 00:00"},
		{"每天１０：３０", "daily 10:30"},
		{"工作日 9:00", "weekdays 09:00"},
		{"每个工作日上午9点", "weekdays 09:00"},
		{"周末 10点", "weekends 10:00"},
		{"每周末上午十点", "weekends 10:00"},
		{"每周一 10点", "weekly mon 10:00"},
		{"每周一10点", "weekly mon 10:00"},
		{"每周一、三 9点", "weekly mon,wed 09:00"},
		{"每周一、周三、周五 9:00", "weekly mon,wed,fri 09:00"},
		{"每周一至周五 9点", "weekdays 09:00"},
		{"每星期日 20:00", "weekly sun 20:00"},
		{"每周六、日 10点", "weekends 10:00"},
		{"每周一 9点、18点", "weekly mon 09:00,18:00"},
		{"每月1号 9点", "monthly 1 09:00"},
		{"每月1日和15日 9点", "monthly 1,15 09:00"},
		{"每月1 9点", "monthly 1 09:00"},
		{"每月最后一天 18:00", "monthly last 18:00"},
		{"每月1号、最后一天 9点", "monthly 1,last 09:00"},
		{"每月1号至5号 9点", "monthly 1,2,3,4,5 09:00"},
		{"每月底 18点", "monthly last 18:00"},
		{"每隔5分钟", "every 5m"},
		{"每5分钟", "every 5m"},
		{"每 5 分钟", "every 5m"},
		{"每小时", "every 1h"},
		{"每半小时", "every 30m"},
		{"每隔两个小时", "every 2h"},
		{"每2天", "every 2d"},
		{"每30秒", "every 30s"},
		{"10分钟后", "in 10m"},
		{"2小时后", "in 2h"},
		{"2026年12月1日 15点", "at 2026-12-01 15:00"},
		{"2026年1月2号下午3点半", "at 2026-01-02 15:30"},
		{"每天 8点 tz Asia/Shanghai", "daily 08:00 tz Asia/Shanghai"},
	}
	for _, tt := range tests {
		s, err := Parse(tt.in, "")
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if s.String() != tt.want {
			t.Errorf("Parse(%q) = %q, want %q", tt.in, s.String(), tt.want)
		}
	}
}

// A Chinese phrase and its English form fire at the same instants.
func TestParseChineseFiresAsEnglish(t *testing.T) {
	t.Parallel()
	zh, err := Parse("每周一 10点", "Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	en, err := Parse("weekly mon 10:00", "Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	from := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)
	got, want := zh.NextN(from, from, 5), en.NextN(from, from, 5)
	if len(got) != 5 || !slices.EqualFunc(got, want, time.Time.Equal) {
		t.Fatalf("fires %v, want %v", got, want)
	}
}

func TestParseChineseErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"每天", "missing time"},
		{"每周八 9点", "unknown day of the week"},
		{"每月32号 9点", `bad day of month "32" (每月32号 9点 read as "monthly 32 9:00"); expected 1 to 31`},
		{"每天25点", `read as "daily 25:00"`},
		{"随便什么时候", "unknown Chinese schedule phrase"},
		{"每天8点 然后", "unexpected words"},
		{"10分钟", "a duration must end with 后"},
		{"2026年13月1日 9点", "read as"},
		{"2026年12月1日 9点、10点", "a date takes one time"},
	}
	for _, tt := range tests {
		_, err := Parse(tt.in, "")
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("Parse(%q) = %v, want a *ParseError", tt.in, err)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q) error %q, want it to contain %q", tt.in, err, tt.want)
		}
	}
}

func TestParseSuggests(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"dayly 08:00", `unknown word "dayly" at 1; did you mean "daily"?; expected every`},
		{"weekdys 09:00", `did you mean "weekdays"?`},
		{"mothly 1 09:00", `did you mean "monthly"?`},
		{"@hourlly", `did you mean "@hourly"?`},
		{"weekly mnday 09:00", `unknown day "mnday" at 2; did you mean "monday"?`},
		{"weekly mon-fir 09:00", `did you mean "fri"?`},
		{"daily 08:00 zt UTC", `unexpected word "zt" at 3; did you mean "tz"?`},
	}
	for _, tt := range tests {
		_, err := Parse(tt.in, "")
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q) error %v, want it to contain %q", tt.in, err, tt.want)
		}
	}
	// Far from every keyword, or equally near two: no guess.
	for _, in := range []string{"xyzzy 08:00", "weekly xx 09:00"} {
		if _, err := Parse(in, ""); err == nil || strings.Contains(err.Error(), "did you mean") {
			t.Errorf("Parse(%q) error %v, want no suggestion", in, err)
		}
	}
}

func TestEditDistance(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		a, b string
		want int
	}{{"", "abc", 3}, {"daily", "daily", 0}, {"dayly", "daily", 1}, {"fir", "fri", 1}, {"kitten", "sitting", 3}, {"周一", "周二", 1}} {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
