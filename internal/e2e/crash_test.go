package e2e

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"cronsheet/internal/testwait"
	"cronsheet/store/sqlite"
	"cronsheet/task"
)

// newCrashNode returns a node of the built binary on a fresh SQLite file
// (and that file's path), with short patrols and a 2 s lease, allowed to
// call back to loopback: what the crash tests kill and restart.
func newCrashNode(t *testing.T) (*process, string) {
	t.Helper()
	dir := t.TempDir()
	bin := buildBinary(t)
	addr := freeAddr(t)
	dbPath := filepath.Join(dir, "data", "cronsheet.db")
	cfg := fmt.Sprintf(`listen: %s
auth: local_dev
log_level: warn
store: {driver: sqlite, path: %s}
patrol: {interval: 100ms, lease: 2s}
fire: {backoff_base: 100ms, backoff_max: 1s}
shutdown_timeout: 5s
http: {allow: [127.0.0.0/8]}
`, addr, dbPath)
	node := newProcess(t, bin, dir, "cronsheet", addr, cfg)
	return node, dbPath
}

// TestCrashSafety runs the real binary, arms tasks firing every second to
// an HTTP hook, kills it with SIGKILL mid-run, restarts it, stops it with
// SIGTERM, and proves from the ledger and from the deliveries counted at
// the hook that every run reached it, none twice unless the kill cut it
// (then under its own trigger id), and that, with misfire: once, every
// slot was either fired or covered by the misfire fire that followed the
// downtime.
func TestCrashSafety(t *testing.T) {
	t.Parallel() // see procs_test.go
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	node, dbPath := newCrashNode(t)

	h := startHook(t, 0)
	node.start(t)
	createHookTarget(t, node.base(), h)
	var ids []string
	for i := range 3 {
		// overlap allow: a slot that comes while the restarted node is still
		// re-sending the run the kill cut is delivered too, not skipped (the
		// default for a repeating schedule), so every run must reach the hook.
		row := postRow(t, node.base(), fmt.Sprintf(`{"title":"t%d","content":"tick %d","when":"every 1s","targets":"hook","misfire":"once","overlap":"allow"}`, i, i))
		ids = append(ids, row.ID)
	}
	// Jobs due around the kill: a kill between a run's outcome and its
	// job's transition must not leave the job's history short of its end.
	jobIDs := submitJobs(t, node.base(), h, 40, 1500*time.Millisecond, 4*time.Second)
	time.Sleep(3500 * time.Millisecond)
	node.kill(t)
	killedAt := time.Now()
	time.Sleep(2500 * time.Millisecond) // slots pass while no node runs

	node.start(t)
	time.Sleep(5 * time.Second) // old claims expire (lease 2s), misfires fire, ticking resumes
	waitJobHistoriesEnd(t, node.base(), jobIDs)
	node.stop(t)

	st, err := sqlite.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	for _, id := range ids {
		// SIGTERM released the claims, so another node can take over at once.
		if tk, err := st.GetTask(ctx, id); err != nil || tk.IsClaimed != 0 {
			t.Errorf("task %s after graceful stop: claimed=%v err=%v, want released", id, tk != nil && tk.IsClaimed == 1, err)
		}
	}
	delivered := map[string]int{} // trigger id → deliveries at the hook
	for _, d := range h.all() {
		delivered[d.TriggerID]++
	}
	for _, id := range ids {
		runs, err := st.ListRuns(ctx, id, time.Time{}, 10000)
		if err != nil {
			t.Fatal(err)
		}
		checkLedger(t, id, runs, delivered, killedAt)
	}
}

// checkLedger checks one task's runs against the deliveries counted at the
// hook: each delivered once, or twice when it was fired within a second
// of the kill (an attempt the kill may have cut).
func checkLedger(t *testing.T, id string, runs []*task.Run, delivered map[string]int, killedAt time.Time) {
	t.Helper()
	sort.Slice(runs, func(i, j int) bool { return runs[i].Slot.Before(runs[j].Slot) })
	if len(runs) < 5 {
		t.Fatalf("task %s: only %d runs", id, len(runs))
	}
	seen := map[time.Time]bool{}
	misfires := 0
	for i, r := range runs {
		if seen[r.Slot] {
			t.Errorf("task %s: slot %s fired twice", id, r.Slot)
		}
		seen[r.Slot] = true
		if r.State != task.RunDone {
			t.Errorf("task %s: run %s at %s is %s, want done", id, r.TriggerID, r.Slot, r.State)
		}
		cutByKill := r.FiredAt.After(killedAt.Add(-time.Second)) && r.FiredAt.Before(killedAt)
		if n := delivered[r.TriggerID]; n != 1 && (n != 2 || !cutByKill) {
			t.Errorf("task %s: run %s at %s (fired %s, kill at %s) delivered %d times at the hook",
				id, r.TriggerID, r.Slot, r.FiredAt.Format("15:04:05.000"), killedAt.Format("15:04:05.000"), n)
		}
		if r.FiredAt.Before(r.Slot) {
			t.Errorf("task %s: slot %s fired early at %s", id, r.Slot, r.FiredAt)
		}
		if r.TriggerType == task.TriggerMisfire {
			misfires++
		}
		if i == 0 {
			continue
		}
		gap := r.Slot.Sub(runs[i-1].Slot)
		if gap%time.Second != 0 {
			t.Errorf("task %s: slots %s and %s are not whole seconds apart", id, runs[i-1].Slot, r.Slot)
		}
		// A gap means slots were missed; with misfire once they are covered
		// by one misfire fire of the latest missed slot.
		if gap > time.Second && r.TriggerType != task.TriggerMisfire {
			t.Errorf("task %s: slots between %s and %s lost (next run is %s, not a misfire)",
				id, runs[i-1].Slot, r.Slot, r.TriggerType)
		}
	}
	if misfires != 1 {
		t.Errorf("task %s: %d misfire runs, want 1 for one downtime", id, misfires)
	}
}

// waitJobHistoriesEnd waits until every job of ids is done or dead and its
// history's last transition is that state, read through the API; it fails
// naming the jobs whose history stops short.
func waitJobHistoriesEnd(t *testing.T, base string, ids []string) {
	t.Helper()
	short := map[string]string{}
	ended := func() bool {
		clear(short)
		for _, id := range ids {
			var v struct {
				State  task.JobState `json:"state"`
				Events []struct {
					State task.JobState `json:"state"`
				} `json:"events"`
			}
			if _, err := callJSON(context.Background(), "GET", base+"/api/v1/jobs/"+id, nil, &v); err != nil {
				short[id] = err.Error()
				continue
			}
			last := task.JobState("")
			if len(v.Events) > 0 {
				last = v.Events[len(v.Events)-1].State
			}
			if (v.State != task.JobDone && v.State != task.JobDead) || last != v.State {
				short[id] = fmt.Sprintf("job %s, last transition %q", v.State, last)
			}
		}
		return len(short) == 0
	}
	t.Cleanup(func() {
		if t.Failed() && len(short) > 0 {
			t.Logf("jobs whose history does not end in their final state: %v", short)
		}
	})
	testwait.For(t, 60*time.Second, "every job to end with a history ending in its final state", ended)
}
