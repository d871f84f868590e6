package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// planQuery is a query TestQueryPlans explains.
type planQuery struct{ name, sql string }

// planQueries lists every query the store issues.
func planQueries() []planQuery {
	qs := []planQuery{
		// The patrol queries.
		{"Claim", qClaim},
		{"ParkTask", qParkTask},
		{"UnfetchedRows", qListUnfetchedRows},
		{"RenewLeases", qRenewLeases},
		{"ListClaimed", qListClaimed},
		{"AnyExpired", qAnyExpired},
		{"ReleaseExpired", qReleaseExpired},
		{"PurgeDeleted", qPurgeDeleted},
		{"RowlessClaimed", qRowlessClaimed},
		{"RetireRowless", qRetireRowless},
		{"LastSlot", qLastSlot},
		{"UnfinishedRuns", qUnfinishedRuns},
		{"StrandedRuns", qStrandedRuns(2, 1)},
		{"RecordFiresTaskRows", qTaskRows("?,?")},
		{"RecordFiresInsert", qInsertRuns(insertRows)},
		{"TakeOverRun", qTakeOverRun},
		{"LedgerOwner", qLedgerOwner},
		{"RegisterNode", qRegisterNode},
		{"BeatNode", qBeatNode},
		{"RemoveNode", qRemoveNode},
		{"ListNodes", qListNodes},
		{"ListRuns", qListRuns},
		{"OverdueTasks", qOverdue},
		// Everything else.
		{"InsertRow", qInsertRow},
		{"GetRow", qGetRow},
		{"RowVersion", qRowVersion},
		{"UpdateRowFields", qUpdateRowFields},
		{"DeleteRow", qDeleteRow},
		{"RetireRowTasks", qRetireRowTasks},
		{"ListRows", qListRows},
		{"GetTask", qGetTask},
		{"ReleaseTask", qReleaseTask},
		{"ReleaseClaims", qReleaseClaims},
		{"TaskExists", qTaskExists},
		{"MirrorStatus", qMirrorStatus},
		{"TaskForUpsert", qTaskForUpsert},
		{"InsertTask", qInsertTask},
		{"RescheduleTask", qRescheduleTask},
		{"UpdateTask", qUpdateTask},
		{"DisableRowTask", qDisableRowTask},
		{"MarkRowFetched", qMarkRowFetched},
		{"InsertRun", qInsertRun},
		{"UpdateRun", qUpdateRun},
		{"UpdateRunFired", qUpdateRunFired},
		{"DeleteRun", qDeleteRun},
		{"GetRun", qGetRun},
		{"AddOutbox", qAddOutbox},
		{"OutboxByTrigger", qOutboxByTrigger},
		{"ListOutbox", qListOutbox},
		// Control.
		{"InsertTarget", qInsertTarget},
		{"GetTarget", qGetTarget},
		{"TargetVersion", qTargetVersion},
		{"UpdateTarget", qUpdateTarget},
		{"DeleteTarget", qDeleteTarget},
		{"ListTargets", qListTargets},
		{"TaskForState", qTaskForState},
		{"SetTaskState", qSetTaskState},
		{"AcceptRun", qAcceptRun},
		{"RunExists", qRunExists},
		{"RunForFeedback", qRunForFeedback},
		{"AddProgress", qAddProgress},
		{"AddFinal", qAddFinal},
		{"AnyDueAccepted", qAnyDueAccepted},
		{"DueAccepted", qDueAccepted},
		{"TimeoutRun", qTimeoutRun},
		{"CleanupAge", qCleanupAge},
		{"CleanupKeep", qCleanupKeep},
		{"HistoryTail", qHistoryTail},
		{"ListHistory", qListHistory},
		{"MoveMark", qMoveMark},
		{"History/FireStats", qFireStats()},
		{"History/Outcomes", qOutcomes()},
		// Jobs.
		{"JobByKey", qJobByKey},
		{"KeyHolder", qKeyHolder},
		{"InsertJobKey", qInsertJobKey},
		{"MoveJobKey", qMoveJobKey},
		{"AddJobEvent", qAddJobEvent},
		{"AddJobEvents", qAddJobEvents(insertRows)},
		{"JobEvents", qJobEvents},
		{"RestoreJobKey", qRestoreJobKey},
	}
	for v := range runQueryVariants {
		qs = append(qs, planQuery{fmt.Sprintf("History/QueryRuns/task=%t,target=%t,state=%t",
			v&byTask != 0, v&byTarget != 0, v&byState != 0), qQueryRuns(v)})
	}
	for v := range statusVariants {
		if !statusMaskUsed(v) {
			continue
		}
		qs = append(qs, planQuery{fmt.Sprintf("SetTaskStatus/%05b", v), qSetTaskStatus(v)})
		if v != 0 {
			qs = append(qs, planQuery{fmt.Sprintf("SetTaskStatusNoRow/%05b", v), qSetTaskStatusNoRow(v)})
		}
	}
	return qs
}

// TestQueryPlansCoverPrepared checks that TestQueryPlans explains every
// prepared statement.
func TestQueryPlansCoverPrepared(t *testing.T) {
	explained := map[string]bool{}
	for _, q := range planQueries() {
		explained[q.sql] = true
	}
	var st stmts
	for _, sp := range st.specs() {
		if !explained[sp.query] {
			t.Errorf("prepared query not in planQueries: %s", firstLine(sp.query))
		}
	}
}

// TestQueryPlans runs EXPLAIN QUERY PLAN on every query the store issues and
// fails when one scans a whole table or sorts in a temporary B-tree. A scan
// of a partial index is allowed: it holds only the rows the query wants. A
// history union (historyUnion, the queries named History/…) must read the
// listed runs by a search of a history index and the tail by a rowid
// range; its sorts are allowed, each of at most its limit or the tail.
func TestQueryPlans(t *testing.T) {
	queries := planQueries()
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "plan.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })

	partial := partialIndexes(t, s)
	fullScan := regexp.MustCompile(`^SCAN (rows|time_task|runs|outbox|targets|job_keys|job_events)\b(?: USING (?:COVERING )?INDEX (\w+))?`)
	for _, q := range queries {
		t.Run(q.name, func(t *testing.T) {
			plan := strings.Split(explain(t, s, q.sql, make([]any, countParams(q.sql))...), "\n")
			history := strings.HasPrefix(q.name, "History/")
			if history {
				checkHistoryPlan(t, plan)
			}
			for _, d := range plan {
				if m := fullScan.FindStringSubmatch(d); m != nil && !partial[m[2]] {
					t.Errorf("full table scan %q in plan:\n%s", d, strings.Join(plan, "\n"))
				}
				if strings.Contains(d, "TEMP B-TREE") && !history {
					t.Errorf("sort in a temporary B-tree %q in plan:\n%s", d, strings.Join(plan, "\n"))
				}
			}
			t.Logf("%s", strings.Join(plan, " | "))
		})
	}
}

// checkHistoryPlan checks that a history union's plan searches a history
// index and the tail's rowid range.
func checkHistoryPlan(t *testing.T, plan []string) {
	t.Helper()
	joined := strings.Join(plan, "\n")
	if !regexp.MustCompile(`SEARCH runs USING INDEX ix_runs_hist(_task|_target)? \(`).MatchString(joined) {
		t.Errorf("history query does not search a history index:\n%s", joined)
	}
	if !strings.Contains(joined, "SEARCH runs USING INTEGER PRIMARY KEY (rowid>?)") {
		t.Errorf("history query does not read the tail by its rowid range:\n%s", joined)
	}
}

// partialIndexes returns the names of the schema's partial indexes.
func partialIndexes(t *testing.T, s *Store) map[string]bool {
	t.Helper()
	rs, err := s.r.Query(`SELECT name FROM sqlite_master WHERE type = 'index' AND sql LIKE '%WHERE%'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	out := map[string]bool{}
	for rs.Next() {
		var name string
		if err := rs.Scan(&name); err != nil {
			t.Fatal(err)
		}
		out[name] = true
	}
	if len(out) == 0 {
		t.Fatal("no partial indexes found")
	}
	return out
}

// countParams returns how many arguments query takes: its "?" count, or
// the highest "?N".
func countParams(query string) int {
	n, highest := 0, 0
	for _, m := range regexp.MustCompile(`\?(\d*)`).FindAllStringSubmatch(query, -1) {
		if m[1] == "" {
			n++
			continue
		}
		var k int
		for _, c := range m[1] {
			k = k*10 + int(c-'0')
		}
		highest = max(highest, k)
	}
	return max(n, highest)
}

// TestUnfinishedStates checks that the partial indexes' states are
// exactly right: unfinishedWhere the states that are neither final nor
// accepted (an accepted run is not final, yet not resumed either),
// finalWhere and finalStates the final ones.
func TestUnfinishedStates(t *testing.T) {
	all := []task.RunState{task.RunPending, task.RunRunning, task.RunDone, task.RunFailed, task.RunDead,
		task.RunRejected, task.RunTimeout, task.RunCancelled, task.RunSkipped, task.RunAccepted}
	nUnfinished, nFinal := 0, 0
	for _, st := range all {
		unfinished := strings.Contains(unfinishedWhere, "state = '"+string(st)+"'")
		final := strings.Contains(finalWhere, "state = '"+string(st)+"'")
		if final != st.Final() || strings.Contains(finalStates, "'"+string(st)+"'") != final {
			t.Errorf("state %q: in finalWhere = %v, in finalStates = %v, Final() = %v", st, final,
				strings.Contains(finalStates, "'"+string(st)+"'"), st.Final())
		}
		if want := !st.Final() && st != task.RunAccepted; unfinished != want {
			t.Errorf("state %q: in unfinishedWhere = %v, want %v", st, unfinished, want)
		}
		if unfinished {
			nUnfinished++
		}
		if final {
			nFinal++
		}
	}
	if strings.Count(unfinishedWhere, "state = ") != nUnfinished || strings.Count(finalWhere, "state = ") != nFinal {
		t.Errorf("unfinishedWhere or finalWhere names a state that is not a run state:\n%s\n%s", unfinishedWhere, finalWhere)
	}
}

// TestRowTasksPlan: the web table's read of a page's row tasks searches
// ix_task_row (a partial index: the query must repeat the index's
// condition on row_id for SQLite to use it). It sorts the page's few
// tasks, so it is not among planQueries, which allow no sort.
func TestRowTasksPlan(t *testing.T) {
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "plan.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	q := rowTasksSQL(3)
	plan := explain(t, s, q, make([]any, countParams(q))...)
	if !strings.Contains(plan, "SEARCH time_task USING INDEX ix_task_row") {
		t.Errorf("row tasks do not search ix_task_row:\n%s", plan)
	}
}

// TestRunsTargetIndexHoldsTargetsOnly checks that ix_runs_hist_target
// holds only runs of a target: a task's own run (target ”, every job's)
// is not written to it, and a target-filtered page still searches it.
func TestRunsTargetIndexHoldsTargetsOnly(t *testing.T) {
	ctx := t.Context()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "plan.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	slot := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC)
	for _, r := range []*task.Run{
		{TriggerID: "own", TaskID: "t1", Slot: slot, FiredAt: slot, TriggerType: task.TriggerSchedule},
		{TriggerID: "of-target", TaskID: "t1", Slot: slot, Target: "hook", FiredAt: slot, TriggerType: task.TriggerSchedule},
	} {
		if _, err := s.InsertRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	var partial int
	if err := s.r.QueryRowContext(ctx, `SELECT partial FROM pragma_index_list('runs') WHERE name = 'ix_runs_hist_target'`).Scan(&partial); err != nil {
		t.Fatal(err)
	}
	if partial != 1 {
		t.Errorf("ix_runs_hist_target is not partial: every run (a job's too) is written to it")
	}
	plan := explain(t, s, qQueryRuns(byTarget), "hook", int64(1<<62), "", 10)
	if !strings.Contains(plan, "USING INDEX ix_runs_hist_target") {
		t.Errorf("a target's page does not search ix_runs_hist_target:\n%s", plan)
	}
	runs, err := s.QueryRuns(ctx, store.RunQuery{Target: "hook", Limit: 10})
	if err != nil || len(runs) != 1 || runs[0].TriggerID != "of-target" {
		t.Errorf("QueryRuns(target hook) = %v, %v; want the run of-target", runs, err)
	}
}
