package fire_test

import (
	"fmt"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // tests must not depend on the machine's zoneinfo

	"cronsheet/fire"
	"cronsheet/mapping"
	"cronsheet/mapping/schedule"
	"cronsheet/task"
)

// planAnchor is the instant the test schedules became active.
var planAnchor = time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC)

// at returns planAnchor plus d.
func at(d time.Duration) time.Time { return planAnchor.Add(d) }

// utc builds a UTC instant.
func utc(y int, m time.Month, d, h, mi int) time.Time {
	return time.Date(y, m, d, h, mi, 0, 0, time.UTC)
}

// slotTask describes the schedule-relevant fields of a task under test.
type slotTask struct {
	cron, tz   string
	exec       task.ExecuteType
	anchor     time.Time // zero = planAnchor
	start, end time.Time
}

// slots parses the schedule with the real parser and returns the task's
// slot calculator.
func (st slotTask) slots(t *testing.T) fire.Slots {
	t.Helper()
	tk := &task.Task{
		CronPara: st.cron, TZ: st.tz, ExecuteType: st.exec, Anchor: st.anchor,
		StartTime: st.start, EndTime: st.end,
	}
	if tk.ExecuteType == "" {
		tk.ExecuteType = task.Periodic
	}
	if tk.Anchor.IsZero() {
		tk.Anchor = planAnchor
	}
	s, err := schedule.Parse(tk.CronPara, tk.TZ)
	if err != nil {
		t.Fatalf("schedule.Parse(%q, %q): %v", tk.CronPara, tk.TZ, err)
	}
	return fire.NewSlots(tk, s)
}

// seconds returns planAnchor+n*s for n in [from, to].
func seconds(from, to, step int) []time.Time {
	var out []time.Time
	for n := from; n <= to; n += step {
		out = append(out, at(time.Duration(n)*time.Second))
	}
	return out
}

func TestMakePlan(t *testing.T) {
	t.Parallel()
	every10 := slotTask{cron: "every 10s"}
	inThirty := slotTask{cron: "in 30s"}
	atFeb := slotTask{cron: "at 2026-02-01 09:00"}
	start := at(time.Hour + 3*time.Second)
	tests := []struct {
		name      string
		task      slotTask
		policy    task.Misfire
		last, now time.Time
		want      fire.Plan
	}{
		{name: "FirstArmingAtAnchor", task: every10, policy: task.MisfireOnce,
			now: planAnchor, want: fire.Plan{Next: at(10 * time.Second)}},
		{name: "FirstArmingBeforeFirstSlot", task: every10, policy: task.MisfireAll,
			now: at(9 * time.Second), want: fire.Plan{Next: at(10 * time.Second)}},
		{name: "SlotAtNowIsMissed", task: every10, policy: task.MisfireOnce,
			last: at(10 * time.Second), now: at(20 * time.Second),
			want: fire.Plan{Missed: seconds(20, 20, 10), Next: at(30 * time.Second)}},
		{name: "NoDowntime", task: every10, policy: task.MisfireOnce,
			last: at(10 * time.Second), now: at(15 * time.Second),
			want: fire.Plan{Next: at(20 * time.Second)}},
		{name: "SkipAfterDowntime", task: every10, policy: task.MisfireSkip,
			last: at(10 * time.Second), now: at(65 * time.Second),
			want: fire.Plan{Skipped: 5, Next: at(70 * time.Second)}},
		{name: "OnceKeepsLatest", task: every10, policy: task.MisfireOnce,
			last: at(10 * time.Second), now: at(65 * time.Second),
			want: fire.Plan{Missed: seconds(60, 60, 10), Skipped: 4, Next: at(70 * time.Second)}},
		{name: "EmptyPolicyIsOnce", task: every10, policy: "",
			last: at(10 * time.Second), now: at(65 * time.Second),
			want: fire.Plan{Missed: seconds(60, 60, 10), Skipped: 4, Next: at(70 * time.Second)}},
		{name: "AllOldestFirst", task: every10, policy: task.MisfireAll,
			last: at(10 * time.Second), now: at(65 * time.Second),
			want: fire.Plan{Missed: seconds(20, 60, 10), Next: at(70 * time.Second)}},
		{name: "AllCapped", task: slotTask{cron: "every 1s"}, policy: task.MisfireAll,
			last: planAnchor, now: at(250 * time.Second),
			want: fire.Plan{Missed: seconds(1, task.MaxMisfireSlots, 1), Skipped: 250 - task.MaxMisfireSlots,
				Next: at(251 * time.Second)}},
		{name: "InAlreadyFired", task: inThirty, policy: task.MisfireAll,
			last: at(30 * time.Second), now: at(time.Hour), want: fire.Plan{}},
		{name: "AtAlreadyFired", task: atFeb, policy: task.MisfireOnce,
			last: utc(2026, 2, 1, 9, 0), now: utc(2026, 3, 1, 0, 0), want: fire.Plan{}},
		// A once is scoped to its own slot: an earlier slot in the ledger
		// (an old `at`, an `in` of an earlier activation, a deleted row's
		// reused id) does not count as this one fired.
		{name: "AtMovedLaterFires", task: atFeb, policy: task.MisfireOnce,
			last: utc(2026, 1, 20, 9, 0), now: planAnchor, want: fire.Plan{Next: utc(2026, 2, 1, 9, 0)}},
		{name: "AtMovedLaterMissedFires", task: atFeb, policy: task.MisfireOnce,
			last: utc(2026, 1, 20, 9, 0), now: utc(2026, 3, 1, 0, 0), want: fire.Plan{Missed: []time.Time{utc(2026, 2, 1, 9, 0)}}},
		{name: "InReactivatedFires", task: inThirty, policy: task.MisfireOnce,
			last: at(-time.Hour), now: at(10 * time.Second), want: fire.Plan{Next: at(30 * time.Second)}},
		{name: "InNotYetDue", task: inThirty, policy: task.MisfireOnce,
			now: at(10 * time.Second), want: fire.Plan{Next: at(30 * time.Second)}},
		{name: "InPassedWhileDown", task: inThirty, policy: task.MisfireOnce,
			now: at(time.Hour), want: fire.Plan{Missed: seconds(30, 30, 1)}},
		{name: "AtPassedWhileDownAll", task: atFeb, policy: task.MisfireAll,
			now: utc(2026, 3, 1, 0, 0), want: fire.Plan{Missed: []time.Time{utc(2026, 2, 1, 9, 0)}}},
		{name: "AtPassedWhileDownSkip", task: atFeb, policy: task.MisfireSkip,
			now: utc(2026, 3, 1, 0, 0), want: fire.Plan{Skipped: 1}},
		{name: "AtInTheFuture", task: atFeb, policy: task.MisfireOnce,
			now: planAnchor, want: fire.Plan{Next: utc(2026, 2, 1, 9, 0)}},
		{name: "EveryCountsFromStart", task: slotTask{cron: "every 10s", start: start}, policy: task.MisfireOnce,
			now: planAnchor, want: fire.Plan{Next: start.Add(10 * time.Second)}},
		{name: "NoMissedSlotBeforeStart", task: slotTask{cron: "every 10s", start: start}, policy: task.MisfireAll,
			now: start.Add(25 * time.Second),
			want: fire.Plan{Missed: []time.Time{start.Add(10 * time.Second), start.Add(20 * time.Second)},
				Next: start.Add(30 * time.Second)}},
		{name: "DailyWaitsForStart", task: slotTask{cron: "daily 09:00", start: utc(2026, 1, 15, 10, 0)},
			policy: task.MisfireAll, now: planAnchor, want: fire.Plan{Next: utc(2026, 1, 16, 9, 0)}},
		{name: "DailyFiresAtStart", task: slotTask{cron: "daily 09:00", start: utc(2026, 1, 15, 9, 0)},
			policy: task.MisfireAll, now: planAnchor, want: fire.Plan{Next: utc(2026, 1, 15, 9, 0)}},
		// A start in the past does not make the slots before the schedule
		// became active "missed": the task did not exist then.
		{name: "PastStartMissesNothing", task: slotTask{cron: "daily 09:00", start: utc(2026, 1, 1, 0, 0)},
			policy: task.MisfireAll, now: planAnchor, want: fire.Plan{Next: utc(2026, 1, 11, 9, 0)}},
		{name: "PastStartKeepsEveryGrid", task: slotTask{cron: "every 1h", start: utc(2026, 1, 1, 0, 30)},
			policy: task.MisfireAll, now: planAnchor, want: fire.Plan{Next: utc(2026, 1, 10, 12, 30)}},
		{name: "EndStopsMisfires", task: slotTask{cron: "every 10s", end: at(35 * time.Second)}, policy: task.MisfireOnce,
			last: at(10 * time.Second), now: at(time.Hour),
			want: fire.Plan{Missed: seconds(30, 30, 10), Skipped: 1}},
		{name: "EndAllKeepsSlotsInWindow", task: slotTask{cron: "every 10s", end: at(35 * time.Second)}, policy: task.MisfireAll,
			now: at(time.Hour), want: fire.Plan{Missed: seconds(10, 30, 10)}},
		{name: "EndNotReached", task: slotTask{cron: "every 10s", end: at(35 * time.Second)}, policy: task.MisfireOnce,
			now: at(15 * time.Second), want: fire.Plan{Missed: seconds(10, 10, 10), Next: at(20 * time.Second)}},
		{name: "LastSlotBeforeEnd", task: slotTask{cron: "every 10s", end: at(35 * time.Second)}, policy: task.MisfireOnce,
			last: at(20 * time.Second), now: at(31 * time.Second), want: fire.Plan{Missed: seconds(30, 30, 10)}},
		{name: "ExecuteOnceEveryNotDue", task: slotTask{cron: "every 10s", exec: task.Once}, policy: task.MisfireOnce,
			now: at(5 * time.Second), want: fire.Plan{Next: at(10 * time.Second)}},
		{name: "ExecuteOnceEveryFiresFirstSlotOnly", task: slotTask{cron: "every 10s", exec: task.Once}, policy: task.MisfireAll,
			now: at(45 * time.Second), want: fire.Plan{Missed: seconds(10, 10, 10)}},
		{name: "ExecuteOnceEveryAlreadyFired", task: slotTask{cron: "every 10s", exec: task.Once}, policy: task.MisfireAll,
			last: at(10 * time.Second), now: at(45 * time.Second), want: fire.Plan{}},
		// 8 March 2026: New York clocks jump 02:00 EST -> 03:00 EDT.
		{name: "SpringForwardGap", task: slotTask{cron: "daily 02:30", tz: "America/New_York",
			anchor: time.Date(2026, 3, 7, 17, 0, 0, 0, time.UTC)}, policy: task.MisfireOnce,
			now: time.Date(2026, 3, 8, 5, 0, 0, 0, time.UTC), want: fire.Plan{Next: time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := fire.MakePlan(tt.task.slots(t), tt.policy, tt.last, tt.now)
			if diff := planDiff(tt.want, got); diff != "" {
				t.Errorf("MakePlan(last %s, now %s) (-want +got):\n%s", fmtTime(tt.last), fmtTime(tt.now), diff)
			}
			checkPlanInvariants(t, got, tt.last, tt.now)
		})
	}
}

// checkPlanInvariants checks what holds for every plan: missed slots are
// after last, not after now and strictly increasing; Next is after now.
func checkPlanInvariants(t *testing.T, p fire.Plan, last, now time.Time) {
	t.Helper()
	prev := last
	for i, s := range p.Missed {
		if !s.After(prev) {
			t.Errorf("missed slot %d %s is not after %s", i, fmtTime(s), fmtTime(prev))
		}
		if s.After(now) {
			t.Errorf("missed slot %d %s is after now %s", i, fmtTime(s), fmtTime(now))
		}
		prev = s
	}
	if len(p.Missed) > task.MaxMisfireSlots {
		t.Errorf("%d missed slots, more than %d", len(p.Missed), task.MaxMisfireSlots)
	}
	if !p.Next.IsZero() && (!p.Next.After(now) || !p.Next.After(last)) {
		t.Errorf("next %s is not after now %s and last %s", fmtTime(p.Next), fmtTime(now), fmtTime(last))
	}
	if p.Skipped < 0 {
		t.Errorf("skipped = %d", p.Skipped)
	}
}

func TestSlotsNext(t *testing.T) {
	t.Parallel()
	ny := "America/New_York"
	tests := []struct {
		name  string
		task  slotTask
		after time.Time
		want  []time.Time // the next slots in order
		ends  bool        // no slot after want
		once  bool
	}{
		{name: "EveryFromAnchor", task: slotTask{cron: "every 10s"},
			want: seconds(10, 30, 10)},
		{name: "EveryFromZeroAfter", task: slotTask{cron: "every 10s"}, after: time.Time{},
			want: seconds(10, 10, 10)},
		{name: "EveryBeforeAnchor", task: slotTask{cron: "every 10s"}, after: at(-time.Hour),
			want: seconds(10, 20, 10)},
		{name: "EveryMidInterval", task: slotTask{cron: "every 10s"}, after: at(15 * time.Second),
			want: seconds(20, 40, 10)},
		{name: "InFiresOnce", task: slotTask{cron: "in 30s"}, once: true, ends: true,
			want: seconds(30, 30, 1)},
		// Next still walks the schedule; Once tells callers to stop at the first.
		{name: "ExecuteOnce", task: slotTask{cron: "every 10s", exec: task.Once}, once: true,
			want: seconds(10, 30, 10)},
		{name: "EndCutsOff", task: slotTask{cron: "every 10s", end: at(25 * time.Second)}, ends: true,
			want: seconds(10, 20, 10)},
		{name: "EndOnSlotKeepsIt", task: slotTask{cron: "every 10s", end: at(20 * time.Second)}, ends: true,
			want: seconds(10, 20, 10)},
		// 8 March 2026: 02:30 does not exist in New York; it fires at 03:00
		// EDT, the first instant after the gap, then 02:30 EDT again.
		{name: "SpringForward", task: slotTask{cron: "daily 02:30", tz: ny, anchor: time.Date(2026, 3, 6, 12, 0, 0, 0, time.UTC)},
			after: time.Date(2026, 3, 7, 12, 0, 0, 0, time.UTC),
			want: []time.Time{
				time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC),  // 03:00 EDT
				time.Date(2026, 3, 9, 6, 30, 0, 0, time.UTC), // 02:30 EDT
			}},
		// 1 November 2026: 01:30 happens twice; it fires at the first.
		{name: "FallBack", task: slotTask{cron: "daily 01:30", tz: ny, anchor: time.Date(2026, 10, 30, 12, 0, 0, 0, time.UTC)},
			after: time.Date(2026, 10, 31, 12, 0, 0, 0, time.UTC),
			want: []time.Time{
				time.Date(2026, 11, 1, 5, 30, 0, 0, time.UTC), // 01:30 EDT
				time.Date(2026, 11, 2, 6, 30, 0, 0, time.UTC), // 01:30 EST
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := tt.task.slots(t)
			if s.Once() != tt.once {
				t.Errorf("Once() = %v, want %v", s.Once(), tt.once)
			}
			after := tt.after
			if first := s.Next(time.Time{}); after.IsZero() && !first.Equal(tt.want[0]) {
				t.Errorf("first slot = %s, want %s", fmtTime(first), fmtTime(tt.want[0]))
			}
			for i := 0; i <= len(tt.want); i++ {
				got := s.Next(after)
				if i == len(tt.want) {
					if tt.ends && !got.IsZero() {
						t.Errorf("Next(%s) = %s, want none", fmtTime(after), fmtTime(got))
					}
					break
				}
				if !got.Equal(tt.want[i]) {
					t.Fatalf("Next(%s) = %s, want %s", fmtTime(after), fmtTime(got), fmtTime(tt.want[i]))
				}
				if !got.After(after) {
					t.Errorf("Next(%s) = %s is not after it", fmtTime(after), fmtTime(got))
				}
				after = got
			}
		})
	}
}

// planDiff describes how got differs from want, or returns "".
func planDiff(want, got fire.Plan) string {
	var b strings.Builder
	if !sameTimes(want.Missed, got.Missed) {
		fmt.Fprintf(&b, "-Missed %s\n+Missed %s\n", fmtTimes(want.Missed), fmtTimes(got.Missed))
	}
	if !want.Next.Equal(got.Next) {
		fmt.Fprintf(&b, "-Next %s\n+Next %s\n", fmtTime(want.Next), fmtTime(got.Next))
	}
	if want.Skipped != got.Skipped {
		fmt.Fprintf(&b, "-Skipped %d\n+Skipped %d\n", want.Skipped, got.Skipped)
	}
	return b.String()
}

func sameTimes(a, b []time.Time) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].Equal(b[i]) {
			return false
		}
	}
	return true
}

func fmtTimes(ts []time.Time) string {
	if len(ts) > 6 {
		return fmt.Sprintf("[%s %s … %s] (%d)", fmtTime(ts[0]), fmtTime(ts[1]), fmtTime(ts[len(ts)-1]), len(ts))
	}
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = fmtTime(t)
	}
	return "[" + strings.Join(parts, " ") + "]"
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "zero"
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// TestSubSecondActivationFiresTheNextWholeSecond: a schedule activated
// part-way through a second fires the first slot strictly after the
// activation instant, even one in that same second's end; intervals still
// count from the next whole second.
func TestSubSecondActivationFiresTheNextWholeSecond(t *testing.T) {
	t.Parallel()
	activated := at(500 * time.Millisecond) // 12:00:00.500
	tests := []struct {
		name string
		cron string
		want time.Time
	}{
		{"EverySecondCron", "cron * * * * * *", at(time.Second)},
		{"AtTheNextSecond", "at 2026-01-10 12:00:01", at(time.Second)},
		{"EveryInterval", "every 2s", at(3 * time.Second)},
		{"InDuration", "in 1s", at(2 * time.Second)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// The anchor a row edit gets (mapping.Anchor), as the patrol stores it.
			s := slotTask{cron: tt.cron, anchor: mapping.Anchor(activated)}.slots(t)
			plan := fire.MakePlan(s, task.MisfireOnce, time.Time{}, activated.Add(100*time.Millisecond))
			if len(plan.Missed) != 0 || !plan.Next.Equal(tt.want) {
				t.Errorf("activated at %s: plan %+v, want next %s and nothing missed", activated.Format("15:04:05.000"), plan, tt.want.Format("15:04:05.000"))
			}
			// A slot at or before the activation never fires.
			if first := s.Next(time.Time{}); !first.After(activated) {
				t.Errorf("first slot %s is not after the activation %s", first, activated)
			}
		})
	}
}
