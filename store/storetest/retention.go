package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// RunRetention runs the conformance cases of store.Retention: per kind,
// old finished items go and live ones stay (a run that is not final or is
// its task's floor, a job that is not final or holds a live run, a flow
// execution still running), the cutoff of a count holds the bound
// exactly, the jobs' events, keys and runs go with them, and two passes
// at once delete and count each item once.
func RunRetention(t *testing.T, newStore func(t *testing.T) store.Product, opts ...Option) {
	t.Helper()
	runGroups(t, newStore, []group{
		{"Retention", []testCase{
			{name: "RunsKeepLiveAndFloor", fn: testPruneRuns},
			{name: "RunsByAge", fn: testPruneRunsAge},
			{name: "JobsWithTheirParts", fn: testPruneJobs},
			{name: "JobsUpdatedInTheCutoffMillisecond", fn: testPruneJobsCutoffMillisecond},
			{name: "OutboxCountBound", fn: testPruneOutboxCount},
			{name: "AuditByAge", fn: testPruneAudit},
			{name: "FlowExecutions", fn: testPruneExecutions},
			{name: "ConcurrentPasses", fn: testPruneConcurrent},
			{name: "Invalid", fn: testPruneInvalid},
		}},
	})
}

// future is a Before that lets every item of a kind go by age.
func future() store.Cursor {
	return store.Cursor{At: time.Now().Add(24 * time.Hour).Truncate(time.Millisecond)}
}

// pass prunes kind before before in batches of limit until the walk ends
// and returns how many went.
func (b *bundle) pass(kind store.RetentionKind, before store.Cursor, limit int) int {
	b.t.Helper()
	p := store.PruneParams{Kind: kind, Before: before, Limit: limit}
	total := 0
	for range 10_000 {
		res, err := b.s.Prune(b.ctx, p)
		b.noErr(fmt.Sprintf("Prune(%s after %v)", kind, p.After), err)
		total += res.Deleted
		if res.Examined < limit {
			return total
		}
		if !p.After.Before(res.Next) {
			b.t.Fatalf("Prune(%s): cursor did not move: %v then %v", kind, p.After, res.Next)
		}
		p.After = res.Next
	}
	b.t.Fatalf("Prune(%s): still walking after 10,000 batches", kind)
	return total
}

// runGone reports whether the run with triggerID is gone.
func (b *bundle) runGone(id string) bool {
	b.t.Helper()
	_, err := b.s.GetRun(b.ctx, id)
	if err != nil && !errors.Is(err, task.ErrNotFound) {
		b.t.Fatalf("GetRun(%s): %v", id, err)
	}
	return err != nil
}

func (b *bundle) expectRuns(gone, kept []string) {
	b.t.Helper()
	for _, id := range gone {
		if !b.runGone(id) {
			b.t.Errorf("run %s is still there, want it pruned", id)
		}
	}
	for _, id := range kept {
		if b.runGone(id) {
			b.t.Errorf("run %s was pruned, want it kept", id)
		}
	}
}

func testPruneRuns(b *bundle) {
	old := at(-48 * time.Hour)
	// t1: three finished schedule runs, then one still running: the
	// running one stays, and is the floor, so all three finished go.
	for i := 1; i <= 3; i++ {
		b.insertRun(finishedRun("t1", i, task.RunDone, old))
	}
	b.insertRun(finishedRun("t1", 4, task.RunRunning, time.Time{}))
	// t2: schedule runs 1-3, then a manual run 4: run 4 is the newest and
	// run 3 LastSlot's answer; both stay.
	for i := 1; i <= 3; i++ {
		b.insertRun(finishedRun("t2", i, task.RunDead, old))
	}
	m := finishedRun("t2", 4, task.RunDone, old)
	m.TriggerType = task.TriggerManual
	b.insertRun(m)
	// t3: an accepted run is not final; a lone finished run is its floor.
	acc := finishedRun("t3", 1, task.RunRunning, time.Time{})
	acc.State, acc.Deadline = task.RunAccepted, at(time.Hour)
	b.insertRun(acc)
	b.insertRun(finishedRun("t4", 1, task.RunDone, old))

	if n := b.pass(store.RetainRuns, future(), 2); n != 5 {
		b.t.Errorf("pruned %d runs, want 5", n)
	}
	b.expectRuns([]string{"t1-01", "t1-02", "t1-03", "t2-01", "t2-02"},
		[]string{"t1-04", "t2-03", "t2-04", "t3-01", "t4-01"})
	if last, err := b.s.LastSlot(b.ctx, "t2"); err != nil || !last.Equal(at(3*time.Minute)) {
		b.t.Errorf("LastSlot(t2) = %v, %v; want %v", last, err, at(3*time.Minute))
	}
}

func testPruneRunsAge(b *bundle) {
	for i := 1; i <= 6; i++ {
		b.insertRun(finishedRun("t1", i, task.RunDone, at(time.Duration(i)*time.Hour)))
	}
	// finished before hour 4: runs 1-3 go, 4-6 stay.
	if n := b.pass(store.RetainRuns, store.Cursor{At: at(4 * time.Hour)}, 100); n != 3 {
		b.t.Errorf("pruned %d runs, want 3", n)
	}
	b.expectRuns([]string{"t1-01", "t1-02", "t1-03"}, []string{"t1-04", "t1-05", "t1-06"})
	// count: keep the newest 2 finished runs.
	cut, err := b.s.RetentionCutoff(b.ctx, store.RetainRuns, 2)
	b.noErr("RetentionCutoff", err)
	if !cut.At.Equal(at(5 * time.Hour)) {
		b.t.Errorf("RetentionCutoff(runs, 2) at %v, want %v", cut.At, at(5*time.Hour))
	}
	b.pass(store.RetainRuns, cut, 100)
	b.expectRuns([]string{"t1-04"}, []string{"t1-05", "t1-06"})
	if c, err := b.s.RetentionCutoff(b.ctx, store.RetainRuns, 3); err != nil || !c.IsZero() {
		b.t.Errorf("RetentionCutoff(runs, 3) of 2 runs = %v, %v; want zero", c, err)
	}
}
