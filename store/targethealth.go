package store

import (
	"context"
	"time"

	"cronsheet/task"
)

// TargetHealthBook keeps each target's health (task.TargetHealth): the
// outcomes of the delivery attempts to it and of its probe. Both drivers
// offer it (Product); storetest.RunTargetHealth is its conformance suite.
//
// What is stored per target and source (deliveries, probe): S, the last
// success's instant; F, the last failure's instant, and E its error; C,
// a count of failures, and B, the S the count started after. Recording
// outcome o:
//
//	o.Success set:  S = max(S, o.Success)
//	o.Failure set:  if o.Failure > F: F, E = o.Failure, o.Error
//	                if o.Failure > S: C = (B == S ? C : 0) + o.Failures; B = S
//
// and failures in a row read as 0 when F <= S, else C when B == S, else
// 1 (a success that landed after failures newer than it: at least the
// last failure follows it). A success thus resets the count whenever it
// is newer than every failure stored, however the writes interleave, and
// the count never goes below 0. The instants are those of the nodes that
// recorded them; clocks that disagree by more than the gap between two
// outcomes can order them wrongly.
type TargetHealthBook interface {
	// RecordTargetOutcomes records outcomes as above, each in one step;
	// an outcome without a target id, or with neither instant, is
	// task.ErrInvalid (nothing of the call is then recorded).
	RecordTargetOutcomes(ctx context.Context, outcomes []TargetOutcome) error
	// TargetHealth returns the health of each of ids that has any
	// outcome recorded (a target never delivered to nor probed is
	// absent from the map).
	TargetHealth(ctx context.Context, ids []string) (map[string]task.TargetHealth, error)
	// ClaimTargetProbe claims the probe of target for the interval that
	// starts at slot: true for exactly one caller per target and slot,
	// false for the others and for a slot not after the last one
	// claimed.
	ClaimTargetProbe(ctx context.Context, target string, slot time.Time) (bool, error)
}

// TargetOutcome is what one or more attempts at a target ended with
// (a caller may fold the outcomes of a short while into one).
type TargetOutcome struct {
	Target string
	// Probe says the attempts were the target's probe, not deliveries.
	Probe bool
	// Success is when the last successful attempt ended (zero: none).
	Success time.Time
	// Failure is when the last failed attempt ended (zero: none) and
	// Error its error (cut at task.MaxHealthError bytes).
	Failure time.Time
	Error   string
	// Failures counts the failed attempts after Success (all of them
	// when Success is zero); taken as 1 when Failure is set and it is
	// less.
	Failures int
}

// CheckTargetOutcomes checks outcomes as RecordTargetOutcomes does, and
// returns them with Failures at least 1 where a failure is set and the
// error cut to task.MaxHealthError.
func CheckTargetOutcomes(outcomes []TargetOutcome) ([]TargetOutcome, error) {
	out := make([]TargetOutcome, len(outcomes))
	for i, o := range outcomes {
		if o.Target == "" {
			return nil, task.Invalid("target", "required")
		}
		if o.Success.IsZero() && o.Failure.IsZero() {
			return nil, task.Invalid("outcome", "neither a success nor a failure")
		}
		if !o.Failure.IsZero() {
			o.Failures = max(o.Failures, 1)
			o.Error = task.Truncate(o.Error, task.MaxHealthError)
		} else {
			o.Failures, o.Error = 0, ""
		}
		out[i] = o
	}
	return out, nil
}

// HealthParts are the stored parts of one source's health (see
// TargetHealthBook): S, F, E, C and B, instants in Unix milliseconds.
type HealthParts struct {
	S, F, B int64
	E       string
	C       int
}

// Apply records o in h as TargetHealthBook says (instants in Unix ms).
func (h HealthParts) Apply(o TargetOutcome) HealthParts {
	if !o.Success.IsZero() {
		h.S = max(h.S, UnixMS(o.Success))
	}
	if o.Failure.IsZero() {
		return h
	}
	f := UnixMS(o.Failure)
	if f > h.F {
		h.F, h.E = f, o.Error
	}
	if f > h.S {
		if h.B != h.S {
			h.C = 0
		}
		h.C += o.Failures
		h.B = h.S
	}
	return h
}

// Record is h as a task.HealthRecord.
func (h HealthParts) Record() task.HealthRecord {
	r := task.HealthRecord{LastSuccess: FromUnixMS(h.S), LastFailure: FromUnixMS(h.F), LastError: h.E}
	switch {
	case h.F <= h.S:
	case h.B == h.S:
		r.FailuresInARow = max(h.C, 1)
	default:
		r.FailuresInARow = 1
	}
	return r
}
