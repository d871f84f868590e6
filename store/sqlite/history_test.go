package sqlite

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// historyStore opens a store on a temporary file with its history loop
// stopped, so a test decides when runs are listed.
func historyStore(t *testing.T) *Store {
	t.Helper()
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	s.stopHistory()
	<-s.historyDone
	t.Cleanup(func() { s.Close() })
	return s
}

// unlisted counts the runs the history loop has not listed.
func unlisted(t *testing.T, s *Store) int {
	t.Helper()
	var n int
	if err := s.r.QueryRowContext(t.Context(), `SELECT count(*) FROM runs WHERE unlisted = 1`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// addHistoryRuns inserts n runs of tasks ha/hb, fired out of id order
// with ties, and returns all runs so far newest first.
func addHistoryRuns(t *testing.T, s *Store, from, n int, all []*task.Run) []*task.Run {
	t.Helper()
	base := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	for i := from; i < from+n; i++ {
		r := &task.Run{TriggerID: fmt.Sprintf("h-%03d", (i*37)%101), TaskID: []string{"ha", "hb"}[i%2],
			Slot: base.Add(time.Duration(i) * time.Minute), Target: []string{"", "x"}[(i/2)%2],
			TriggerType: task.TriggerSchedule, State: []task.RunState{task.RunDone, task.RunRunning}[i%2],
			FiredAt: base.Add(time.Duration((i*7)%13) * time.Second)}
		if ok, err := s.InsertRun(t.Context(), r); err != nil || !ok {
			t.Fatalf("InsertRun %s = %v, %v", r.TriggerID, ok, err)
		}
		all = append(all, r)
	}
	slices.SortFunc(all, func(x, y *task.Run) int {
		return cmp.Or(y.FiredAt.Compare(x.FiredAt), strings.Compare(y.TriggerID, x.TriggerID))
	})
	return all
}

// checkHistory pages every filter combination, three runs a page, and
// compares with all (newest first).
func checkHistory(t *testing.T, s *Store, all []*task.Run, when string) {
	t.Helper()
	for v := range runQueryVariants {
		q := store.RunQuery{Limit: 3}
		if v&byTask != 0 {
			q.TaskID = "ha"
		}
		if v&byTarget != 0 {
			q.Target = "x"
		}
		if v&byState != 0 {
			q.State = task.RunDone
		}
		var want, got []string
		for _, r := range all {
			if (q.TaskID == "" || r.TaskID == q.TaskID) && (q.Target == "" || r.Target == q.Target) &&
				(q.State == "" || r.State == q.State) {
				want = append(want, r.TriggerID)
			}
		}
		for range 100 {
			page, err := s.QueryRuns(t.Context(), q)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range page {
				got = append(got, r.TriggerID)
			}
			if len(page) < q.Limit {
				break
			}
			last := page[len(page)-1]
			q.Before = store.RunCursor{FiredAt: last.FiredAt, TriggerID: last.TriggerID}
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: QueryRuns(%+v) = %v, want %v", when, q, got, want)
		}
	}
}

// checkOutcomes compares RecentOutcomes of task ha with all's newest ten
// finished runs of it, newest first.
func checkOutcomes(t *testing.T, s *Store, all []*task.Run, when string) {
	t.Helper()
	var want, got []string
	for _, r := range all {
		if r.TaskID == "ha" && r.State.Final() {
			want = append(want, r.TriggerID)
		}
	}
	want = want[:min(len(want), 10)]
	out, err := s.RecentOutcomes(t.Context(), []string{"ha"}, 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range out["ha"] {
		got = append(got, o.TriggerID)
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s: RecentOutcomes(ha) = %v, want %v", when, got, want)
	}
}

// TestHistoryListedAndTail checks that history queries see every run,
// newest first, whether the loop has listed it or not: all in the tail,
// all listed, a mix, after a listed run's fired_at moves, and after the
// newest runs are deleted (their ids are used again).
func TestHistoryListedAndTail(t *testing.T) {
	s := historyStore(t)
	ctx := t.Context()
	all := addHistoryRuns(t, s, 0, 30, nil)
	if n := unlisted(t, s); n != 30 {
		t.Fatalf("unlisted after insert = %d, want 30: a fire's run must not be written to the history indexes", n)
	}
	checkHistory(t, s, all, "all in the tail")
	checkOutcomes(t, s, all, "all in the tail")
	if n, err := s.listHistory(ctx); err != nil || n != 30 {
		t.Fatalf("listHistory = %d, %v; want 30", n, err)
	}
	if n := unlisted(t, s); n != 0 {
		t.Fatalf("unlisted after listing = %d", n)
	}
	checkHistory(t, s, all, "all listed")
	checkOutcomes(t, s, all, "all listed")
	all = addHistoryRuns(t, s, 30, 20, all)
	checkHistory(t, s, all, "listed and tail")
	checkOutcomes(t, s, all, "listed and tail")

	// A listed run fired again later moves to the front.
	moved := all[len(all)-1]
	moved.FiredAt = moved.FiredAt.Add(time.Hour)
	if err := s.UpdateRun(ctx, moved); err != nil {
		t.Fatal(err)
	}
	all = append([]*task.Run{moved}, all[:len(all)-1]...)
	checkHistory(t, s, all, "after fired_at moved")
	checkOutcomes(t, s, all, "after fired_at moved")

	// Delete the newest ids, listed: the mark comes down with them, and the
	// runs that take their ids again are found.
	if _, err := s.listHistory(ctx); err != nil {
		t.Fatal(err)
	}
	rs, err := s.w.QueryContext(ctx, `DELETE FROM runs WHERE id > (SELECT max(id) - 5 FROM runs) RETURNING trigger_id`)
	if err != nil {
		t.Fatal(err)
	}
	gone := map[string]bool{}
	for rs.Next() {
		var id string
		if err := rs.Scan(&id); err != nil {
			t.Fatal(err)
		}
		gone[id] = true
	}
	rs.Close()
	all = slices.DeleteFunc(all, func(r *task.Run) bool { return gone[r.TriggerID] })
	all = addHistoryRuns(t, s, 60, 5, all)
	checkHistory(t, s, all, "after the newest were deleted")
	checkOutcomes(t, s, all, "after the newest were deleted")
}

// TestHistoryLoopLists checks that the store's own loop lists the runs a
// fire wrote once they stop coming.
func TestHistoryLoopLists(t *testing.T) {
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "history.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	all := addHistoryRuns(t, s, 0, 10, nil)
	for i := 0; unlisted(t, s) > 0; i++ {
		if i > 600 {
			t.Fatalf("the history loop has not listed the runs: %d unlisted", unlisted(t, s))
		}
		time.Sleep(50 * time.Millisecond)
	}
	checkHistory(t, s, all, "listed by the loop")
}
