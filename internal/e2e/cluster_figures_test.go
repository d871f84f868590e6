package e2e

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"cronsheet/task"
)

// Causes of a trigger id delivered more than once, judged at the hook from
// the two deliveries and the sender of the first.
const (
	// causeTwoAtOnce: the second arrived while the first was still open at
	// the hook — two deliverers of one run at once.
	causeTwoAtOnce = "two-at-once"
	// causeCutByKill: the first sender was killed while the hook was still
	// answering it; the run was re-sent after the crash.
	causeCutByKill = "cut-by-kill"
	// causeAnsweredThenKilled: the hook had answered, then the first sender
	// was killed before the re-send (its outcome may not have been stored).
	causeAnsweredThenKilled = "answered-then-killed"
	// causeSameProcess: the same process sent the run again, alive, after a
	// 200 answer.
	causeSameProcess = "same-process-again"
	// causeOtherNode: another node re-sent a run whose first sender was
	// alive — ownership moved under a delivered run.
	causeOtherNode = "other-node-sender-alive"
	// causeUnknownSender: the hook could not tell who sent one of them.
	causeUnknownSender = "unknown-sender"
	// causeRetryAfterCut: the sender hung up on its first attempt (it
	// failed, by its side's deadline or a broken connection) and sent the
	// run again itself: a retry of a failed attempt, same trigger id.
	causeRetryAfterCut = "retry-after-cut"
)

// crashCauses are the causes the harness accepts where nodes are killed: a
// re-send of a run its killed node had in flight, or a sender's own retry
// of an attempt that failed on its side (the same trigger id, as for any
// failed attempt).
var crashCauses = map[string]bool{causeCutByKill: true, causeAnsweredThenKilled: true, causeRetryAfterCut: true}

// dupFigures are the duplicate figures of one scenario, from the hook.
type dupFigures struct {
	Deliveries int
	TriggerIDs int // distinct trigger ids delivered
	// DupTriggerIDs counts trigger ids delivered more than once; Resends
	// counts the extra deliveries by cause.
	DupTriggerIDs int
	Resends       map[string]int
	// SlotsUnderTwoIDs counts idempotency keys (task + slot) delivered
	// under two or more trigger ids: one slot fired as two runs.
	SlotsUnderTwoIDs int
	// MaxAnswerToKill is the longest time between the hook's answer and
	// the sender's kill among answered-then-killed re-sends.
	MaxAnswerToKill time.Duration
	// MultiNodeTasks counts tasks delivered by two or more nodes: proof
	// that ownership moved.
	MultiNodeTasks int
	Examples       []string
	ExampleIDs     []string // the trigger ids of Examples
}

// unexplained counts the re-sends whose cause is not in allowed.
func (f dupFigures) unexplained(allowed map[string]bool) int {
	n := 0
	for c, k := range f.Resends {
		if !allowed[c] {
			n += k
		}
	}
	return n
}

func (f dupFigures) String() string {
	causes := make([]string, 0, len(f.Resends))
	for c, n := range f.Resends {
		causes = append(causes, fmt.Sprintf("%s=%d", c, n))
	}
	sort.Strings(causes)
	return fmt.Sprintf("deliveries=%d trigger_ids=%d dup_trigger_ids=%d resends{%s} slots_under_two_ids=%d multi_node_tasks=%d max_answer_to_kill=%s",
		f.Deliveries, f.TriggerIDs, f.DupTriggerIDs, strings.Join(causes, " "), f.SlotsUnderTwoIDs, f.MultiNodeTasks,
		f.MaxAnswerToKill.Round(time.Millisecond))
}

// countDuplicates judges every delivery of ds (in arrival order) against
// the earlier deliveries of the same trigger id.
func countDuplicates(ds []delivery, senders *senderIndex) dupFigures {
	f := dupFigures{Deliveries: len(ds), Resends: map[string]int{}}
	byTrigger := map[string][]delivery{}
	idsOfKey := map[string]map[string]bool{}
	nodesOfTask := map[string]map[string]bool{}
	for _, d := range ds {
		byTrigger[d.TriggerID] = append(byTrigger[d.TriggerID], d)
		if idsOfKey[d.Key] == nil {
			idsOfKey[d.Key] = map[string]bool{}
		}
		idsOfKey[d.Key][d.TriggerID] = true
		if nodesOfTask[d.taskID()] == nil {
			nodesOfTask[d.taskID()] = map[string]bool{}
		}
		node, _, _ := strings.Cut(d.Sender, "#")
		nodesOfTask[d.taskID()][node] = true
	}
	f.TriggerIDs = len(byTrigger)
	for _, ids := range idsOfKey {
		if len(ids) > 1 {
			f.SlotsUnderTwoIDs++
		}
	}
	for _, nodes := range nodesOfTask {
		if len(nodes) > 1 {
			f.MultiNodeTasks++
		}
	}
	for id, list := range byTrigger {
		if len(list) < 2 {
			continue
		}
		f.DupTriggerIDs++
		for i := 1; i < len(list); i++ {
			first, again := list[i-1], list[i]
			cause, answerToKill := resendCause(first, again, senders)
			f.Resends[cause]++
			if cause == causeAnsweredThenKilled {
				f.MaxAnswerToKill = max(f.MaxAnswerToKill, answerToKill)
			}
			if len(f.Examples) < 5 && !crashCauses[cause] {
				f.ExampleIDs = append(f.ExampleIDs, id)
				f.Examples = append(f.Examples, fmt.Sprintf("%s key=%s: %s at %s (cut=%v, ended %s) then %s at %s: %s",
					id, first.Key, first.Sender, first.Arrived.Format("15:04:05.000"), first.Cut,
					first.Ended.Format("15:04:05.000"), again.Sender, again.Arrived.Format("15:04:05.000"), cause))
			}
		}
	}
	return f
}

// resendCause says why again re-delivered first's trigger id; for an
// answered-then-killed re-send it also returns the answer-to-kill time.
func resendCause(first, again delivery, senders *senderIndex) (string, time.Duration) {
	if first.Cut && first.Sender == again.Sender && first.Sender != "?" {
		return causeRetryAfterCut, 0
	}
	if again.Arrived.Before(first.Ended) {
		return causeTwoAtOnce, 0
	}
	if first.Sender == "?" || again.Sender == "?" {
		return causeUnknownSender, 0
	}
	if died, ok := senders.deathOf(first.Sender); ok && !died.After(again.Arrived) {
		// The answer cannot have reached a sender that died before it
		// was sent (the hook may read and answer a request that sat in
		// the socket after the kill).
		if first.Cut || died.Before(first.Ended) {
			return causeCutByKill, 0
		}
		return causeAnsweredThenKilled, died.Sub(first.Ended)
	}
	if first.Sender == again.Sender {
		return causeSameProcess, 0
	}
	return causeOtherNode, 0
}

// slotFigures are the ledger figures of every-second tasks.
type slotFigures struct {
	Tasks, Runs, Misfires int
	// Missing counts slots up to the cutoff that are neither in the ledger
	// nor covered by a misfire run after them; MissingIn counts those
	// inside the window the scenario cares about (an outage).
	Missing, MissingIn int
	// Undelivered counts ledger runs up to the cutoff the hook never saw;
	// Unfinished those not in a final state.
	Undelivered, Unfinished int
	// Skipped counts runs recorded skipped by the task's overlap policy.
	Skipped  int
	Examples []string
}

func (f slotFigures) String() string {
	return fmt.Sprintf("tasks=%d ledger_runs=%d misfire_runs=%d missing_slots=%d missing_in_window=%d undelivered_runs=%d unfinished_runs=%d skipped_runs=%d",
		f.Tasks, f.Runs, f.Misfires, f.Missing, f.MissingIn, f.Undelivered, f.Unfinished, f.Skipped)
}

// checkSlots adds one every-1s task's ledger to f: slots up to cutoff must
// be contiguous, a gap being allowed only when the run after it is a
// misfire (policy once fires the latest missed slot). Slots inside
// [winFrom, winTo] that are missing also count in MissingIn.
func (f *slotFigures) checkSlots(taskID string, runs []*task.Run, delivered map[string]bool, cutoff, winFrom, winTo time.Time) {
	var fired []*task.Run
	for _, r := range runs {
		if r.TriggerType == task.TriggerSchedule || r.TriggerType == task.TriggerMisfire {
			fired = append(fired, r)
		}
	}
	sort.Slice(fired, func(i, j int) bool { return fired[i].Slot.Before(fired[j].Slot) })
	f.Tasks++
	missing := func(from, to time.Time) { // slots strictly between from and to, up to cutoff
		for s := from.Add(time.Second); s.Before(to) && !s.After(cutoff); s = s.Add(time.Second) {
			f.Missing++
			if !s.Before(winFrom) && !s.After(winTo) {
				f.MissingIn++
			}
			if len(f.Examples) < 5 {
				f.Examples = append(f.Examples, fmt.Sprintf("%s: slot %s missing", taskID, s.Format("15:04:05")))
			}
		}
	}
	for i, r := range fired {
		if r.Slot.After(cutoff) {
			break
		}
		f.Runs++
		if r.TriggerType == task.TriggerMisfire {
			f.Misfires++
		}
		if r.State == task.RunSkipped && r.TriggerType != task.TriggerMisfire {
			// Recorded, by the overlap policy: nothing to deliver. A
			// missed slot replayed (misfire) is never skipped: it queues.
			f.Skipped++
		} else if !delivered[r.TriggerID] {
			f.Undelivered++
			if len(f.Examples) < 8 {
				f.Examples = append(f.Examples, fmt.Sprintf("%s: run %s slot %s %s by %s is %s (attempt %d, %q) but never reached the hook",
					taskID, r.TriggerID, r.Slot.Format("15:04:05"), r.TriggerType, r.Node, r.State, r.Attempt, task.Truncate(r.Error, 80)))
			}
		}
		if !r.State.Final() {
			f.Unfinished++
		}
		if i+1 < len(fired) {
			if next := fired[i+1]; next.TriggerType != task.TriggerMisfire {
				missing(r.Slot, next.Slot)
			}
		} else {
			missing(r.Slot, cutoff.Add(time.Nanosecond)) // the task stopped firing
		}
	}
	if len(fired) == 0 {
		f.Examples = append(f.Examples, taskID+": never fired")
	}
}

// ledgers holds each task's fire ledger, by task id.
type ledgers map[string][]*task.Run

// failover is, for one kill at k, the time until every every-1s task had
// fired (in the ledger) a slot at or after k; recovered is false when some
// task never did. It measures the takeover, not the deliveries' queue
// (see deliveryLag).
func failover(l ledgers, k time.Time) (d time.Duration, recovered bool) {
	d, _, recovered = slowestFailover(l, k)
	return d, recovered
}

// slowestFailover is failover, also naming the task that fired last.
func slowestFailover(l ledgers, k time.Time) (d time.Duration, slowest string, recovered bool) {
	ids := make([]string, 0, len(l))
	for id := range l {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		var first time.Time
		for _, r := range l[id] {
			if (r.TriggerType == task.TriggerSchedule || r.TriggerType == task.TriggerMisfire) && !r.Slot.Before(k) &&
				(first.IsZero() || r.FiredAt.Before(first)) {
				first = r.FiredAt
			}
		}
		if first.IsZero() {
			return 0, id, false
		}
		if first.Sub(k) > d {
			d, slowest = first.Sub(k), id
		}
	}
	return d, slowest, true
}

// failoverFigures summarizes failover over several kills; each lists the
// failover of every kill in order, with the task that fired last.
func failoverFigures(l ledgers, kills []time.Time) (summary, each string) {
	var times []time.Duration
	var all []string
	lost := 0
	for _, k := range kills {
		if d, id, ok := slowestFailover(l, k); ok {
			times = append(times, d)
			all = append(all, fmt.Sprintf("%s(%s)", d.Round(10*time.Millisecond), id))
		} else {
			lost++
			all = append(all, "never")
		}
	}
	each = strings.Join(all, " ")
	if len(times) == 0 {
		return fmt.Sprintf("kills=%d failover=none-recovered", len(kills)), each
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	return fmt.Sprintf("kills=%d failover_median=%s failover_max=%s not_recovered=%d", len(kills),
		times[len(times)/2].Round(10*time.Millisecond), times[len(times)-1].Round(10*time.Millisecond), lost), each
}

// deliveryLag is the time from slot to the first arrival at the hook of
// every every-1s run: its median and maximum.
func deliveryLag(ds []delivery) text {
	first := map[string]time.Duration{}
	for _, d := range ds {
		if !strings.HasPrefix(d.Path, "/t/") {
			continue
		}
		if _, ok := first[d.TriggerID]; !ok {
			first[d.TriggerID] = d.Arrived.Sub(d.slot())
		}
	}
	if len(first) == 0 {
		return "delivery_lag=none"
	}
	lags := make([]time.Duration, 0, len(first))
	for _, l := range first {
		lags = append(lags, l)
	}
	sort.Slice(lags, func(i, j int) bool { return lags[i] < lags[j] })
	return text(fmt.Sprintf("delivery_lag_median=%s delivery_lag_max=%s", lags[len(lags)/2].Round(10*time.Millisecond),
		lags[len(lags)-1].Round(10*time.Millisecond)))
}

// TestClusterChecksCanFail feeds the harness's judges made-up deliveries
// and ledgers with the faults they look for, so that a passing TestCluster
// means something: each fault is counted, with its cause.
func TestClusterChecksCanFail(t *testing.T) {
	t.Parallel() // see procs_test.go
	t0 := time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	senders := newSenderIndex()
	senders.killed("n1#1", at(700))
	ds := []delivery{
		// tr_a: two nodes at once.
		{TriggerID: "tr_a", Key: "p1:1000", Path: "/t/p1", Sender: "n2#1", Arrived: at(0), Ended: at(900)},
		{TriggerID: "tr_a", Key: "p1:1000", Path: "/t/p1", Sender: "n3#1", Arrived: at(500), Ended: at(600)},
		// tr_b: cut by the kill of n1#1, re-sent by n2#1.
		{TriggerID: "tr_b", Key: "p2:1000", Path: "/t/p2", Sender: "n1#1", Arrived: at(100), Ended: at(700), Cut: true},
		{TriggerID: "tr_b", Key: "p2:1000", Path: "/t/p2", Sender: "n2#1", Arrived: at(4000), Ended: at(4100)},
		// tr_c: answered, sender alive, another node re-sends.
		{TriggerID: "tr_c", Key: "p3:1000", Path: "/t/p3", Sender: "n2#1", Arrived: at(0), Ended: at(100)},
		{TriggerID: "tr_c", Key: "p3:1000", Path: "/t/p3", Sender: "n3#1", Arrived: at(2000), Ended: at(2100)},
		// tr_d and tr_e: one slot fired as two runs.
		{TriggerID: "tr_d", Key: "p4:1000", Path: "/t/p4", Sender: "n2#1", Arrived: at(0), Ended: at(100)},
		{TriggerID: "tr_e", Key: "p4:1000", Path: "/t/p4", Sender: "n3#1", Arrived: at(200), Ended: at(300)},
	}
	f := countDuplicates(ds, senders)
	want := map[string]int{causeTwoAtOnce: 1, causeCutByKill: 1, causeOtherNode: 1}
	if f.DupTriggerIDs != 3 || f.SlotsUnderTwoIDs != 1 || fmt.Sprint(f.Resends) != fmt.Sprint(want) {
		t.Errorf("duplicates = %s, want 3 duplicated trigger ids %v and 1 slot under two ids", f, want)
	}
	if n := f.unexplained(crashCauses); n != 2 {
		t.Errorf("%d re-sends unexplained by a kill, want 2 (two-at-once, other node)", n)
	}

	run := func(id string, sec int, tt task.TriggerType) *task.Run {
		return &task.Run{TriggerID: id, Slot: t0.Add(time.Duration(sec) * time.Second), TriggerType: tt, State: task.RunDone}
	}
	delivered := map[string]bool{"r1": true, "r2": true, "r5": true, "r9": true}
	runs := []*task.Run{
		run("r1", 1, task.TriggerSchedule), run("r2", 2, task.TriggerSchedule),
		run("r5", 5, task.TriggerMisfire),    // 3, 4 covered by the misfire
		run("r9", 9, task.TriggerSchedule),   // 6, 7, 8 lost
		run("r10", 10, task.TriggerSchedule), // never delivered
	}
	runs[4].State = task.RunRunning
	var sf slotFigures
	sf.checkSlots("p1", runs, delivered, t0.Add(12*time.Second), t0.Add(7*time.Second), t0.Add(20*time.Second))
	// Missing: 6, 7, 8 (gap) and 11, 12 (stopped before the cutoff).
	if sf.Missing != 5 || sf.MissingIn != 4 || sf.Misfires != 1 || sf.Undelivered != 1 || sf.Unfinished != 1 {
		t.Errorf("slots = %s, want 5 missing (4 in the window), 1 misfire, 1 undelivered, 1 unfinished", sf)
	}

	fired := ledgers{"p1": runs, "p2": runs[:2]}
	if d, ok := failover(fired, t0.Add(2500*time.Millisecond)); ok {
		t.Errorf("failover = %s with p2 never firing after the kill; want not recovered", d)
	}
}
