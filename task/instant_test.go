package task

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestCheckInstant(t *testing.T) {
	t.Parallel()
	epoch := time.Unix(0, 0).UTC()
	end := time.Date(9999, 12, 31, 23, 59, 59, 999_000_000, time.UTC)
	tests := []struct {
		name string
		t    time.Time
		ok   bool
	}{
		{"Zero", time.Time{}, false},
		{"BeforeEpoch", epoch.Add(-time.Millisecond), false},
		{"Epoch", epoch, true},
		{"Now", time.Date(2026, 12, 1, 8, 30, 0, 0, time.UTC), true},
		{"EndOf9999", end, true},
		{"Year10000", time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), false},
		{"OtherZoneSameInstant", epoch.In(time.FixedZone("X", -3600)), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := CheckInstant("at", tt.t)
			if tt.ok {
				if err != nil {
					t.Fatalf("CheckInstant(%s) = %v, want nil", tt.t, err)
				}
				return
			}
			var ve *ValidationError
			if !errors.As(err, &ve) || ve.Field != "at" || !strings.Contains(ve.Msg, "out of range") {
				t.Fatalf("CheckInstant(%s) = %v, want an out-of-range error on at", tt.t, err)
			}
		})
	}
}
