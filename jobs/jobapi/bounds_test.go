package jobapi

import (
	"errors"
	"strings"
	"testing"
	"time"

	"cronsheet/task"
)

// TestBuildRefusesAtFarInThePast: an "at" at the epoch or in 2020 is
// refused naming at and how far in the past it is; one a minute ago is
// taken as now (due at once, not a missed slot); a negative delay stays
// refused.
func TestBuildRefusesAtFarInThePast(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ at, msg string }{
		{"1970-01-01T00:00:00Z", "1970-01-01T00:00:00Z is 20787 days in the past"},
		{"2020-06-01T00:00:00Z", "2020-06-01T00:00:00Z is 2373 days in the past"},
		{now.Add(-25 * time.Hour).Format(time.RFC3339), "is 25 hours in the past"},
	} {
		_, err := build(t, `{"method":"POST","name":"http://h/","at":"`+c.at+`"}`)
		var ve *task.ValidationError
		if !errors.As(err, &ve) || ve.Field != "at" || !strings.Contains(ve.Msg, c.msg) ||
			!strings.Contains(ve.Msg, "at most 24 hours ago") {
			t.Errorf("at %s: error %v, want field at saying %q and the grace", c.at, err, c.msg)
		}
	}
	for _, ago := range []time.Duration{time.Minute, 23 * time.Hour} {
		at := now.Add(-ago).Format(time.RFC3339Nano)
		b, err := build(t, `{"method":"POST","name":"http://h/","at":"`+at+`"}`)
		if err != nil || !b.Task.Job.DueAt.Equal(now.Truncate(time.Millisecond)) {
			t.Errorf("at %s (%s ago): %v, due %s; want due now (%s)", at, ago, err, b.Task.Job.DueAt, now)
		}
	}
	_, err := build(t, `{"method":"POST","name":"http://h/","delay":-5}`)
	var ve *task.ValidationError
	if !errors.As(err, &ve) || ve.Field != "delay" {
		t.Errorf("delay -5: error %v, want a refusal naming delay", err)
	}
}

// TestBuildBoundsWait: a wait above task.MaxJobWait is refused naming wait
// and the maximum, and that maximum leaves the HTTP server time to answer.
func TestBuildBoundsWait(t *testing.T) {
	t.Parallel()
	_, err := build(t, `{"method":"POST","name":"http://h/","wait":62}`)
	var ve *task.ValidationError
	if !errors.As(err, &ve) || ve.Field != "wait" || !strings.Contains(ve.Msg, "must be 0 to 50 seconds") ||
		!strings.Contains(ve.Msg, "got 62") {
		t.Errorf("wait 62: error %v, want field wait with the maximum 50", err)
	}
	b, err := build(t, `{"method":"POST","name":"http://h/","wait":50}`)
	if err != nil || b.Wait != 50*time.Second {
		t.Errorf("wait 50: %v, wait %s; want it taken", err, b.Wait)
	}
}
