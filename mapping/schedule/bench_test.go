package schedule

import (
	"testing"
	"time"
)

func BenchmarkNext(b *testing.B) {
	cases := []struct{ name, text string }{
		{"cron", "cron */10 * * * * *"},
		{"cron_weekdays", "cron 0 30 9 * * mon-fri tz America/New_York"},
		{"cron_rare", "cron 0 0 0 29 2 */7"},
		{"daily", "daily 08:30 tz Europe/Berlin"},
		{"monthly_last", "monthly last 18:00 tz Europe/Berlin"},
		{"every", "every 5m"},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			s := mustParse(b, c.text, "UTC")
			after := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
			anchor := after
			b.ReportAllocs()
			for b.Loop() {
				after = s.Next(after, anchor)
				if after.Year() > 2200 { // keep the rare case cycling
					after = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
				}
			}
		})
	}
}

func BenchmarkParse(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse("cron 0 30 9 * * mon-fri tz America/New_York", "UTC"); err != nil {
			b.Fatal(err)
		}
	}
}
