package e2e

import (
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite" // the outage's own connection to the nodes' file

	"cronsheet/task"
)

// clusterSizes are the scenario sizes, from the environment, with defaults
// that keep the whole TestCluster near four minutes on two cores.
type clusterSizes struct {
	Tasks    int           // CLUSTER_TASKS: every-1s tasks in (a), (b), (d)
	Jobs     int           // CLUSTER_JOBS: delayed jobs in (a) and (c)
	Duration time.Duration // CLUSTER_DURATION: kill loop of (b); (a) churns half of it
	Kills    int           // CLUSTER_KILLS: kill -9 rounds of (c)
	Outage   time.Duration // CLUSTER_OUTAGE: the store lock of (d)
}

func clusterSizesFromEnv(t *testing.T) clusterSizes {
	t.Helper()
	s := clusterSizes{Tasks: 100, Jobs: 1000, Duration: 60 * time.Second, Kills: 10, Outage: 5 * time.Second}
	envInt := func(name string, p *int) {
		if v := os.Getenv(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				t.Fatalf("%s=%q: want a positive integer", name, v)
			}
			*p = n
		}
	}
	envDuration := func(name string, p *time.Duration) {
		if v := os.Getenv(name); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil || d <= 0 {
				t.Fatalf("%s=%q: want a positive duration such as 60s", name, v)
			}
			*p = d
		}
	}
	envInt("CLUSTER_TASKS", &s.Tasks)
	envInt("CLUSTER_JOBS", &s.Jobs)
	envDuration("CLUSTER_DURATION", &s.Duration)
	envInt("CLUSTER_KILLS", &s.Kills)
	envDuration("CLUSTER_OUTAGE", &s.Outage)
	return s
}

// TestCluster is the multi-process harness: three cronsheet processes
// on one SQLite file deliver to a slow local hook, which counts
// every delivery by trigger id and idempotency key, while ownership moves,
// nodes are killed with SIGKILL, and the store is locked. Each scenario
// logs its figures; the summary repeats them at the end.
//
// Sizes: CLUSTER_TASKS, CLUSTER_JOBS, CLUSTER_DURATION, CLUSTER_KILLS,
// CLUSTER_OUTAGE (see clusterSizes).
func TestCluster(t *testing.T) {
	if testing.Short() {
		t.Skip("runs three cronsheet processes for minutes")
	}
	sizes := clusterSizesFromEnv(t)
	buildBinary(t)
	var summary []string
	report := func(t *testing.T, scenario string, figures ...fmt.Stringer) {
		parts := make([]string, len(figures))
		for i, f := range figures {
			parts[i] = f.String()
		}
		line := fmt.Sprintf("CLUSTER %s: %s", scenario, strings.Join(parts, " "))
		t.Log(line)
		summary = append(summary, line)
	}
	defer func() {
		t.Logf("CLUSTER sizes: tasks=%d jobs=%d duration=%s kills=%d outage=%s", sizes.Tasks, sizes.Jobs, sizes.Duration, sizes.Kills, sizes.Outage)
		for _, l := range summary {
			t.Log(l)
		}
	}()

	t.Run("a_ownership_moves", func(t *testing.T) { clusterOwnershipMoves(t, sizes, report, clusterStore{}) })
	t.Run("b_kill9_periodic", func(t *testing.T) { clusterKillPeriodic(t, sizes, report) })
	t.Run("c_kill9_jobs", func(t *testing.T) { clusterKillJobs(t, sizes, report) })
	t.Run("d_store_outage", func(t *testing.T) { clusterStoreOutage(t, sizes, report) })
	t.Run("e_kill9_no_restart", func(t *testing.T) { clusterKillNoRestart(t, sizes, report) })
}

// TestClusterOnMongo is scenario (a) on the mongo driver: three cronsheet
// processes on one database of CRONSHEET_TEST_MONGO_URI, ownership moving
// all the time; no trigger id may reach the hook twice. It runs when
// CRONSHEET_TEST_DRIVER=mongo, at a small size (CLUSTER_* override it),
// with the shipped patrol interval and a 10 s lease. It is not part of
// .ci/run: on FerretDB v1 (the only MongoDB-wire server here) some runs
// end with FerretDB no longer answering anyone (docs/FERRETDB.md).
func TestClusterOnMongo(t *testing.T) {
	uri := os.Getenv("CRONSHEET_TEST_MONGO_URI")
	if os.Getenv("CRONSHEET_TEST_DRIVER") != "mongo" || uri == "" {
		t.Skip("needs CRONSHEET_TEST_DRIVER=mongo and CRONSHEET_TEST_MONGO_URI")
	}
	if testing.Short() {
		t.Skip("runs three cronsheet processes for a minute")
	}
	sizes := clusterSizes{Tasks: 16, Jobs: 100, Duration: 50 * time.Second}
	if os.Getenv("CLUSTER_TASKS") != "" || os.Getenv("CLUSTER_JOBS") != "" || os.Getenv("CLUSTER_DURATION") != "" {
		sizes = clusterSizesFromEnv(t)
	}
	db := fmt.Sprintf("cluster_%d", time.Now().UnixNano())
	// At most 10 connections per node: FerretDB v1 stops answering
	// anyone when more operations are in flight than its own PostgreSQL
	// pool holds, as three nodes' default pools (100 each) allow
	// (docs/FERRETDB.md).
	uri = withQuery(uri, "maxPoolSize=10")
	cs := clusterStore{
		YAML:     fmt.Sprintf("{driver: mongo, uri: %q, database: %s}", uri, db),
		Interval: time.Second,
		Lease:    10 * time.Second,
	}
	report := func(t *testing.T, scenario string, figures ...fmt.Stringer) {
		parts := make([]string, len(figures))
		for i, f := range figures {
			parts[i] = f.String()
		}
		t.Logf("CLUSTER mongo %s: %s (tasks=%d jobs=%d churn=%s)", scenario, strings.Join(parts, " "),
			sizes.Tasks, sizes.Jobs, sizes.Duration/2)
	}
	clusterOwnershipMoves(t, sizes, report, cs)
}

// clusterKillNoRestart is the failover case: one node is killed with
// SIGKILL and stays down, so the surviving nodes must take its tasks once
// its lease has run out. Every every-1s task fires again (failover, aim:
// within the lease + 2 s), no slot is missing, and duplicates are only
// re-sends of what the killed node had in flight.
func clusterKillNoRestart(t *testing.T, sizes clusterSizes, report reporter) {
	c := startCluster(t, 3, 1500*time.Millisecond)
	createHookTarget(t, c.nodes[0].base(), c.hook)
	tasks := createEverySecondTasks(t, c.nodes[1].base(), sizes.Tasks)
	time.Sleep(4 * time.Second) // armed, firing
	// The node holding the most tasks dies.
	victim, most := c.nodes[0], -1
	for _, n := range c.nodes {
		var st struct {
			Armed int `json:"armed"`
		}
		getJSON(t, n.base()+"/api/v1/status", &st)
		if st.Armed > most {
			victim, most = n, st.Armed
		}
	}
	t.Logf("killing %s, which holds %d of %d tasks", victim.id, most, len(tasks))
	if most == 0 {
		t.Fatal("no node holds a task")
	}
	kills := []time.Time{c.killNode(t, victim)}
	time.Sleep(clusterLease + 6*time.Second)
	cutoff := time.Now().Add(-2 * time.Second)

	sf, fired := waitLedgerSettled(t, c, tasks, cutoff, time.Time{}, time.Time{}, 30*time.Second)
	ds := c.hook.all()
	dups := countDuplicates(ds, c.hook.senders)
	fo, each := failoverFigures(fired, kills)
	report(t, "e(kill -9, no restart)", sf, dups, text(fo), deliveryLag(ds), c.hook.senders)
	t.Logf("failover of the kill: %s", each)
	if sf.Runs == 0 {
		t.Fatal("nothing tested: no ledger runs")
	}
	if sf.Missing != 0 {
		t.Errorf("%d slots missing (neither in the ledger nor covered by a misfire run)", sf.Missing)
	}
	if sf.Undelivered != 0 || sf.Unfinished != 0 {
		t.Errorf("%d ledger runs never reached the hook, %d never finished", sf.Undelivered, sf.Unfinished)
	}
	if n := dups.unexplained(crashCauses); n != 0 || dups.SlotsUnderTwoIDs != 0 {
		t.Errorf("%d re-sends not explained by a kill of their sender, %d slots under two trigger ids; want none", n, dups.SlotsUnderTwoIDs)
	}
	if d, ok := failover(fired, kills[0]); !ok {
		t.Errorf("the killed node's tasks did not all fire again (failover %s)", d)
	}
}

// reporter prints one scenario's figures (t.Log and the summary).
type reporter func(t *testing.T, scenario string, figures ...fmt.Stringer)

// text is a fmt.Stringer of a ready string.
type text string

func (s text) String() string { return string(s) }

// clusterOwnershipMoves is scenario (a): every-1s tasks and delayed jobs
// while tasks change owner all the time — state toggles and schedule edits
// through a random node. No trigger id may reach the hook twice.
func clusterOwnershipMoves(t *testing.T, sizes clusterSizes, report reporter, cs clusterStore) {
	c := startClusterOn(t, 3, 1500*time.Millisecond, cs)
	createHookTarget(t, c.nodes[0].base(), c.hook)
	tasks := createEverySecondTasks(t, c.nodes[1].base(), sizes.Tasks)
	churn := sizes.Duration / 2
	jobs := submitJobs(t, c.nodes[2].base(), c.hook, sizes.Jobs, time.Second, churn)

	stopped := map[string]bool{}
	twoSeconds := map[string]bool{}
	var edits, toggles, failed int
	ctx := context.Background()
	for end := time.Now().Add(churn); time.Now().Before(end); {
		id := tasks[rand.IntN(len(tasks))]
		base := c.anyLive()
		var err error
		if rand.IntN(2) == 0 {
			state := task.StateStopped
			if stopped[id] {
				state = task.StateRunning
			}
			_, err = callJSON(ctx, "PUT", base+"/api/v1/tasks/"+id+"/state", map[string]any{"state": state}, nil)
			if err == nil {
				stopped[id] = !stopped[id]
				toggles++
			}
		} else {
			when := "every 2s"
			if twoSeconds[id] {
				when = "every 1s"
			}
			_, err = callJSON(ctx, "PATCH", base+"/api/v1/scenarios/memos/rows/"+id, map[string]any{"when": when}, nil)
			if err == nil {
				twoSeconds[id] = !twoSeconds[id]
				edits++
			}
		}
		if err != nil {
			failed++
			t.Logf("churn: %v", err)
		}
		time.Sleep(time.Duration(20+rand.IntN(60)) * time.Millisecond)
	}
	// Stop every task (one more change of owner), then let the jobs and
	// the deliveries in flight finish.
	for _, id := range tasks {
		mustCall(t, "PUT", c.anyLive()+"/api/v1/tasks/"+id+"/state", map[string]any{"state": task.StateStopped}, nil)
	}
	states := waitJobsFinal(t, c.nodes[0].base(), jobs, 60*time.Second)
	waitHookQuiet(t, c.hook, 3*time.Second, 30*time.Second)

	ds := c.hook.all()
	dups := countDuplicates(ds, c.hook.senders)
	jf := jobFigures(states, ds)
	report(t, "a(ownership moves)", text(fmt.Sprintf("toggles=%d edits=%d churn_errors=%d", toggles, edits, failed)), dups, jf,
		deliveryLag(ds), c.hook.senders)
	for _, e := range dups.Examples {
		t.Log("duplicate:", e)
	}
	for _, id := range dups.ExampleIDs {
		t.Logf("the nodes' log lines about %s:\n%s", id, c.logsAbout(id))
	}
	if dups.Deliveries == 0 || dups.MultiNodeTasks == 0 {
		t.Errorf("nothing tested: %d deliveries, %d tasks delivered by two nodes", dups.Deliveries, dups.MultiNodeTasks)
	}
	if dups.DupTriggerIDs != 0 || dups.SlotsUnderTwoIDs != 0 {
		t.Errorf("%d trigger ids delivered twice and %d slots under two trigger ids; want none (no node was killed)",
			dups.DupTriggerIDs, dups.SlotsUnderTwoIDs)
	}
	jf.check(t)
}

// clusterKillPeriodic is scenario (b): every-1s tasks while one node at a
// time is killed with SIGKILL and restarted under its node id. No slot
// may be missing from the ledger (a gap must be covered by a misfire run),
// every run must reach the hook, and the only duplicates are re-sends of
// runs a killed node had in flight, under the same trigger id.
func clusterKillPeriodic(t *testing.T, sizes clusterSizes, report reporter) {
	c := startCluster(t, 3, 1500*time.Millisecond)
	createHookTarget(t, c.nodes[0].base(), c.hook)
	tasks := createEverySecondTasks(t, c.nodes[1].base(), sizes.Tasks)
	time.Sleep(3 * time.Second)

	var kills []time.Time
	for end := time.Now().Add(sizes.Duration); time.Now().Before(end); {
		victim := c.nodes[rand.IntN(len(c.nodes))]
		kills = append(kills, c.killNode(t, victim))
		time.Sleep(time.Second) // down: its slots pass
		c.startNode(t, victim)
		time.Sleep(time.Duration(2000+rand.IntN(2000)) * time.Millisecond)
	}
	time.Sleep(clusterLease + 4*time.Second) // the last kill's tasks come back
	cutoff := time.Now().Add(-2 * time.Second)

	sf, fired := waitLedgerSettled(t, c, tasks, cutoff, time.Time{}, time.Time{}, 30*time.Second)
	ds := c.hook.all()
	dups := countDuplicates(ds, c.hook.senders)
	fo, each := failoverFigures(fired, kills)
	report(t, "b(kill -9 periodic)", sf, dups, text(fo), deliveryLag(ds), c.hook.senders)
	t.Logf("failover of each kill: %s", each)
	logSlowestFailover(t, fired, ds, kills)
	for _, e := range append(sf.Examples, dups.Examples...) {
		t.Log("example:", e)
	}
	for _, id := range dups.ExampleIDs {
		t.Logf("the nodes' log lines about %s:\n%s", id, c.logsAbout(id))
	}
	if sf.Runs == 0 {
		t.Fatal("nothing tested: no ledger runs")
	}
	if sf.Missing != 0 {
		t.Errorf("%d slots missing (neither in the ledger nor covered by a misfire run)", sf.Missing)
	}
	if sf.Undelivered != 0 || sf.Unfinished != 0 {
		t.Errorf("%d ledger runs never reached the hook, %d never finished", sf.Undelivered, sf.Unfinished)
	}
	if n := dups.unexplained(crashCauses); n != 0 || dups.SlotsUnderTwoIDs != 0 {
		t.Errorf("%d re-sends not explained by a kill of their sender, %d slots under two trigger ids; want none", n, dups.SlotsUnderTwoIDs)
	}
}

// clusterKillJobs is scenario (c): delayed jobs while one node is killed
// with SIGKILL again and again. Every job must end done or dead (none left
// running), every done job must have reached the hook, and duplicates
// are only re-sends of what the killed node had in flight.
func clusterKillJobs(t *testing.T, sizes clusterSizes, report reporter) {
	c := startCluster(t, 3, 1500*time.Millisecond)
	victim, front := c.nodes[0], c.nodes[1]
	const meanRound = 3 * time.Second
	jobs := submitJobs(t, front.base(), c.hook, sizes.Jobs, time.Second, time.Duration(sizes.Kills)*meanRound)

	var kills []time.Time
	for range sizes.Kills {
		time.Sleep(time.Duration(1500+rand.IntN(2000)) * time.Millisecond)
		kills = append(kills, c.killNode(t, victim))
		time.Sleep(500 * time.Millisecond)
		c.startNode(t, victim)
	}
	states := waitJobsFinal(t, front.base(), jobs, 4*clusterLease+90*time.Second)
	waitHookQuiet(t, c.hook, 3*time.Second, 30*time.Second)

	ds := c.hook.all()
	dups := countDuplicates(ds, c.hook.senders)
	jf := jobFigures(states, ds)
	report(t, "c(kill -9 jobs)", text(fmt.Sprintf("kills=%d", len(kills))), jf, dups, c.hook.senders)
	for _, e := range dups.Examples {
		t.Log("duplicate:", e)
	}
	for _, id := range dups.ExampleIDs {
		t.Logf("the nodes' log lines about %s:\n%s", id, c.logsAbout(id))
	}
	jf.check(t)
	if n := dups.unexplained(crashCauses); n != 0 || dups.SlotsUnderTwoIDs != 0 {
		t.Errorf("%d re-sends not explained by a kill of their sender, %d slots under two trigger ids; want none", n, dups.SlotsUnderTwoIDs)
	}
}

// clusterStoreOutage is scenario (d): every-1s tasks while another
// connection holds BEGIN EXCLUSIVE on the nodes' SQLite file. Every slot
// of the outage must end in the ledger or be covered by a misfire run.
func clusterStoreOutage(t *testing.T, sizes clusterSizes, report reporter) {
	c := startCluster(t, 3, 1500*time.Millisecond)
	createHookTarget(t, c.nodes[0].base(), c.hook)
	tasks := createEverySecondTasks(t, c.nodes[1].base(), sizes.Tasks)
	time.Sleep(4 * time.Second)

	from, to := holdStoreLock(t, c.dbPath, sizes.Outage)
	time.Sleep(clusterLease + 5*time.Second)
	cutoff := time.Now().Add(-2 * time.Second)

	sf, _ := waitLedgerSettled(t, c, tasks, cutoff, from, to, 30*time.Second)
	ds := c.hook.all()
	dups := countDuplicates(ds, c.hook.senders)
	report(t, "d(store outage)", text(fmt.Sprintf("outage=%s", to.Sub(from).Round(time.Millisecond))), sf, dups,
		deliveryLag(ds), outageLag(ds, from, to), c.hook.senders)
	for _, e := range append(sf.Examples, dups.Examples...) {
		t.Log("example:", e)
	}
	for _, id := range dups.ExampleIDs {
		t.Logf("the nodes' log lines about %s:\n%s", id, c.logsAbout(id))
	}
	if sf.Runs == 0 {
		t.Fatal("nothing tested: no ledger runs")
	}
	if sf.Missing != 0 {
		t.Errorf("%d slots missing, %d of them in the outage (neither in the ledger nor covered by a misfire run)", sf.Missing, sf.MissingIn)
	}
	if sf.Undelivered != 0 || sf.Unfinished != 0 {
		t.Errorf("%d ledger runs never reached the hook, %d never finished", sf.Undelivered, sf.Unfinished)
	}
	if dups.DupTriggerIDs != 0 || dups.SlotsUnderTwoIDs != 0 {
		t.Errorf("%d trigger ids delivered twice, %d slots under two trigger ids; want none (no node was killed)", dups.DupTriggerIDs, dups.SlotsUnderTwoIDs)
	}
}

// holdStoreLock makes the store unavailable: its own connection holds
// BEGIN EXCLUSIVE on the file for d. It returns when the lock was held.
func holdStoreLock(t *testing.T, dbPath string, d time.Duration) (from, to time.Time) {
	t.Helper()
	ctx := context.Background()
	db, err := sql.Open("sqlite", "file:"+dbPath+"?_pragma=busy_timeout(30000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN EXCLUSIVE"); err != nil {
		t.Fatalf("take the store lock: %v", err)
	}
	from = time.Now()
	time.Sleep(d)
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		t.Fatalf("release the store lock: %v", err)
	}
	return from, time.Now()
}

// waitLedgerSettled reads every task's ledger until each run up to cutoff
// is final and delivered at the hook, or the deadline passes, and returns
// the slot figures (missing slots inside [winFrom, winTo] also counted
// apart) and the ledgers read last.
func waitLedgerSettled(t *testing.T, c *cluster, tasks []string, cutoff, winFrom, winTo time.Time, deadline time.Duration) (slotFigures, ledgers) {
	t.Helper()
	ctx := context.Background()
	until := time.Now().Add(deadline)
	for {
		delivered := map[string]bool{}
		for _, d := range c.hook.all() {
			delivered[d.TriggerID] = true
		}
		var f slotFigures
		l := ledgers{}
		base := c.anyLive()
		for _, id := range tasks {
			runs, err := ledgerRuns(ctx, base, id)
			if err != nil {
				t.Fatal(err)
			}
			l[id] = runs
			f.checkSlots(id, runs, delivered, cutoff, winFrom, winTo)
		}
		if f.Undelivered == 0 && f.Unfinished == 0 || time.Now().After(until) {
			return f, l
		}
		time.Sleep(time.Second)
	}
}

// jobStates counts jobs by state, and keeps the state of each.
type jobStates map[string]task.JobState

// waitJobsFinal polls every job through base until all are final (done,
// dead, cancelled) or the deadline passes, and returns their states.
func waitJobsFinal(t *testing.T, base string, ids []string, deadline time.Duration) jobStates {
	t.Helper()
	ctx := context.Background()
	states := jobStates{}
	until := time.Now().Add(deadline)
	for {
		var open []string
		for _, id := range ids {
			if s, ok := states[id]; ok && jobFinal(s) {
				continue
			}
			s, err := jobState(ctx, base, id)
			if err != nil {
				t.Fatal(err)
			}
			states[id] = s
			if !jobFinal(s) {
				open = append(open, id)
			}
		}
		if len(open) == 0 || time.Now().After(until) {
			return states
		}
		time.Sleep(time.Second)
	}
}

func jobFinal(s task.JobState) bool {
	return s == task.JobDone || s == task.JobDead || s == task.JobCancelled
}

// waitHookQuiet waits until the hook got nothing new for quiet (at most
// deadline).
func waitHookQuiet(t *testing.T, h *hook, quiet, deadline time.Duration) {
	t.Helper()
	until := time.Now().Add(deadline)
	last, since := h.count(), time.Now()
	for time.Now().Before(until) {
		time.Sleep(200 * time.Millisecond)
		if n := h.count(); n != last {
			last, since = n, time.Now()
		} else if time.Since(since) >= quiet {
			return
		}
	}
}

// jobsFigures are the jobs' end states against what the hook received.
type jobsFigures struct {
	Jobs        int
	ByState     map[task.JobState]int
	Delivered   int // jobs the hook received at least once
	DoneNotSeen int // done, but the hook never received them
	SeenNotDone int // received, but not done
}

func jobFigures(states jobStates, ds []delivery) jobsFigures {
	seen := map[string]bool{}
	for _, d := range ds {
		if d.Path == "/j" {
			seen[d.taskID()] = true
		}
	}
	f := jobsFigures{Jobs: len(states), ByState: map[task.JobState]int{}}
	for id, s := range states {
		f.ByState[s]++
		if seen[id] {
			f.Delivered++
		}
		if s == task.JobDone && !seen[id] {
			f.DoneNotSeen++
		}
		if s != task.JobDone && seen[id] {
			f.SeenNotDone++
		}
	}
	return f
}

func (f jobsFigures) String() string {
	var states []string
	for _, s := range []task.JobState{task.JobDone, task.JobDead, task.JobCancelled, task.JobRunning, task.JobPending, task.JobFailed, task.JobBlocked, task.JobBackfilling} {
		if n := f.ByState[s]; n > 0 {
			states = append(states, fmt.Sprintf("%s=%d", s, n))
		}
	}
	return fmt.Sprintf("jobs=%d states{%s} jobs_delivered=%d done_never_delivered=%d delivered_not_done=%d",
		f.Jobs, strings.Join(states, " "), f.Delivered, f.DoneNotSeen, f.SeenNotDone)
}

// check fails the test unless every job ended done or dead and done means
// delivered.
func (f jobsFigures) check(t *testing.T) {
	t.Helper()
	if open := f.Jobs - f.ByState[task.JobDone] - f.ByState[task.JobDead]; open != 0 {
		t.Errorf("%d of %d jobs did not end done or dead: %v", open, f.Jobs, f.ByState)
	}
	if f.DoneNotSeen != 0 {
		t.Errorf("%d jobs are done but never reached the hook", f.DoneNotSeen)
	}
}

// logSlowestFailover shows, for the kill that took longest to recover, the
// task that fired last: its ledger runs and hook deliveries around the kill.
func logSlowestFailover(t *testing.T, fired ledgers, ds []delivery, kills []time.Time) {
	t.Helper()
	var worst time.Duration
	var k time.Time
	var id string
	for _, kill := range kills {
		if d, slowest, ok := slowestFailover(fired, kill); ok && d > worst {
			worst, k, id = d, kill, slowest
		}
	}
	if id == "" {
		return
	}
	from, to := k.Add(-3*time.Second), k.Add(worst+time.Second)
	t.Logf("slowest failover: %s, task %s, kill at %s", worst.Round(10*time.Millisecond), id, k.Format("15:04:05.000"))
	for _, r := range fired[id] {
		if !r.Slot.Before(from) && !r.Slot.After(to) {
			t.Logf("  run %s slot %s %s fired %s by %s: %s", r.TriggerID, r.Slot.Format("15:04:05"), r.TriggerType,
				r.FiredAt.Format("15:04:05.000"), r.Node, r.State)
		}
	}
	for _, d := range ds {
		if d.taskID() == id && !d.Arrived.Before(from) && !d.Arrived.After(to) {
			t.Logf("  delivery %s slot %s from %s arrived %s", d.TriggerID, d.slot().Format("15:04:05"), d.Sender, d.Arrived.Format("15:04:05.000"))
		}
	}
}

// outageLag is the longest slot-to-hook time of the runs whose slot fell
// in the outage: it shows the lock held the nodes back.
func outageLag(ds []delivery, from, to time.Time) text {
	var worst time.Duration
	n := 0
	for _, d := range ds {
		if s := d.slot(); strings.HasPrefix(d.Path, "/t/") && !s.Before(from) && !s.After(to) {
			n++
			worst = max(worst, d.Arrived.Sub(s))
		}
	}
	return text(fmt.Sprintf("outage_slots_delivered=%d outage_lag_max=%s", n, worst.Round(10*time.Millisecond)))
}

// withQuery returns uri with the query parameter kv added.
func withQuery(uri, kv string) string {
	if strings.Contains(uri, "?") {
		return uri + "&" + kv
	}
	if !strings.HasSuffix(uri, "/") {
		uri += "/"
	}
	return uri + "?" + kv
}
