package storetest

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

func queryRunsCases() []testCase {
	return []testCase{
		{name: "FiltersAndPages", fn: testQueryRuns},
	}
}

func cleanupCases() []testCase {
	return []testCase{
		{name: "NeverUnfinished", fn: testCleanupNeverUnfinished},
		{name: "OlderThan", fn: testCleanupOlderThan},
		{name: "KeepPerTask", fn: testCleanupKeepPerTask},
		{name: "BothRules", fn: testCleanupBothRules},
		{name: "Limit", fn: testCleanupLimit},
	}
}

// testQueryRuns pages through every filter combination, two runs a page,
// over runs whose fired_at ties in threes (so pages end inside a tie) and
// whose trigger ids are not in insertion order: each walk must give the
// matching runs newest first by (fired_at, trigger_id), each exactly once.
func testQueryRuns(b *bundle) {
	const n = 18
	var all []*task.Run
	for i := range n {
		r := newRun(fmt.Sprintf("q-%02d", (i*7)%n), []string{"qa", "qb"}[i%2], at(time.Duration(i)*time.Minute),
			[]string{"x", "y"}[(i/2)%2])
		r.State = []task.RunState{task.RunDone, task.RunDead, task.RunRunning}[i%3]
		r.FiredAt = at(time.Duration(i/3) * time.Minute)
		b.insertRun(r)
		all = append(all, r)
	}
	slices.SortFunc(all, func(x, y *task.Run) int {
		return cmp.Or(y.FiredAt.Compare(x.FiredAt), strings.Compare(y.TriggerID, x.TriggerID))
	})
	for v := range 8 {
		q := store.RunQuery{Limit: 2}
		if v&1 != 0 {
			q.TaskID = "qa"
		}
		if v&2 != 0 {
			q.Target = "x"
		}
		if v&4 != 0 {
			q.State = task.RunDone
		}
		var want []string
		for _, r := range all {
			if (q.TaskID == "" || r.TaskID == q.TaskID) && (q.Target == "" || r.Target == q.Target) &&
				(q.State == "" || r.State == q.State) {
				want = append(want, r.TriggerID)
			}
		}
		what := fmt.Sprintf("QueryRuns(task=%q target=%q state=%q)", q.TaskID, q.Target, q.State)
		if got := b.pageRuns(what, q); !slices.Equal(got, want) {
			b.t.Errorf("%s pages = %v, want %v", what, got, want)
		}
	}
	// A run comes back whole.
	page, err := b.s.QueryRuns(b.ctx, store.RunQuery{Limit: 1})
	b.noErr("QueryRuns", err)
	if len(page) != 1 {
		b.t.Fatalf("QueryRuns limit 1 = %d runs", len(page))
	}
	b.sameRun("newest run", page[0], all[0])
	none, err := b.s.QueryRuns(b.ctx, store.RunQuery{State: "no-such-state", Limit: 5})
	b.noErr("QueryRuns of an unknown state", err)
	if len(none) != 0 {
		b.t.Errorf("QueryRuns of an unknown state = %d runs", len(none))
	}
	_, err = b.s.QueryRuns(b.ctx, store.RunQuery{Limit: 0})
	b.wantErr("QueryRuns with limit 0", err, task.ErrInvalid)
}

// pageRuns walks q's pages with the cursor and returns the trigger ids.
func (b *bundle) pageRuns(what string, q store.RunQuery) []string {
	b.t.Helper()
	var got []string
	for range 50 {
		page, err := b.s.QueryRuns(b.ctx, q)
		b.noErr(what, err)
		if len(page) > q.Limit {
			b.t.Fatalf("%s: page of %d runs, limit %d", what, len(page), q.Limit)
		}
		for _, r := range page {
			got = append(got, r.TriggerID)
		}
		if len(page) < q.Limit {
			return got
		}
		last := page[len(page)-1]
		q.Before = store.RunCursor{FiredAt: last.FiredAt, TriggerID: last.TriggerID}
	}
	b.t.Fatalf("%s: still paging after 50 pages: %v", what, got)
	return nil
}

// finishedRun returns a run of taskID at slot at(i minutes) in state st,
// finished at finished (for a final state).
func finishedRun(taskID string, i int, st task.RunState, finished time.Time) *task.Run {
	r := newRun(fmt.Sprintf("%s-%02d", taskID, i), taskID, at(time.Duration(i)*time.Minute), "hook")
	r.State = st
	if st.Final() {
		r.FinishedAt = finished
	}
	return r
}

// cleanup calls CleanupRuns and fails the test on an error.
func (b *bundle) cleanup(p store.CleanupParams) int {
	b.t.Helper()
	n, err := b.s.CleanupRuns(b.ctx, p)
	b.noErr(fmt.Sprintf("CleanupRuns(%+v)", p), err)
	return n
}

// leftRuns returns the trigger ids of every run, sorted.
func (b *bundle) leftRuns() []string {
	b.t.Helper()
	runs, err := b.s.QueryRuns(b.ctx, store.RunQuery{Limit: 1000})
	b.noErr("QueryRuns", err)
	var ids []string
	for _, r := range runs {
		ids = append(ids, r.TriggerID)
	}
	slices.Sort(ids)
	return ids
}

func (b *bundle) wantLeft(what string, want ...string) {
	b.t.Helper()
	slices.Sort(want)
	if got := b.leftRuns(); !slices.Equal(got, want) {
		b.t.Errorf("%s: runs left %v, want %v", what, got, want)
	}
}

// testCleanupNeverUnfinished: with both rules at their widest, only the
// final states go; pending, running, failed and accepted runs stay, even
// with an old finished_at.
func testCleanupNeverUnfinished(b *bundle) {
	states := []task.RunState{task.RunPending, task.RunRunning, task.RunFailed, task.RunAccepted,
		task.RunDone, task.RunDead, task.RunRejected, task.RunTimeout, task.RunCancelled, task.RunSkipped}
	var keep []string
	for i, st := range states {
		r := finishedRun("c", i, st, at(-48*time.Hour))
		if !st.Final() {
			r.FinishedAt = at(-48 * time.Hour)
			keep = append(keep, r.TriggerID)
		}
		b.insertRun(r)
	}
	if n := b.cleanup(store.CleanupParams{OlderThan: at(0), KeepPerTask: 1, Limit: 100}); n != 6 {
		b.t.Errorf("CleanupRuns deleted %d runs, want the 6 final ones", n)
	}
	b.wantLeft("after cleanup", keep...)
	if n := b.cleanup(store.CleanupParams{OlderThan: at(time.Hour), KeepPerTask: 1, Limit: 100}); n != 0 {
		b.t.Errorf("second CleanupRuns deleted %d runs, want 0", n)
	}
	if n := b.cleanup(store.CleanupParams{Limit: 100}); n != 0 {
		b.t.Errorf("CleanupRuns with both rules off deleted %d runs", n)
	}
	_, err := b.s.CleanupRuns(b.ctx, store.CleanupParams{OlderThan: at(0)})
	b.wantErr("CleanupRuns with limit 0", err, task.ErrInvalid)
}

// testCleanupOlderThan: runs that finished strictly before OlderThan go,
// whatever their task.
func testCleanupOlderThan(b *bundle) {
	for i, id := range []string{"a", "b"} {
		for k := range 3 {
			b.insertRun(finishedRun(id, k, task.RunDone, at(time.Duration(k+i)*time.Hour)))
		}
	}
	// Finished at: a-00 0h, a-01 1h, a-02 2h, b-00 1h, b-01 2h, b-02 3h.
	if n := b.cleanup(store.CleanupParams{OlderThan: at(2 * time.Hour), Limit: 100}); n != 3 {
		b.t.Errorf("CleanupRuns(older than 2h) deleted %d, want 3", n)
	}
	b.wantLeft("after OlderThan", "a-02", "b-01", "b-02")
}

// testCleanupKeepPerTask: each task keeps its newest finished runs by slot;
// unfinished runs neither go nor count.
func testCleanupKeepPerTask(b *bundle) {
	for k := range 5 {
		b.insertRun(finishedRun("a", k, task.RunDone, at(time.Hour)))
	}
	b.insertRun(finishedRun("a", 6, task.RunRunning, time.Time{}))
	b.insertRun(finishedRun("a", 7, task.RunAccepted, time.Time{}))
	for k := range 2 {
		b.insertRun(finishedRun("b", k, task.RunDead, at(time.Hour)))
	}
	// Two targets of one slot count as two runs; the newer slot wins.
	other := finishedRun("b", 2, task.RunDone, at(time.Hour))
	other.TriggerID, other.Target = "b-02-other", "other"
	b.insertRun(other)
	b.insertRun(finishedRun("b", 2, task.RunDone, at(time.Hour)))

	if n := b.cleanup(store.CleanupParams{KeepPerTask: 2, Limit: 100}); n != 5 {
		b.t.Errorf("CleanupRuns(keep 2) deleted %d, want 5", n)
	}
	b.wantLeft("after KeepPerTask 2", "a-03", "a-04", "a-06", "a-07", "b-02", "b-02-other")
	if n := b.cleanup(store.CleanupParams{KeepPerTask: 2, Limit: 100}); n != 0 {
		b.t.Errorf("second CleanupRuns(keep 2) deleted %d, want 0", n)
	}
	_, err := b.s.CleanupRuns(b.ctx, store.CleanupParams{KeepPerTask: -1, Limit: 100})
	b.wantErr("CleanupRuns with a negative keep", err, task.ErrInvalid)
}

// testCleanupBothRules: a run goes when either rule says so.
func testCleanupBothRules(b *bundle) {
	for k := range 4 {
		b.insertRun(finishedRun("a", k, task.RunDone, at(time.Duration(k)*time.Hour)))
	}
	// a-00 is older than 1h; a-01 is beyond the newest 2 (a-03, a-02).
	if n := b.cleanup(store.CleanupParams{OlderThan: at(time.Hour), KeepPerTask: 2, Limit: 100}); n != 2 {
		b.t.Errorf("CleanupRuns(both) deleted %d, want 2", n)
	}
	b.wantLeft("after both rules", "a-02", "a-03")
}

// testCleanupLimit: one call deletes at most Limit runs; the next goes on.
func testCleanupLimit(b *bundle) {
	for k := range 5 {
		b.insertRun(finishedRun("a", k, task.RunDone, at(0)))
		b.insertRun(finishedRun("b", k, task.RunSkipped, at(0)))
	}
	var counts []int
	for range 4 {
		counts = append(counts, b.cleanup(store.CleanupParams{KeepPerTask: 1, Limit: 3}))
	}
	if want := []int{3, 3, 2, 0}; !slices.Equal(counts, want) {
		b.t.Errorf("CleanupRuns(keep 1, limit 3), four times: %v, want %v", counts, want)
	}
	b.wantLeft("after KeepPerTask 1", "a-04", "b-04")
	for k := range 3 {
		b.insertRun(finishedRun("c", k, task.RunDone, at(0)))
	}
	counts = counts[:0]
	for range 3 {
		counts = append(counts, b.cleanup(store.CleanupParams{OlderThan: at(time.Hour), Limit: 2}))
	}
	if want := []int{2, 2, 1}; !slices.Equal(counts, want) {
		b.t.Errorf("CleanupRuns(older than, limit 2), three times: %v, want %v", counts, want)
	}
}
