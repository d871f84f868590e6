package storetest

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// ownershipCases check runs owned under fences (store.Ledger.TakeOverRun,
// fenced UpdateRun/FinishRun/AcceptRun), the rescuer's query, the ledger
// batch's answer after a partial write, and the node registry.
func ownershipCases(cfg config) []testCase {
	return []testCase{
		{name: "FencedWrites", fn: testFencedWrites},
		{name: "TakeOverRefusals", fn: testTakeOverRefusals},
		{name: "TakeOverQueuedRun", fn: testTakeOverQueuedRun},
		{name: "RecordFiresRetryKeepsOwnRuns", fn: testRecordFiresRetry},
		{name: "StrandedRuns", fn: testStrandedRuns},
		{name: "NodeRegistry", fn: testNodeRegistry},
		{name: "ConcurrentTakeOversOneWins", fn: testConcurrentTakeOvers, skip: cfg.skipConcurrency},
		// Ordering alone keeps it (no atomic update needed): FerretDB too.
		{name: "DeleteRacesSync", fn: testDeleteRacesSync},
	}
}

// fencedRun returns a running schedule run owned by node at fence 1.
func fencedRun(triggerID, taskID string, slot time.Time, node string) *task.Run {
	r := newRun(triggerID, taskID, slot, "email")
	r.State, r.Node, r.Fence = task.RunRunning, node, 1
	return r
}

func testFencedWrites(b *bundle) {
	b.addTask(newTask("t1", "r1"))
	r := fencedRun("tr-1", "t1", at(0), "node-a")
	b.insertRun(r)
	// The owner writes at its fence.
	r.Attempt = 2
	b.noErr("UpdateRun at the owner's fence", b.s.UpdateRun(b.ctx, r))

	taken, err := b.s.TakeOverRun(b.ctx, store.TakeOverParams{TriggerID: "tr-1", Fence: 1, Node: "node-b"})
	b.noErr("TakeOverRun", err)
	if taken.Fence != 2 || taken.Node != "node-b" || taken.Attempt != 2 || taken.State != task.RunRunning {
		b.t.Fatalf("TakeOverRun = %s, want fence 2, node-b, attempt 2, running", mustJSON(taken))
	}

	// The old owner is fenced off every write, and nothing of it lands.
	old := *r
	old.State, old.Attempt, old.Error = task.RunFailed, 3, "old owner"
	if err := b.s.UpdateRun(b.ctx, &old); !errors.Is(err, task.ErrFenced) || !errors.Is(err, task.ErrConflict) {
		b.t.Errorf("UpdateRun at the old fence = %v, want task.ErrFenced (a task.ErrConflict)", err)
	}
	old.State = task.RunDone
	err = b.s.FinishRun(b.ctx, &old, store.TaskStatusParams{TaskID: "t1", LastStatus: "done"})
	if !errors.Is(err, task.ErrFenced) {
		b.t.Errorf("FinishRun at the old fence = %v, want task.ErrFenced", err)
	}
	if tk := b.getTask("t1"); tk.LastStatus == "done" {
		b.t.Errorf("a fenced FinishRun applied the task status %q", tk.LastStatus)
	}
	if rf, ok := b.s.(store.RunFinisher); ok {
		errs, err := rf.FinishRuns(b.ctx, []store.FireRecord{{Run: &old, Status: store.TaskStatusParams{TaskID: "t1", LastStatus: "done"}}})
		b.noErr("FinishRuns", err)
		if len(errs) != 1 || !errors.Is(errs[0], task.ErrFenced) {
			b.t.Errorf("FinishRuns at the old fence = %v, want [task.ErrFenced]", errs)
		}
	}
	old.State, old.Deadline = task.RunRunning, at(time.Hour)
	if ok, err := b.s.AcceptRun(b.ctx, &old, store.TaskStatusParams{TaskID: "t1", LastStatus: "accepted"}); ok || err != nil {
		b.t.Errorf("AcceptRun at the old fence = %t, %v; want false, nil", ok, err)
	}
	got, err := b.s.GetRun(b.ctx, "tr-1")
	b.noErr("GetRun", err)
	if got.State != task.RunRunning || got.Attempt != 2 || got.Error != "" || got.Fence != 2 || got.Node != "node-b" {
		b.t.Errorf("after the old owner's writes: %s, want the new owner's run untouched", mustJSON(got))
	}

	// The new owner writes at its fence.
	taken.State, taken.Attempt, taken.FinishedAt = task.RunDone, 3, at(time.Minute)
	b.noErr("FinishRun at the new fence", b.s.FinishRun(b.ctx, taken, store.TaskStatusParams{TaskID: "t1", LastStatus: "done"}))
	if got, err := b.s.GetRun(b.ctx, "tr-1"); err != nil || got.State != task.RunDone || got.Attempt != 3 {
		b.t.Errorf("after the new owner's finish: %s, %v", mustJSON(got), err)
	}
	if tk := b.getTask("t1"); tk.LastStatus != "done" {
		b.t.Errorf("task last_status = %q after the new owner's finish, want done", tk.LastStatus)
	}
}

func testTakeOverRefusals(b *bundle) {
	b.insertRun(fencedRun("tr-1", "t1", at(0), "node-a"))
	if _, err := b.s.TakeOverRun(b.ctx, store.TakeOverParams{TriggerID: "tr-1", Fence: 1, Node: "node-b"}); err != nil {
		b.t.Fatalf("TakeOverRun: %v", err)
	}
	// A second taker that read the same fence loses.
	if _, err := b.s.TakeOverRun(b.ctx, store.TakeOverParams{TriggerID: "tr-1", Fence: 1, Node: "node-c"}); !errors.Is(err, task.ErrFenced) {
		b.t.Errorf("TakeOverRun at a stale fence = %v, want task.ErrFenced", err)
	}
	if _, err := b.s.TakeOverRun(b.ctx, store.TakeOverParams{TriggerID: "tr-none", Fence: 1, Node: "node-c"}); !errors.Is(err, task.ErrNotFound) {
		b.t.Errorf("TakeOverRun of a missing run = %v, want task.ErrNotFound", err)
	}
	// A finished run is nobody's to take.
	done := fencedRun("tr-2", "t1", at(time.Minute), "node-a")
	done.State = task.RunDone
	b.insertRun(done)
	if _, err := b.s.TakeOverRun(b.ctx, store.TakeOverParams{TriggerID: "tr-2", Fence: 1, Node: "node-c"}); !errors.Is(err, task.ErrFenced) {
		b.t.Errorf("TakeOverRun of a finished run = %v, want task.ErrFenced", err)
	}
	// A taker that read the run before its owner's attempt wrote a new
	// deadline loses: the attempt may be in flight.
	moved := fencedRun("tr-4", "t1", at(3*time.Minute), "node-a")
	moved.Deadline = at(time.Hour)
	b.insertRun(moved)
	read := *moved
	moved.Deadline, moved.Attempt = at(2*time.Hour), 2
	b.noErr("UpdateRun (the owner's next attempt)", b.s.UpdateRun(b.ctx, moved))
	if _, err := b.s.TakeOverRun(b.ctx, store.TakeOverParams{TriggerID: "tr-4", Fence: read.Fence, Deadline: read.Deadline, Node: "node-c"}); !errors.Is(err, task.ErrFenced) {
		b.t.Errorf("TakeOverRun at a stale deadline = %v, want task.ErrFenced", err)
	}
	if got, err := b.s.TakeOverRun(b.ctx, store.TakeOverParams{TriggerID: "tr-4", Fence: 1, Deadline: at(2 * time.Hour), Node: "node-c"}); err != nil || got.Fence != 2 {
		b.t.Errorf("TakeOverRun at the current fence and deadline = %s, %v; want fence 2", mustJSON(got), err)
	}
	// A run from before fences (fence 0) is taken at fence 0.
	legacy := newRun("tr-3", "t1", at(2*time.Minute), "email")
	b.insertRun(legacy)
	if got, err := b.s.TakeOverRun(b.ctx, store.TakeOverParams{TriggerID: "tr-3", Node: "node-c"}); err != nil || got.Fence != 1 {
		b.t.Errorf("TakeOverRun of a fence-0 run = %s, %v; want fence 1", mustJSON(got), err)
	}
}

func testRecordFiresRetry(b *bundle) {
	b.addTask(newTask("t1", "r1"))
	recs := []store.FireRecord{
		{Run: fencedRun("tr-1", "t1", at(0), "node-a"), Status: store.TaskStatusParams{TaskID: "t1", LastFire: at(0)}},
		{Run: fencedRun("tr-2", "t1", at(time.Minute), "node-a"), Status: store.TaskStatusParams{TaskID: "t1", LastFire: at(time.Minute)}},
	}
	first, err := b.s.RecordFires(b.ctx, recs[:1])
	b.noErr("RecordFires", err)
	if !first[0].Inserted {
		b.t.Fatalf("RecordFires = %+v, want inserted", first)
	}
	// The same records again, as a group commit retries after a write
	// whose answer was lost: the stored one is still this caller's.
	again, err := b.s.RecordFires(b.ctx, recs)
	b.noErr("RecordFires again", err)
	for i, res := range again {
		if !res.Inserted || res.Err != nil {
			b.t.Errorf("retried record %d = %+v, want inserted (its own trigger id holds the key)", i, res)
		}
	}
	// Another trigger id for a fired slot is a duplicate.
	dup, err := b.s.RecordFires(b.ctx, []store.FireRecord{
		{Run: fencedRun("tr-other", "t1", at(0), "node-b"), Status: store.TaskStatusParams{TaskID: "t1", LastFire: at(0)}},
	})
	b.noErr("RecordFires of a fired slot", err)
	if dup[0].Inserted || dup[0].Err != nil {
		b.t.Errorf("another trigger id for a fired slot = %+v, want not inserted, no error", dup[0])
	}
}

func testStrandedRuns(b *bundle) {
	const (
		self  = "node-me"
		live  = "node-live"
		dead  = "node-dead"
		quiet = "node-quiet"
	)
	since := at(time.Hour)
	mk := func(id string, node string, fired time.Time, deadline time.Time, state task.RunState) {
		r := fencedRun(id, "t-"+id, fired, node)
		r.FiredAt, r.Deadline, r.State = fired, deadline, state
		b.insertRun(r)
	}
	later := at(3 * time.Hour)
	mk("live-busy", live, at(2*time.Hour), later, task.RunRunning)      // its owner delivers it
	mk("live-stuck", live, at(0), at(30*time.Minute), task.RunRunning)  // past its deadline
	mk("dead-run", dead, at(2*time.Hour), later, task.RunRunning)       // its owner is gone
	mk("dead-retry", dead, at(2*time.Hour), later, task.RunFailed)      // awaiting a retry
	mk("dead-done", dead, at(2*time.Hour), time.Time{}, task.RunDone)   // finished
	mk("dead-accepted", dead, at(2*time.Hour), later, task.RunAccepted) // waits for feedback
	mk("self-old", self, at(0), later, task.RunRunning)                 // an earlier process's
	mk("self-new", self, at(2*time.Hour), later, task.RunRunning)       // this process's
	mk("self-no-deadline", self, at(2*time.Hour), time.Time{}, task.RunPending)
	// A quiet node (beats stopped, may still run): its attempts in flight
	// are left until their deadline; what is not in flight is taken.
	mk("quiet-busy", quiet, at(2*time.Hour), later, task.RunRunning)
	mk("quiet-past", quiet, at(2*time.Hour), at(90*time.Minute), task.RunRunning)
	mk("quiet-retry", quiet, at(2*time.Hour), later, task.RunFailed)
	mk("quiet-queued", quiet, at(2*time.Hour), time.Time{}, task.RunPending)
	got, err := b.s.StrandedRuns(b.ctx, store.StrandedParams{
		Live: []string{self, live}, Quiet: []string{quiet}, QuietBefore: at(2 * time.Hour),
		Self: self, SelfSince: since, DeadlineBefore: at(time.Hour), Limit: 100,
	})
	b.noErr("StrandedRuns", err)
	var ids []string
	for _, r := range got {
		ids = append(ids, r.TriggerID)
	}
	slices.Sort(ids)
	want := []string{"dead-retry", "dead-run", "live-stuck", "quiet-past", "quiet-queued", "quiet-retry", "self-old"}
	if !slices.Equal(ids, want) {
		b.t.Errorf("StrandedRuns = %v, want %v", ids, want)
	}
	if got, err := b.s.StrandedRuns(b.ctx, store.StrandedParams{Live: []string{self, live}, Self: self,
		SelfSince: since, DeadlineBefore: at(time.Hour), Limit: 2}); err != nil || len(got) != 2 {
		b.t.Errorf("StrandedRuns with limit 2 = %d runs, %v", len(got), err)
	}
}

func testNodeRegistry(b *bundle) {
	a := store.Node{ID: "n1", Incarnation: "inc-a", Version: "v1", Host: "h1", PID: 10, StartedAt: at(0), BeatAt: at(0)}
	b.noErr("RegisterNode", b.s.RegisterNode(b.ctx, a, at(-time.Minute)))
	// Another process under the same id while the entry is live: refused.
	other := a
	other.Incarnation, other.PID, other.BeatAt = "inc-b", 11, at(time.Second)
	if err := b.s.RegisterNode(b.ctx, other, at(-time.Minute)); !errors.Is(err, task.ErrConflict) {
		b.t.Errorf("RegisterNode over a live entry = %v, want task.ErrConflict", err)
	}
	// The same process registering again is fine.
	b.noErr("RegisterNode again", b.s.RegisterNode(b.ctx, a, at(-time.Minute)))
	a.BeatAt, a.Held = at(10*time.Second), 7
	b.noErr("BeatNode", b.s.BeatNode(b.ctx, a))
	nodes, err := b.s.ListNodes(b.ctx)
	b.noErr("ListNodes", err)
	if len(nodes) != 1 || nodes[0] != a {
		b.t.Errorf("ListNodes = %s, want [%s]", mustJSON(nodes), mustJSON(a))
	}
	// Once the entry is stale, another process takes the id; the old one's
	// beats are refused from then on.
	other.BeatAt = at(2 * time.Minute)
	b.noErr("RegisterNode over a stale entry", b.s.RegisterNode(b.ctx, other, at(time.Minute)))
	if err := b.s.BeatNode(b.ctx, a); !errors.Is(err, task.ErrConflict) {
		b.t.Errorf("BeatNode of the replaced incarnation = %v, want task.ErrConflict", err)
	}
	b.noErr("RemoveNode of the replaced incarnation", b.s.RemoveNode(b.ctx, "n1", "inc-a"))
	if nodes, err := b.s.ListNodes(b.ctx); err != nil || len(nodes) != 1 || nodes[0].Incarnation != "inc-b" || nodes[0].PID != 11 {
		b.t.Errorf("after removing the replaced incarnation: %s, %v; want inc-b kept", mustJSON(nodes), err)
	}
	b.noErr("RemoveNode", b.s.RemoveNode(b.ctx, "n1", "inc-b"))
	if nodes, err := b.s.ListNodes(b.ctx); err != nil || len(nodes) != 0 {
		b.t.Errorf("after RemoveNode: %s, %v; want none", mustJSON(nodes), err)
	}
	// A beat re-creates a missing entry (e.g. removed by an operator).
	b.noErr("BeatNode of a missing entry", b.s.BeatNode(b.ctx, other))
	if nodes, err := b.s.ListNodes(b.ctx); err != nil || len(nodes) != 1 || nodes[0].ID != "n1" {
		b.t.Errorf("after a beat of a missing entry: %s, %v", mustJSON(nodes), err)
	}
}

// testConcurrentTakeOvers: raceWorkers nodes take over the same runs at
// the fence they read: each run is won by exactly one.
func testConcurrentTakeOvers(b *bundle) {
	const runs = 40
	for i := range runs {
		b.insertRun(fencedRun(fmt.Sprintf("tr-%02d", i), "t1", at(time.Duration(i)*time.Minute), "node-dead"))
	}
	wins := make([]int, runs)
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := make(chan struct{})
	for w := range raceWorkers {
		wg.Go(func() {
			<-start
			for i := range runs {
				_, err := b.s.TakeOverRun(b.ctx, store.TakeOverParams{TriggerID: fmt.Sprintf("tr-%02d", i), Fence: 1,
					Node: fmt.Sprintf("node-%d", w)})
				switch {
				case err == nil:
					mu.Lock()
					wins[i]++
					mu.Unlock()
				case !errors.Is(err, task.ErrFenced):
					b.t.Errorf("TakeOverRun: %v", err)
				}
			}
		})
	}
	close(start)
	wg.Wait()
	for i, n := range wins {
		if n != 1 {
			b.t.Errorf("run tr-%02d taken over %d times, want once", i, n)
		}
	}
}

// testDeleteRacesSync deletes rows while they are synced, round after
// round, until both orders were seen: whichever wins, the row's task
// never outlives the row (it is gone, or disabled and deleted).
func testDeleteRacesSync(b *bundle) {
	const maxRounds, enough = 300, 3
	var syncFirst, deleteFirst int
	for i := 0; i < maxRounds && (syncFirst < enough || deleteFirst < enough); i++ {
		rowID, taskID := fmt.Sprintf("r%03d", i), fmt.Sprintf("t%03d", i)
		row := b.insertRow(scenario, rowID)
		var syncErr, delErr error
		var wg sync.WaitGroup
		start := make(chan struct{})
		// Random head starts, so that each order comes up.
		jitter := func() { time.Sleep(time.Duration(rand.IntN(1500)) * time.Microsecond) }
		wg.Go(func() {
			<-start
			jitter()
			syncErr = b.s.ApplySync(b.ctx, store.ApplySyncParams{Scenario: scenario, RowID: rowID,
				RowVersion: row.Version, Task: newTask(taskID, rowID), IsActive: task.RowActive, Now: at(0)})
		})
		wg.Go(func() {
			<-start
			jitter()
			delErr = b.s.DeleteRow(b.ctx, scenario, rowID)
		})
		close(start)
		wg.Wait()
		b.noErr("DeleteRow", delErr)
		switch {
		case syncErr == nil:
			syncFirst++
		case errors.Is(syncErr, task.ErrNotFound):
			deleteFirst++
		default:
			b.t.Fatalf("ApplySync racing DeleteRow: %v", syncErr)
		}
		tk, err := b.s.GetTask(b.ctx, taskID)
		if errors.Is(err, task.ErrNotFound) {
			continue
		}
		b.noErr("GetTask", err)
		if tk.IsEnable != 0 {
			b.t.Errorf("round %d: task %s is enabled after its row was deleted (sync error %v)", i, taskID, syncErr)
		}
	}
	if syncFirst < enough || deleteFirst < enough {
		b.t.Errorf("orders seen: sync first %d, delete first %d; want both at least %d times", syncFirst, deleteFirst, enough)
	}
}
