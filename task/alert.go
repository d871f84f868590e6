package task

import (
	"fmt"
	"strings"
	"time"
)

// TriggerAlert marks a run that tells a task's alert targets about its
// failures (Alert).
const TriggerAlert TriggerType = "alert"

// AlertTargetPrefix starts the ledger target of an alert run: "alert:"
// and the alert target's id, so an alert never takes the ledger key of a
// delivery to the same target.
const AlertTargetPrefix = "alert:"

// Bounds and defaults of Alert.
const (
	MaxAlertTargets   = 8
	MaxAlertAfter     = 100
	DefaultAlertEvery = 10 * time.Minute
)

// Alert says whom to tell when a task keeps failing: after After
// consecutive runs that ended dead or timed out (1 = each one), each of
// Targets gets an alert run, at most once per Every. Alert runs are
// recorded in the task's ledger like its other runs (trigger type alert),
// so every node agrees on them.
type Alert struct {
	Targets []string `json:"targets"`
	// To is the recipient for email and SMS alert targets (their runs
	// carry it as the "to" param).
	To string `json:"to,omitempty"`
	// After is how many consecutive failed runs raise an alert; 0 = 1.
	After int `json:"after,omitempty"`
	// Every bounds how often the task alerts; 0 = DefaultAlertEvery.
	Every time.Duration `json:"every,omitempty"`
	// Absent, when set, also alerts when an expected slot has not fired
	// within Absent of its instant (no node fired it: all down, the store
	// refused it, the task stuck); 0 = no absence alerts, else
	// MinAlertAbsent to a week.
	Absent time.Duration `json:"absent,omitempty"`
}

// MinAlertAbsent is the shortest Alert.Absent: a fire is recorded within
// moments of its instant, so less would alert on slots being fired.
const MinAlertAbsent = 10 * time.Second

// Validate checks the alert's bounds; field names are prefixed with
// prefix (the caller's name for the alert).
func (a *Alert) Validate(prefix string) error {
	if len(a.Targets) == 0 || len(a.Targets) > MaxAlertTargets {
		return Invalid(prefix+"targets", "name 1 to %d alert targets", MaxAlertTargets)
	}
	for _, id := range a.Targets {
		if id == "" || strings.ContainsAny(id, ", \t\n") || len(id) > 128 {
			return Invalid(prefix+"targets", "%q is not a target id", id)
		}
	}
	if a.After < 0 || a.After > MaxAlertAfter {
		return Invalid(prefix+"after", "must be 1 to %d failed runs", MaxAlertAfter)
	}
	if a.Every < 0 || a.Every > 7*24*time.Hour {
		return Invalid(prefix+"every", "must be at most a week")
	}
	if a.Absent != 0 && (a.Absent < MinAlertAbsent || a.Absent > 7*24*time.Hour) {
		return Invalid(prefix+"absent", "must be 0 (off) or %s to a week", MinAlertAbsent)
	}
	if len(a.To) > 254 {
		return Invalid(prefix+"to", "at most 254 characters")
	}
	return nil
}

// Threshold is After with its default.
func (a *Alert) Threshold() int { return max(a.After, 1) }

// Interval is Every with its default.
func (a *Alert) Interval() time.Duration {
	if a.Every <= 0 {
		return DefaultAlertEvery
	}
	return a.Every
}

// AbsentMessage is the text of an alert about t's slot that did not fire
// (now is when the absence was seen).
func AbsentMessage(t *Task, slot, now time.Time) string {
	return fmt.Sprintf("cronsheet: task %s did not fire its slot %s (%s late)",
		t.TaskID, slot.UTC().Format(time.RFC3339), now.Sub(slot).Truncate(time.Second))
}

// AbsentTargetPrefix starts the ledger target of an absence alert run:
// "absent:" and the alert target's id, so an absence alert and a failure
// alert of the same slot are each recorded once.
const AbsentTargetPrefix = "absent:"

// AlertMessage is the text of an alert about t after failures consecutive
// failed runs, the last one r.
func AlertMessage(t *Task, r *Run, failures int) string {
	return fmt.Sprintf("cronsheet: task %s failed %d time(s) in a row; last run %s (slot %s) ended %s: %s",
		t.TaskID, failures, r.TriggerID, r.Slot.UTC().Format(time.RFC3339), r.State, r.Error)
}
