package jobs

import (
	"sync"
	"testing"
	"time"

	"cronsheet/internal/testwait"
	"cronsheet/store"
	"cronsheet/task"
)

// endRunWithoutTransition stores, for job id, a run that started (its
// running transition recorded) and ended in state, without the final
// transition: what a kill between the store's write of the outcome and
// the recorder's write of the transition leaves.
func endRunWithoutTransition(t *testing.T, st Store, id string, state task.RunState, at time.Time) *task.Run {
	t.Helper()
	r := &task.Run{TriggerID: "tr_" + id, TaskID: id, Slot: at.Add(-time.Second).Truncate(time.Millisecond),
		Target: task.JobTargetID, TriggerType: task.TriggerSchedule, State: state, Attempt: 1, Node: "n", Fence: 1,
		FiredAt: at.Add(-time.Second).Truncate(time.Millisecond), FinishedAt: at.Truncate(time.Millisecond), Output: "ok"}
	if state != task.RunDone {
		r.Error = "refused"
	}
	if ok, err := st.InsertRun(t.Context(), r); err != nil || !ok {
		t.Fatalf("insert run: %v, %v", ok, err)
	}
	running := store.JobEvent{JobID: id, At: r.FiredAt, State: task.JobRunning, TriggerID: r.TriggerID, Attempt: 1, Reason: "schedule"}
	if err := st.AddJobEvents(t.Context(), []store.JobEvent{running}); err != nil {
		t.Fatal(err)
	}
	return r
}

func lastEvent(t *testing.T, st Store, id string) store.JobEvent {
	t.Helper()
	evs, err := st.JobEvents(t.Context(), id, store.MaxJobEvents)
	if err != nil || len(evs) == 0 {
		t.Fatalf("events of %s: %v, %v", id, evs, err)
	}
	return evs[len(evs)-1]
}

// submitNamed submits a delayed job named each of names to svc and
// returns their ids, in order.
func submitNamed(t *testing.T, svc *Service, names ...string) []string {
	t.Helper()
	var ids []string
	for _, name := range names {
		v, err := svc.Submit(t.Context(), jobRequest(name, ""))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, v.ID)
	}
	return ids
}

// TestRepairFinalEvents: a job whose run ended (stored) while its final
// transition was lost (the process killed before the recorder wrote it)
// gets that transition appended by the next service a while after it
// starts, handed to the event subscribers too; a second repair appends
// nothing, and a job whose history is whole is left alone. On both
// drivers (testStore).
func TestRepairFinalEvents(t *testing.T) {
	ctx := t.Context()
	st := testStore(t)
	before := New(Deps{Store: st, Trigger: noTrigger, RepairAfter: -1})
	ids := submitNamed(t, before, "http://127.0.0.1:9/done", "http://127.0.0.1:9/dead", "http://127.0.0.1:9/whole")
	before.Close()
	now := time.Now()
	endRunWithoutTransition(t, st, ids[0], task.RunDone, now)
	endRunWithoutTransition(t, st, ids[1], task.RunRejected, now)
	whole := endRunWithoutTransition(t, st, ids[2], task.RunDone, now)
	done := store.JobEvent{JobID: ids[2], At: whole.FinishedAt, State: task.JobDone, TriggerID: whole.TriggerID, Attempt: 1}
	if err := st.AddJobEvents(ctx, []store.JobEvent{done}); err != nil {
		t.Fatal(err)
	}

	var (
		mu        sync.Mutex
		published []store.JobEvent
	)
	svc := New(Deps{Store: st, Trigger: noTrigger, RepairAfter: time.Millisecond})
	defer svc.Close()
	svc.OnEvents(func(evs []store.JobEvent) {
		mu.Lock()
		published = append(published, evs...)
		mu.Unlock()
	})
	testwait.For(t, 30*time.Second, "the lost final transitions to be restored", func() bool {
		return lastEvent(t, st, ids[0]).State == task.JobDone && lastEvent(t, st, ids[1]).State == task.JobDead
	})
	for i, want := range []task.JobState{task.JobDone, task.JobDead} {
		if ev := lastEvent(t, st, ids[i]); ev.TriggerID != "tr_"+ids[i] || ev.State != want {
			t.Errorf("job %s's last transition %+v; want %s of run tr_%s", ids[i], ev, want, ids[i])
		}
	}
	testwait.For(t, 30*time.Second, "the restored transitions to reach the subscribers", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(published) >= 2
	})

	if n, err := svc.RepairFinalEvents(ctx, time.Now()); err != nil || n != 0 {
		t.Errorf("a second repair appended %d (%v); want 0", n, err)
	}
	for _, id := range ids {
		evs, err := st.JobEvents(ctx, id, store.MaxJobEvents)
		if err != nil {
			t.Fatal(err)
		}
		finals := 0
		for _, ev := range evs {
			if ev.State == task.JobDone || ev.State == task.JobDead {
				finals++
			}
		}
		if finals != 1 {
			t.Errorf("job %s has %d final transitions, want 1: %+v", id, finals, evs)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(published) != 2 {
		t.Errorf("subscribers got %d transitions, want the 2 restored: %+v", len(published), published)
	}
}
