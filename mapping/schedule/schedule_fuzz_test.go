package schedule

import (
	"errors"
	"testing"
	"time"
)

// FuzzParse checks that Parse never panics, that canonical text is stable
// and fires the same, and that Next moves strictly forward.
func FuzzParse(f *testing.F) {
	seeds := []string{
		"every 30s", "every 5m", "every 2h", "every 1d", "every 1h30m", "every 60s",
		"in 30m", "in 1d1s",
		"daily 08:30", "daily 8:30:15", "daily 02:15,02:45,17:00",
		"weekdays 09:00", "weekends 10:00",
		"weekly mon,thu 09:00", "weekly fri-mon 02:30", "weekly Sunday 01:30",
		"monthly 1,15 09:00", "monthly last 18:00", "monthly 28-31,last 02:30",
		"at 2026-12-01 15:00", "at 2026-03-29 02:30:30",
		"cron */10 * * * * *", "cron 0 30 2 * * sun", "cron 0 0 9 1 * mon", "cron 0 0 0 */2 * 1-5",
		"cron 0 0 0 29 2 */7", "cron 0 0 0 31 2 *", "cron 0 5-55/10 * * jan,dec ?",
		"daily 08:00 tz Asia/Shanghai", "cron 0 0 * * * * tz America/Santiago", "every 1h tz utc",
		"dayly 8:00", "daily 25:00", "weekly funday 09:00", "monthly 32 09:00",
		"daily 08:00 tz Mars/Olympus", "", "cron */5 * * * *",
		"每天早上8点半", "每周一、三至五 9:00、17:30", "每月1号、最后一天 下午3点", "每隔两个小时", "10分钟后",
		"2026年12月1日 15点 tz Asia/Shanghai", "每月1 9点", "每天二十三点五十九分",
	}
	for i, s := range seeds {
		f.Add(s, int64(i)*7919*86400)
	}
	f.Fuzz(func(t *testing.T, text string, afterOffset int64) {
		s, err := Parse(text, "Europe/Berlin")
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || err.Error() == "" {
				t.Fatalf("Parse(%q) error %T %q, want a *ParseError", text, err, err)
			}
			return
		}
		again, err := Parse(s.String(), "Europe/Berlin")
		if err != nil {
			t.Fatalf("Parse(%q) = %q, which fails to parse: %v", text, s, err)
		}
		if again.String() != s.String() {
			t.Fatalf("Parse(%q) = %q, which re-parses as %q", text, s, again)
		}
		// after anywhere from 1900 to 2300.
		const span = 400 * 366 * 86400
		off := afterOffset % span
		if off < 0 {
			off += span
		}
		after := time.Unix(-2208988800+off, 0)
		anchor := after.Add(-90 * time.Minute)
		a, b := s.NextN(after, anchor, 8), again.NextN(after, anchor, 8)
		if len(a) != len(b) {
			t.Fatalf("%q: %d fires, canonical %d", s, len(a), len(b))
		}
		prev := after
		for i := range a {
			if !a[i].After(prev) {
				t.Fatalf("%q: fire %v not after %v", s, a[i], prev)
			}
			if !a[i].Equal(b[i]) {
				t.Fatalf("%q: fire %d %v, canonical %v", s, i, a[i], b[i])
			}
			prev = a[i]
		}
	})
}
