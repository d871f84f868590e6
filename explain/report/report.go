// Package report holds the answer of "why did / didn't / will / won't this
// task fire?" (GET /api/v1/tasks/:task_id/explain): the verdict, one
// sentence in English and in Simplified Chinese, and the checks behind it.
//
// It is the wire type shared by the explain package, which computes it
// from the engine's own rules, and the tasks API, which serves it; so it
// imports nothing of the project.
package report

import "time"

// Verdict is the answer for one task and one slot.
type Verdict string

// The verdicts: a slot in the past fired or did not; a slot ahead will
// fire or will not.
const (
	Fired       Verdict = "fired"
	WillFire    Verdict = "will_fire"
	DidNotFire  Verdict = "did_not_fire"
	WillNotFire Verdict = "will_not_fire"
)

// CheckVerdict is one check's outcome: pass and fail decide, info only
// informs.
type CheckVerdict string

// The outcomes of a check.
const (
	Pass CheckVerdict = "pass"
	Fail CheckVerdict = "fail"
	Info CheckVerdict = "info"
)

// The rules, in the order the checks are made.
const (
	RuleRow       = "row"        // the row is switched on and synced
	RuleTaskState = "task_state" // running / stopped / closed, done
	RuleWindow    = "window"     // start and end times, the schedule's activation
	RuleSchedule  = "schedule"   // the slot computed in the task's zone
	RuleTarget    = "target"     // one target's state
	RuleAdmission = "admission"  // one target's cc group, host rate and host guard
	RuleHealth    = "health"     // how the last deliveries to each target (and its probe) ended
	RuleOverlap   = "overlap"    // a run in flight at the slot
	RuleMisfire   = "misfire"    // a slot missed while no node held the task
	RuleClaim     = "claim"      // the node holding the task and its lease
	RuleLedger    = "ledger"     // the runs recorded for the slot
)

// Check is one rule applied to the task and the slot.
type Check struct {
	// Rule names the rule (the Rule constants).
	Rule string `json:"rule"`
	// Verdict is pass, fail or info.
	Verdict CheckVerdict `json:"verdict"`
	// Detail says what the rule found, in English; DetailZH in Simplified
	// Chinese.
	Detail   string `json:"detail"`
	DetailZH string `json:"detail_zh"`
	// Data is what the rule read (never a secret).
	Data map[string]any `json:"data,omitempty"`
}

// Answer is the explanation of one task at one slot.
type Answer struct {
	TaskID string `json:"task_id"`
	// At is the instant asked about; Slot the task's slot it names (the
	// first at or after At), zero when the schedule has none.
	At   time.Time `json:"at"`
	Slot time.Time `json:"slot,omitzero"`
	// Verdict says whether the slot fired (fired, did_not_fire) or will
	// (will_fire, will_not_fire).
	Verdict Verdict `json:"verdict"`
	// Rule names the check that decided (the first that failed, or the
	// ledger for a slot that fired); "" when every check passed.
	Rule string `json:"rule,omitempty"`
	// Sentence says it in one sentence, naming the deciding rule;
	// SentenceZH in Simplified Chinese.
	Sentence   string `json:"sentence"`
	SentenceZH string `json:"sentence_zh"`
	// Checks are the rules applied, in order.
	Checks []Check `json:"checks"`
}
