package jobs

import (
	"errors"
	"testing"
	"time"

	"cronsheet/fire"
	"cronsheet/task"
)

// TestCancelAfterUnblockedRunIsTooLate: a delayed job whose slot a block
// took, then fired by its unblock under a slot of its own, has run; a
// cancel is refused as too late and a replace under its key adds no
// cancelled transition to it, so its history keeps the outcome it reads.
func TestCancelAfterUnblockedRunIsTooLate(t *testing.T) {
	ctx := t.Context()
	st := testStore(t)
	svc := New(Deps{Store: st, Trigger: noTrigger})
	defer svc.Close()
	ran := map[string]string{} // job id → the door it went through
	for _, door := range []string{"cancel", "replace"} {
		v, err := svc.Submit(ctx, jobRequest("http://127.0.0.1:9/b", "k-"+door))
		if err != nil {
			t.Fatalf("submit: %v", err)
		}
		now := time.Now()
		marker := task.Run{TriggerID: fire.NewTriggerID(), TaskID: v.ID, Slot: v.DueAt, Target: task.JobTargetID,
			TriggerType: task.TriggerSchedule, State: task.RunCancelled, FiredAt: now, FinishedAt: now, Error: blockedReason}
		done := task.Run{TriggerID: fire.NewTriggerID(), TaskID: v.ID, Slot: v.DueAt.Add(time.Millisecond), Target: task.JobTargetID,
			TriggerType: task.TriggerManual, State: task.RunDone, FiredAt: now, FinishedAt: now}
		for _, r := range []*task.Run{&marker, &done} {
			if ok, err := st.InsertRun(ctx, r); !ok || err != nil {
				t.Fatalf("insert run: %v, %v", ok, err)
			}
		}
		switch door {
		case "cancel":
			if _, err := svc.Cancel(ctx, v.ID); !errors.Is(err, ErrTooLate) {
				t.Errorf("cancel of a job its unblock ran: %v, want too late", err)
			}
		case "replace":
			if _, err := svc.Upsert(ctx, "k-"+door, jobRequest("http://127.0.0.1:9/b2", "k-"+door)); err != nil {
				t.Fatalf("upsert: %v", err)
			}
		}
		ran[v.ID] = door
	}
	svc.Close() // stores the transitions still queued
	for id, door := range ran {
		evs, err := st.JobEvents(ctx, id, 20)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			if e.State == task.JobCancelled {
				t.Errorf("%s: job %s, which ran, got a cancelled transition: %+v", door, id, evs)
			}
		}
	}
}
