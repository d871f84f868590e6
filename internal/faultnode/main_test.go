package main

import (
	"math"
	"testing"
	"time"

	"cronsheet/store/faulty"
)

// TestParseFaults: the rules of a CRONSHEET_FAULTS value together fail
// about one call in every, each mode as often as the others, inside the
// window asked; a bad value is refused with its key.
func TestParseFaults(t *testing.T) {
	now := time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC)
	seed, rules, err := parseFaults("seed=9 every=20 modes=before,after,timeout start=30s for=2m methods=UpdateRun", now)
	if err != nil {
		t.Fatal(err)
	}
	if seed != 9 || len(rules) != 3 {
		t.Fatalf("seed %d, %d rules; want 9 and 3", seed, len(rules))
	}
	pass := 1.0 // the chance a call gets past the rules before
	for i, r := range rules {
		if got := pass * r.Chance; math.Abs(got-1.0/60) > 1e-9 {
			t.Errorf("rule %d (%v) hits %.5f of the calls, want 1/60", i, r.Mode, got)
		}
		pass *= 1 - r.Chance
		if !r.From.Equal(now.Add(30*time.Second)) || !r.Until.Equal(now.Add(150*time.Second)) {
			t.Errorf("rule %d window %s–%s", i, r.From, r.Until)
		}
		if len(r.Methods) != 1 || r.Methods[0] != "UpdateRun" {
			t.Errorf("rule %d methods %v", i, r.Methods)
		}
	}
	if rules[2].Mode != faulty.Timeout {
		t.Errorf("third mode %v, want timeout", rules[2].Mode)
	}
	for _, bad := range []string{"", "every=0", "every=5 modes=sometimes", "every=5 colour=red", "every=5 for=soon"} {
		if _, _, err := parseFaults(bad, now); err == nil {
			t.Errorf("parseFaults(%q) accepted it", bad)
		}
	}
}
