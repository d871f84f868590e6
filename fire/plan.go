package fire

import (
	"time"

	"cronsheet/mapping/schedule"
	"cronsheet/task"
)

// maxMisfireScan bounds how many missed slots Plan walks to find the latest
// one; beyond it the latest slot seen so far stands for the rest.
const maxMisfireScan = 100_000

// Slots computes a task's fire instants, honouring start and end times.
type Slots struct {
	sched *schedule.Schedule
	// anchor is where intervals count from: the start time when given,
	// else the instant the schedule became active.
	anchor time.Time
	// floor: every slot lies strictly after it. It is the instant the
	// schedule became active (no slot from before the task existed counts
	// as missed) or just before the start time, whichever is later.
	floor time.Time
	end   time.Time
	once  bool
}

// NewSlots returns the slot calculator for t with its parsed schedule.
func NewSlots(t *task.Task, s *schedule.Schedule) Slots {
	anchor, floor := t.Anchor, t.Anchor
	if t.Job != nil && t.CronPara == "" {
		// A delayed job's due time always counts, however late it is armed
		// (after a block, after downtime): the ledger keeps it once.
		floor = time.Time{}
	}
	if !t.StartTime.IsZero() {
		anchor = t.StartTime
		// A wall-clock slot exactly at the start time fires.
		if f := t.StartTime.Add(-time.Nanosecond); f.After(floor) {
			floor = f
		}
	}
	return Slots{
		sched:  s,
		anchor: anchor,
		floor:  floor,
		end:    t.EndTime,
		once:   t.ExecuteType == task.Once || s.IsOnce(),
	}
}

// Once reports whether the task fires a single slot.
func (s Slots) Once() bool { return s.once }

// Next returns the first slot strictly after `after` that lies inside the
// task's start/end window, or zero when there is none.
func (s Slots) Next(after time.Time) time.Time {
	if after.Before(s.floor) {
		// Never before the schedule became active, nor before the start.
		after = s.floor
	}
	next := s.sched.Next(after, s.anchor)
	if next.IsZero() || (!s.end.IsZero() && next.After(s.end)) {
		return time.Time{}
	}
	return next
}

// Plan says what to do when a task is armed.
type Plan struct {
	// Missed are the slots to fire now as misfires, oldest first.
	Missed []time.Time
	// Next is the next slot after now, or zero when the schedule has ended.
	Next time.Time
	// Skipped counts missed slots that the policy dropped.
	Skipped int
}

// MakePlan computes the misfires and the next slot for a task whose latest
// fired slot is last (zero when it never fired), at instant now.
//
// A once schedule counts as fired only when last is its own slot: a new
// `at`, or an `in 30m` re-activated (a new anchor), is a new slot and
// fires, whatever fired before under the task id.
func MakePlan(s Slots, policy task.Misfire, last, now time.Time) Plan {
	if s.once {
		if first := s.Next(time.Time{}); first.IsZero() || (!last.IsZero() && last.Equal(first)) {
			return Plan{} // its only slot already fired, or it has none
		}
		last = time.Time{}
	}
	var missed []time.Time
	total := 0
	for slot := s.Next(last); !slot.IsZero() && !slot.After(now); slot = s.Next(slot) {
		total++
		switch policy {
		case task.MisfireAll:
			if len(missed) < task.MaxMisfireSlots {
				missed = append(missed, slot)
			}
		default:
			missed = append(missed[:0], slot) // keep the latest
		}
		if s.once || total >= maxMisfireScan {
			break
		}
	}
	p := Plan{}
	switch {
	case policy == task.MisfireSkip:
		p.Skipped = total
	default:
		p.Missed = missed
		p.Skipped = total - len(missed)
	}
	if s.once && total > 0 {
		return p // its only slot is due now (or was skipped)
	}
	p.Next = s.Next(now)
	return p
}
