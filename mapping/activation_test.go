package mapping_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"cronsheet/mapping"
	"cronsheet/task"
)

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
