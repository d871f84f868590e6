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

// eventFaultStore makes AddJobEvents fail: the next failBefore calls fail
// before writing (a store blip), the next failAfter calls write and then
// fail (the commit-outcome-unknown case: stored, reported failed).
type eventFaultStore struct {
	Store
	mu         sync.Mutex
	failBefore int
	failAfter  int
	failed     int // calls that returned an error
}

func (s *eventFaultStore) AddJobEvents(ctx context.Context, evs []store.JobEvent) error {
	s.mu.Lock()
	before, after := s.failBefore > 0, s.failBefore == 0 && s.failAfter > 0
	switch {
	case before:
		s.failBefore--
		s.failed++
	case after:
		s.failAfter--
		s.failed++
	}
	s.mu.Unlock()
	if before {
		return errors.New("injected: store unavailable")
	}
	if err := s.Store.AddJobEvents(ctx, evs); err != nil {
		return err
	}
	if after {
		return errors.New("injected: committed, reported failed")
	}
	return nil
}

// arm sets the faults of the next AddJobEvents calls.
func (s *eventFaultStore) arm(before, after int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failBefore, s.failAfter = before, after
}

// cancelledEvents counts the cancelled transitions in job id's history
// and says whether it ends with one.
func cancelledEvents(t *testing.T, evs []store.JobEvent) (n int, last bool) {
	t.Helper()
	for _, ev := range evs {
		if ev.State == task.JobCancelled {
			n++
		}
	}
	return n, len(evs) > 0 && evs[len(evs)-1].State == task.JobCancelled
}

// TestCancelDuringEventStoreBlip: a Cancel while the store refuses
// AddJobEvents more times than the recorder used to try (it dropped the
// batch after 3 and answered cancelled with the history at [pending])
// answers only once its cancelled transition is stored: the answer and
// the stored history both end cancelled, with it once. On both drivers.
func TestCancelDuringEventStoreBlip(t *testing.T) {
	ctx := t.Context()
	st := &eventFaultStore{Store: testStore(t)}
	svc := New(Deps{Store: st, Trigger: noTrigger, RepairAfter: -1})
	defer svc.Close()
	v, err := svc.Submit(ctx, jobRequest("http://127.0.0.1:9/blip", ""))
	if err != nil {
		t.Fatal(err)
	}
	st.arm(5, 0)
	got, err := svc.Cancel(ctx, v.ID)
	if err != nil {
		t.Fatalf("cancel during a blip: %v", err)
	}
	if n, last := cancelledEvents(t, got.Events); got.State != task.JobCancelled || n != 1 || !last {
		t.Errorf("cancel answered %s with history %+v; want cancelled, ending with one cancelled transition", got.State, got.Events)
	}
	stored, err := st.JobEvents(ctx, v.ID, store.MaxJobEvents)
	if err != nil {
		t.Fatal(err)
	}
	if n, last := cancelledEvents(t, stored); n != 1 || !last {
		t.Errorf("stored history %+v; want it to end with one cancelled transition", stored)
	}
}

// TestCancelEventCommittedButReportedFailed: when the store writes the
// cancelled transition and then reports a failure (outcome unknown), the
// recorder's retry does not store it twice.
func TestCancelEventCommittedButReportedFailed(t *testing.T) {
	ctx := t.Context()
	st := &eventFaultStore{Store: testStore(t)}
	svc := New(Deps{Store: st, Trigger: noTrigger, RepairAfter: -1})
	defer svc.Close()
	v, err := svc.Submit(ctx, jobRequest("http://127.0.0.1:9/unknown", ""))
	if err != nil {
		t.Fatal(err)
	}
	st.arm(1, 1)
	got, err := svc.Cancel(ctx, v.ID)
	if err != nil {
		t.Fatalf("cancel: %v", err)
	}
	if n, last := cancelledEvents(t, got.Events); n != 1 || !last {
		t.Errorf("cancel answered history %+v; want it to end with one cancelled transition", got.Events)
	}
	stored, err := st.JobEvents(ctx, v.ID, store.MaxJobEvents)
	if err != nil {
		t.Fatal(err)
	}
	if n, last := cancelledEvents(t, stored); n != 1 || !last {
		t.Errorf("stored history %+v; want it to end with exactly one cancelled transition", stored)
	}
}

// TestCancelNotStoredInTimeAnswersUnavailable: when the cancelled
// transition cannot be stored before the request's deadline, Cancel does
// not answer cancelled: it answers ErrNotRecorded (code unavailable), the
// job's cancel being stored; once the store heals, the recorder stores
// the transition (the history catches up with the state).
func TestCancelNotStoredInTimeAnswersUnavailable(t *testing.T) {
	ctx := t.Context()
	st := &eventFaultStore{Store: testStore(t)}
	svc := New(Deps{Store: st, Trigger: noTrigger, RepairAfter: -1})
	defer svc.Close()
	v, err := svc.Submit(ctx, jobRequest("http://127.0.0.1:9/down", ""))
	if err != nil {
		t.Fatal(err)
	}
	st.arm(1<<30, 0) // down until healed
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	got, err := svc.Cancel(short, v.ID)
	cancel()
	if !errors.Is(err, ErrNotRecorded) || task.CodeOf(err) != task.CodeServiceUnavailable {
		t.Fatalf("cancel while the store refuses transitions: %+v, %v; want ErrNotRecorded, code %s",
			got, err, task.CodeServiceUnavailable)
	}
	if j, err := svc.Get(ctx, v.ID); err != nil || j.State != task.JobCancelled {
		t.Fatalf("the job after the cancel's answer: %+v, %v; want it cancelled (stored)", j, err)
	}
	st.arm(0, 0)
	testwait.For(t, 30*time.Second, "the cancelled transition to be stored once the store heals", func() bool {
		evs, err := st.JobEvents(ctx, v.ID, store.MaxJobEvents)
		n, last := cancelledEvents(t, evs)
		return err == nil && n == 1 && last
	})
}
