package jobs

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"cronsheet/internal/testwait"
	"cronsheet/store"
	"cronsheet/task"
)

// TestRepairFindsNewestRunOfEveryFinalKind: the repair restores the lost
// end of each job's newest run, whatever runs of the job it meets first
// and whatever final kind the end is. Job 0 died (its end recorded),
// then its backfill run was rejected and that end lost: the old dead run,
// met first, used to hide the backfill's end. Job 1's run was cancelled
// by hand and that end lost: cancelled ends used to be left out. Job 2
// was cancelled through the API with its transition recorded: nothing is
// added to it. On both drivers.
func TestRepairFindsNewestRunOfEveryFinalKind(t *testing.T) {
	ctx := t.Context()
	st := testStore(t)
	before := New(Deps{Store: st, Trigger: noTrigger, RepairAfter: -1})
	ids := submitNamed(t, before, "http://127.0.0.1:9/backfilled", "http://127.0.0.1:9/cancelled-run", "http://127.0.0.1:9/cancelled")
	if _, err := before.Cancel(ctx, ids[2]); err != nil {
		t.Fatal(err)
	}
	before.Close()
	now := time.Now()

	// Every end comes after the jobs' submitted transitions: a history
	// is read in the order of its instants.
	old := endRunWithoutTransition(t, st, ids[0], task.RunDead, now)
	dead := store.JobEvent{JobID: ids[0], At: old.FinishedAt, State: task.JobDead, TriggerID: old.TriggerID, Attempt: 1}
	if err := st.AddJobEvents(ctx, []store.JobEvent{dead}); err != nil {
		t.Fatal(err)
	}
	backfill := &task.Run{TriggerID: "tr_backfill_" + ids[0], TaskID: ids[0], Slot: old.Slot.Add(time.Millisecond),
		Target: task.JobTargetID, TriggerType: task.TriggerBackfill, State: task.RunRejected, Attempt: 1, Node: "n", Fence: 1,
		FiredAt: now.Add(time.Second).Truncate(time.Millisecond), FinishedAt: now.Add(2 * time.Second).Truncate(time.Millisecond),
		Error: "refused again"}
	if ok, err := st.InsertRun(ctx, backfill); err != nil || !ok {
		t.Fatalf("insert backfill run: %v, %v", ok, err)
	}
	endRunWithoutTransition(t, st, ids[1], task.RunCancelled, now)

	svc := New(Deps{Store: st, Trigger: noTrigger, RepairAfter: -1})
	defer svc.Close()
	until := now.Add(time.Hour) // after every end
	n, err := svc.RepairFinalEvents(ctx, until)
	if err != nil {
		t.Fatal(err)
	}
	if ev := lastEvent(t, st, ids[0]); ev.TriggerID != backfill.TriggerID || ev.State != task.JobDead {
		t.Errorf("job %s (backfill run's end lost) ends with %+v; want dead of run %s", ids[0], ev, backfill.TriggerID)
	}
	if ev := lastEvent(t, st, ids[1]); ev.TriggerID != "tr_"+ids[1] || ev.State != task.JobCancelled {
		t.Errorf("job %s (cancelled run's end lost) ends with %+v; want cancelled of run tr_%s", ids[1], ev, ids[1])
	}
	evs, err := st.JobEvents(ctx, ids[2], store.MaxJobEvents)
	if err != nil {
		t.Fatal(err)
	}
	if c, last := cancelledEvents(t, evs); c != 1 || !last {
		t.Errorf("job %s, cancelled through the API, has history %+v; want one cancelled transition, last", ids[2], evs)
	}
	if n != 2 {
		t.Errorf("repair appended %d transitions, want 2", n)
	}
	if n, err := svc.RepairFinalEvents(ctx, until); err != nil || n != 0 {
		t.Errorf("a second repair appended %d (%v); want 0", n, err)
	}
}

// queryFaultStore fails the first fail QueryRuns calls.
type queryFaultStore struct {
	Store
	mu   sync.Mutex
	fail int
}

func (s *queryFaultStore) QueryRuns(ctx context.Context, q store.RunQuery) ([]*task.Run, error) {
	s.mu.Lock()
	failing := s.fail > 0
	if failing {
		s.fail--
	}
	s.mu.Unlock()
	if failing {
		return nil, errors.New("injected: store unavailable")
	}
	return s.Store.QueryRuns(ctx, q)
}

// TestRepairRetriesAfterStoreError: the repair a while after the start
// (it runs once per start) is tried again when the store fails it, so a
// blip at that moment does not leave a lost end unrepaired until the
// next restart.
func TestRepairRetriesAfterStoreError(t *testing.T) {
	ctx := t.Context()
	base := testStore(t)
	before := New(Deps{Store: base, Trigger: noTrigger, RepairAfter: -1})
	v, err := before.Submit(ctx, jobRequest("http://127.0.0.1:9/retry", ""))
	if err != nil {
		t.Fatal(err)
	}
	before.Close()
	endRunWithoutTransition(t, base, v.ID, task.RunDone, time.Now())
	st := &queryFaultStore{Store: base, fail: 2}
	svc := New(Deps{Store: st, Trigger: noTrigger, RepairAfter: time.Millisecond})
	defer svc.Close()
	testwait.For(t, 30*time.Second, "the lost end to be restored after the store's errors", func() bool {
		return lastEvent(t, base, v.ID).State == task.JobDone
	})
}

// TestRepairBlockedEnds: a block's marker (the cancelled run holding a
// blocked job's slot) is the job's newest run: a job blocked through the
// API, its transition recorded, gets nothing added; one whose blocked
// transition was lost gets blocked (not "run cancelled") restored.
func TestRepairBlockedEnds(t *testing.T) {
	ctx := t.Context()
	st := testStore(t)
	svc := New(Deps{Store: st, Trigger: noTrigger, RepairAfter: -1})
	defer svc.Close()
	soon := 1.0 // due within blockGuard: the block takes its slot
	var ids []string
	for _, name := range []string{"http://127.0.0.1:9/blocked", "http://127.0.0.1:9/blocked-lost"} {
		v, err := svc.Submit(ctx, Request{Method: "POST", Name: name, Delay: &soon})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, v.ID)
	}
	if v, err := svc.Block(ctx, ids[0]); err != nil || v.State != task.JobBlocked || v.Run == nil || !isBlockMarker(v.Run) {
		t.Fatalf("block: %+v, %v; want blocked with its slot held", v, err)
	}
	lost, err := st.GetTask(ctx, ids[1])
	if err != nil {
		t.Fatal(err)
	}
	if err := svc.holdSlot(ctx, lost, lost.Job.DueAt); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if _, err := st.SetTaskState(ctx, store.TaskStateParams{TaskID: ids[1], State: task.StateStopped, Anchor: now, Now: now}); err != nil {
		t.Fatal(err)
	}
	n, err := svc.RepairFinalEvents(ctx, time.Now().Add(time.Hour))
	if err != nil || n != 1 {
		t.Errorf("repair appended %d (%v); want 1", n, err)
	}
	for _, id := range ids {
		evs, err := st.JobEvents(ctx, id, store.MaxJobEvents)
		if err != nil {
			t.Fatal(err)
		}
		blocked := 0
		for _, ev := range evs {
			if ev.State == task.JobBlocked {
				blocked++
			}
		}
		if last := evs[len(evs)-1]; blocked != 1 || last.State != task.JobBlocked {
			t.Errorf("job %s's history %+v; want it to end with its one blocked transition", id, evs)
		}
	}
}
