package jobs

import (
	"context"
	"sync"
	"testing"
	"time"

	"cronsheet/fire"
	"cronsheet/store"
	"cronsheet/task"
)

// TestRunEndingAfterStopKeepsTheStop: a cron job cancelled or blocked
// while a run of it is in progress (and one is queued) keeps cancelled or
// blocked as its last transition when those runs end: their outcomes are
// in the ledger, but the job does not go back to pending, nor does a
// blocked one read cancelled because a queued run ended undelivered. On
// both drivers (testStore).
func TestRunEndingAfterStopKeepsTheStop(t *testing.T) {
	for _, stop := range []task.JobState{task.JobCancelled, task.JobBlocked} {
		t.Run(string(stop), func(t *testing.T) {
			ctx := t.Context()
			st := testStore(t)
			svc := New(Deps{Store: st, Trigger: noTrigger})
			v, err := svc.Submit(ctx, Request{Method: "POST", Name: "http://127.0.0.1:9/cron", Cron: "every 1h"})
			if err != nil {
				t.Fatalf("submit: %v", err)
			}
			firedAs, err := st.GetTask(ctx, v.ID) // the task as a fire read it
			if err != nil {
				t.Fatal(err)
			}
			if stop == task.JobCancelled {
				_, err = svc.Cancel(ctx, v.ID)
			} else {
				_, err = svc.Block(ctx, v.ID)
			}
			if err != nil {
				t.Fatalf("%s: %v", stop, err)
			}
			// A run fired before the stop and queued ones end after it.
			now := time.Now()
			for i, end := range []struct {
				state task.RunState
				why   string
			}{{task.RunDone, ""}, {task.RunSkipped, "cancelled: the task was closed"},
				{task.RunCancelled, "the task was " + string(stop) + " while this run was queued"}} {
				r := task.Run{TriggerID: fire.NewTriggerID(), TaskID: v.ID, Slot: now.Add(-time.Duration(i+1) * time.Minute),
					Target: task.JobTargetID, TriggerType: task.TriggerSchedule, State: end.state, FiredAt: now,
					FinishedAt: now, Output: "HTTP 200", Error: end.why}
				if _, err := st.InsertRun(ctx, &r); err != nil {
					t.Fatalf("insert run: %v", err)
				}
				svc.OnRun(firedAs, r)
			}
			svc.Close() // stores what was handed over
			evs, err := st.JobEvents(ctx, v.ID, store.MaxJobEvents)
			if err != nil || len(evs) == 0 {
				t.Fatalf("events: %v, %v", evs, err)
			}
			if last := evs[len(evs)-1]; last.State != stop {
				t.Errorf("last transition = %s (%s), want %s; history %+v", last.State, last.Reason, stop, evs)
			}
			reader := New(Deps{Store: st, Trigger: noTrigger})
			defer reader.Close()
			got, err := reader.Get(ctx, v.ID)
			if err != nil || got.State != stop {
				t.Errorf("the job reads %+v, %v; want %s", got, err, stop)
			}
		})
	}
}

// staleReadStore holds the first GetTask after armed between its read and
// its answer, saying so on entered, until release is closed.
type staleReadStore struct {
	Store
	mu      sync.Mutex
	armed   bool
	entered chan struct{}
	release chan struct{}
}

func (s *staleReadStore) GetTask(ctx context.Context, id string) (*task.Task, error) {
	t, err := s.Store.GetTask(ctx, id)
	s.mu.Lock()
	hold := s.armed
	s.armed = false
	s.mu.Unlock()
	if hold {
		close(s.entered)
		<-s.release
	}
	return t, err
}

// TestRunEndingDuringCancelKeepsTheCancel: a cron job's run that ends as
// the job is cancelled, its state read just before the cancel's write,
// hands its pending transition over before the cancel's, never after: the
// history ends at cancelled.
func TestRunEndingDuringCancelKeepsTheCancel(t *testing.T) {
	ctx := t.Context()
	st := &staleReadStore{Store: testStore(t), entered: make(chan struct{}), release: make(chan struct{})}
	svc := New(Deps{Store: st, Trigger: noTrigger})
	v, err := svc.Submit(ctx, Request{Method: "POST", Name: "http://127.0.0.1:9/cron", Cron: "every 1h"})
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	firedAs, err := st.GetTask(ctx, v.ID)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	r := task.Run{TriggerID: fire.NewTriggerID(), TaskID: v.ID, Slot: now.Add(-time.Minute), Target: task.JobTargetID,
		TriggerType: task.TriggerSchedule, State: task.RunDone, FiredAt: now, FinishedAt: now, Output: "HTTP 200"}
	if _, err := st.InsertRun(ctx, &r); err != nil {
		t.Fatal(err)
	}
	st.mu.Lock()
	st.armed = true
	st.mu.Unlock()
	ended := make(chan struct{})
	go func() { defer close(ended); svc.OnRun(firedAs, r) }()
	<-st.entered // OnRun read the job running
	cancelled := make(chan error, 1)
	go func() { _, err := svc.Cancel(ctx, v.ID); cancelled <- err }()
	time.Sleep(200 * time.Millisecond) // room for the cancel to finish first, were it not ordered
	close(st.release)
	<-ended
	if err := <-cancelled; err != nil {
		t.Fatalf("cancel: %v", err)
	}
	svc.Close()
	evs, err := st.JobEvents(ctx, v.ID, store.MaxJobEvents)
	if err != nil || len(evs) == 0 {
		t.Fatalf("events: %v, %v", evs, err)
	}
	if last := evs[len(evs)-1]; last.State != task.JobCancelled {
		t.Errorf("last transition = %s (%s), want cancelled; history %+v", last.State, last.Reason, evs)
	}
}

// TestBackfillOfCancelledCronJobEndsCancelled: a backfill of a cancelled
// cron job adds backfilling to its history, and its run's end adds the
// outcome under cancelled, which the job still reads: the history never
// ends at backfilling.
func TestBackfillOfCancelledCronJobEndsCancelled(t *testing.T) {
	ctx := t.Context()
	st := testStore(t)
	svc := New(Deps{Store: st, Trigger: noTrigger})
	v, err := svc.Submit(ctx, Request{Method: "POST", Name: "http://127.0.0.1:9/cron", Cron: "every 1h"})
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	if _, err := svc.Cancel(ctx, v.ID); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	tk, err := st.GetTask(ctx, v.ID)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	r := task.Run{TriggerID: fire.NewTriggerID(), TaskID: v.ID, Slot: now, Target: task.JobTargetID,
		TriggerType: task.TriggerBackfill, State: task.RunRunning, FiredAt: now}
	if _, err := st.InsertRun(ctx, &r); err != nil {
		t.Fatal(err)
	}
	svc.OnRun(tk, r)
	r.State, r.FinishedAt, r.Output = task.RunDone, time.Now(), "HTTP 200"
	svc.OnRun(tk, r)
	svc.Close()
	evs, err := st.JobEvents(ctx, v.ID, store.MaxJobEvents)
	if err != nil || len(evs) < 2 {
		t.Fatalf("events: %v, %v", evs, err)
	}
	if prev := evs[len(evs)-2]; prev.State != task.JobBackfilling {
		t.Errorf("the backfill's start: %s (%s), want backfilling; history %+v", prev.State, prev.Reason, evs)
	}
	if last := evs[len(evs)-1]; last.State != task.JobCancelled || last.TriggerID != r.TriggerID {
		t.Errorf("last transition = %s of %s (%s), want cancelled of %s; history %+v", last.State, last.TriggerID, last.Reason,
			r.TriggerID, evs)
	}
}
