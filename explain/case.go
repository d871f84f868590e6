package explain

import (
	"context"
	"fmt"
	"slices"
	"time"

	"cronsheet/explain/report"
	"cronsheet/fire"
	"cronsheet/mapping"
	"cronsheet/mapping/schedule"
	"cronsheet/task"
)

// kase is one explanation being made: the task, the slot and the checks
// so far.
type kase struct {
	t        *task.Task
	now, at  time.Time
	defaults bool // at was not given
	slot     time.Time
	past     bool // the slot is not after now
	loc      *time.Location
	sched    *schedule.Schedule
	schedErr error
	slots    fire.Slots
	records  []*task.Run // the ledger's runs of the slot (alerts aside)
	checks   []report.Check
	// failing names a target whose last deliveries failed (checkHealth):
	// a slot that will fire is then told with that warning.
	failing *text
}

// newCase reads t's schedule, picks the slot for at (see Explain) and
// reads the ledger's records of it.
func (e *Explainer) newCase(ctx context.Context, t *task.Task, at time.Time) (*kase, error) {
	c := &kase{t: t, now: e.d.Now(), at: at, defaults: at.IsZero(), loc: time.UTC}
	if loc, err := time.LoadLocation(t.TZ); err == nil && t.TZ != "" {
		c.loc = loc
	}
	c.sched, c.schedErr = mapping.Schedule(t)
	if c.schedErr == nil {
		c.slots = fire.NewSlots(t, c.sched)
		if err := e.pickSlot(ctx, c); err != nil {
			return nil, err
		}
	}
	if c.defaults {
		c.at = c.now
	}
	if !c.defaults {
		// An instant the ledger holds (a run's, a manual one's too) is
		// its own slot.
		if recs, err := e.recordsAt(ctx, t.TaskID, c.at); err != nil || len(recs) > 0 {
			c.slot, c.records = c.at, recs
			c.past = !c.slot.After(c.now)
			return c, err
		}
	}
	c.past = !c.slot.IsZero() && !c.slot.After(c.now)
	if c.slot.IsZero() {
		return c, nil
	}
	var err error
	c.records, err = e.recordsAt(ctx, t.TaskID, c.slot)
	return c, err
}

// recordsAt returns the ledger's runs of taskID at slot, alerts aside,
// read by the slot itself (the ledger keeps slots to the millisecond):
// however many runs of other slots the task has.
func (e *Explainer) recordsAt(ctx context.Context, taskID string, slot time.Time) ([]*task.Run, error) {
	runs, err := e.d.Store.RunsAtSlot(ctx, taskID, slot.Truncate(time.Millisecond))
	if err != nil {
		return nil, fmt.Errorf("read the ledger of %s: %w", taskID, err)
	}
	var out []*task.Run
	for _, r := range runs {
		if r.TriggerType != task.TriggerAlert {
			out = append(out, r)
		}
	}
	return out, nil
}

// pickSlot sets c.slot: the first slot at or after c.at by the schedule
// alone (the window is a check of its own), or the default slot.
func (e *Explainer) pickSlot(ctx context.Context, c *kase) error {
	if !c.defaults {
		anchor := c.t.Anchor
		if !c.t.StartTime.IsZero() {
			anchor = c.t.StartTime
		}
		c.slot = c.sched.Next(c.at.Add(-time.Nanosecond), anchor)
		return nil
	}
	t := c.t
	if t.IsEnable == 1 && t.IsDone == 0 && t.State == task.StateRunning {
		c.slot = c.slots.Next(c.now)
		return nil
	}
	last, err := e.lastScheduled(ctx, t.TaskID, time.Time{})
	if err != nil {
		return err
	}
	plan := fire.MakePlan(c.slots, task.MisfireOnce, last, c.now)
	if n := len(plan.Missed); n > 0 {
		c.slot = plan.Missed[n-1]
		return nil
	}
	c.slot = c.slots.Next(c.now)
	return nil
}

// lastScheduled returns the latest slot of taskID that a schedule or a
// misfire recorded, strictly before before (zero: any), or zero; the
// store finds it by index, past any number of manual or backfill runs.
func (e *Explainer) lastScheduled(ctx context.Context, taskID string, before time.Time) (time.Time, error) {
	slot, err := e.d.Store.LastSlotBefore(ctx, taskID, before)
	if err != nil {
		return time.Time{}, fmt.Errorf("read the ledger of %s: %w", taskID, err)
	}
	return slot, nil
}

// add appends a check.
func (c *kase) add(rule string, v report.CheckVerdict, msg text, data map[string]any) {
	c.checks = append(c.checks, report.Check{Rule: rule, Verdict: v, Detail: msg.en, DetailZH: msg.zh, Data: data})
}

// when formats an instant in the task's zone, with the zone's name.
func (c *kase) when(at time.Time) string {
	return at.In(c.loc).Format("2006-01-02 15:04:05") + " " + c.loc.String()
}

// fired reports whether a run recorded for the slot was delivered (or is
// being delivered): not rejected, skipped or cancelled before its turn.
func fired(r *task.Run) bool {
	return !slices.Contains([]task.RunState{task.RunRejected, task.RunSkipped, task.RunCancelled}, r.State)
}

// answer decides the verdict and the sentence from the checks. With
// records for the slot the ledger decides (what the rules say now is not
// what they said then); else the first check that failed does.
func (c *kase) answer() *report.Answer {
	a := &report.Answer{TaskID: c.t.TaskID, At: c.at, Slot: c.slot, Checks: c.checks}
	deciding := -1
	for i, ch := range c.checks {
		if ch.Verdict != report.Fail {
			continue
		}
		if len(c.records) > 0 && ch.Rule != report.RuleLedger && ch.Rule != report.RuleOverlap {
			continue
		}
		deciding = i
		break
	}
	instant := c.when(cmpTime(c.slot, c.at))
	switch {
	case slices.ContainsFunc(c.records, fired):
		a.Verdict, a.Rule = report.Fired, report.RuleLedger
		r := c.records[slices.IndexFunc(c.records, fired)]
		a.Sentence = fmt.Sprintf("It fired at %s: run %s to %s is %s.", instant, r.TriggerID, r.Target, r.State)
		a.SentenceZH = fmt.Sprintf("它已于 %s 触发：运行 %s（发往 %s）状态为 %s。", instant, r.TriggerID, r.Target, r.State)
	case deciding >= 0:
		ch := c.checks[deciding]
		a.Rule = ch.Rule
		if c.past {
			a.Verdict = report.DidNotFire
			a.Sentence = fmt.Sprintf("It did not fire at %s: %s.", instant, ch.Detail)
			a.SentenceZH = fmt.Sprintf("它没有在 %s 触发：%s。", instant, ch.DetailZH)
		} else {
			a.Verdict = report.WillNotFire
			a.Sentence = fmt.Sprintf("It will not fire at %s: %s.", instant, ch.Detail)
			a.SentenceZH = fmt.Sprintf("它不会在 %s 触发：%s。", instant, ch.DetailZH)
		}
	default:
		a.Verdict = report.WillFire
		a.Sentence = fmt.Sprintf("It will fire at %s: every check passes.", instant)
		a.SentenceZH = fmt.Sprintf("它将在 %s 触发：各项检查均通过。", instant)
		if c.failing != nil {
			a.Rule = report.RuleHealth
			a.Sentence = fmt.Sprintf("It will fire at %s, but %s.", instant, c.failing.en)
			a.SentenceZH = fmt.Sprintf("它将在 %s 触发，但%s。", instant, c.failing.zh)
		}
	}
	return a
}

// cmpTime returns a when it is set, else b.
func cmpTime(a, b time.Time) time.Time {
	if a.IsZero() {
		return b
	}
	return a
}

// text is a detail in English and Simplified Chinese.
type text struct{ en, zh string }

// say formats a detail; both templates take args in the same order.
func say(en, zh string, args ...any) text {
	return text{en: fmt.Sprintf(en, args...), zh: fmt.Sprintf(zh, args...)}
}
