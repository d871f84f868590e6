package mapping_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"cronsheet/fire"
	"cronsheet/mapping"
	"cronsheet/task"
)

// TestSubSecondActivationFiresFirstSlot maps rows activated at a
// sub-second instant and plans them with the real slot calculator: the
// first slot strictly after the activation instant fires, whatever the
// fraction of a second.
func TestSubSecondActivationFiresFirstSlot(t *testing.T) {
	t.Parallel()
	s, err := mapping.New(mapping.MemosConfig())
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 12, 1, 8, 0, 30, 0, time.UTC)
	tests := []struct {
		name string
		when string
		now  time.Time
		want time.Time // the first slot
	}{
		{"AtHalfSecondBefore", "at 2026-12-01 08:00:31", base.Add(500 * time.Millisecond), base.Add(time.Second)},
		{"AtNanosecondBefore", "at 2026-12-01 08:00:31", base.Add(time.Second - time.Nanosecond), base.Add(time.Second)},
		{"AtWholeSecondBefore", "at 2026-12-01 08:00:31", base, base.Add(time.Second)},
		{"CronEverySecond", "cron * * * * * *", base.Add(500 * time.Millisecond), base.Add(time.Second)},
		{"CronEverySecondWhole", "cron * * * * * *", base, base.Add(time.Second)},
		{"DailyNextSecond", "daily 08:00:31", base.Add(999 * time.Millisecond), base.Add(time.Second)},
		{"EveryCountsFromActivationSecond", "every 30s", base.Add(500 * time.Millisecond), base.Add(30 * time.Second)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			row := &task.Row{Scenario: "memos", ID: "r1", Fields: map[string]any{"when": tt.when}}
			tk, err := s.ToTask(row, tt.now)
			if err != nil {
				t.Fatalf("ToTask at %s: %v", tt.now.Format(time.RFC3339Nano), err)
			}
			sched, err := mapping.Schedule(tk)
			if err != nil {
				t.Fatal(err)
			}
			plan := fire.MakePlan(fire.NewSlots(tk, sched), tk.Misfire, time.Time{}, tt.now)
			if len(plan.Missed) != 0 || !plan.Next.Equal(tt.want) {
				t.Errorf("plan at %s = missed %v, next %s; want next %s",
					tt.now.Format(time.RFC3339Nano), plan.Missed, plan.Next.Format(time.RFC3339Nano), tt.want.Format(time.RFC3339Nano))
			}
			if !plan.Next.After(tt.now) {
				t.Errorf("first slot %s is not after the activation %s", plan.Next, tt.now)
			}
		})
	}
}

// TestOnceThatCannotFireIsRefused: a one-shot whose slot is past, or lies
// outside the row's start/end window, is refused with the reason instead
// of being saved as active and never firing.
func TestOnceThatCannotFireIsRefused(t *testing.T) {
	t.Parallel()
	s, err := mapping.New(mapping.MemosConfig())
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 1, 8, 0, 30, 500_000_000, time.UTC)
	tests := []struct {
		name   string
		fields map[string]any
		field  string
		reason string
	}{
		{"AtThisSecond", map[string]any{"when": "at 2026-12-01 08:00:30"}, "when", "is in the past"},
		{"AtAfterEnd", map[string]any{"when": "at 2026-12-01 09:00", "end": "2026-12-01 08:30"}, "when", "after the end"},
		{"AtBeforeStart", map[string]any{"when": "at 2026-12-01 09:00", "start": "2026-12-01 09:30"}, "when", "before the start"},
		{"InAfterEnd", map[string]any{"when": "in 2h", "end": "2026-12-01 09:00"}, "when", "after the end"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := s.ToTask(&task.Row{Scenario: "memos", ID: "r1", Fields: tt.fields}, now)
			var ve *task.ValidationError
			if !errors.As(err, &ve) || ve.Field != tt.field || !strings.Contains(ve.Msg, tt.reason) {
				t.Fatalf("err = %v, want a validation error on %q saying %q", err, tt.field, tt.reason)
			}
		})
	}
}
