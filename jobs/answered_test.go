package jobs

import (
	"context"
	"testing"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// slowEventsStore takes a while to write job transitions, as a loaded
// store does: a transition only queued when its answer is given is not in
// the store yet when the answer is read.
type slowEventsStore struct {
	Store
}

func (s slowEventsStore) AddJobEvents(ctx context.Context, evs []store.JobEvent) error {
	time.Sleep(200 * time.Millisecond)
	return s.Store.AddJobEvents(ctx, evs)
}

// TestAnsweredTransitionsStoredWithTheAnswer: the transitions a block, an
// unblock, a cancel and a replace answer are in the store when their
// answer is given, not only queued for the recorder (a kill -9 right after
// the answer would lose them), on both drivers.
func TestAnsweredTransitionsStoredWithTheAnswer(t *testing.T) {
	st := slowEventsStore{Store: testStore(t)}
	svc := New(Deps{Store: st, Trigger: noTrigger})
	defer svc.Close()
	ctx := t.Context()
	last := func(id string) store.JobEvent {
		t.Helper()
		evs, err := st.JobEvents(ctx, id, store.MaxJobEvents)
		if err != nil || len(evs) == 0 {
			t.Fatalf("events of %s: %v, %v", id, evs, err)
		}
		return evs[len(evs)-1]
	}
	v, err := svc.Submit(ctx, jobRequest("http://127.0.0.1:9/a", "k1"))
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	steps := []struct {
		name string
		do   func() error
		want task.JobState
	}{
		{"block", func() error { _, err := svc.Block(ctx, v.ID); return err }, task.JobBlocked},
		{"unblock", func() error { _, err := svc.Unblock(ctx, v.ID); return err }, task.JobPending},
		{"cancel", func() error { _, err := svc.Cancel(ctx, v.ID); return err }, task.JobCancelled},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if e := last(v.ID); e.State != s.want {
			t.Errorf("after the %s's answer the stored history ends at %s (%s), want %s", s.name, e.State, e.Reason, s.want)
		}
	}
	old, err := svc.Submit(ctx, jobRequest("http://127.0.0.1:9/b", "k2"))
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	nv, err := svc.Upsert(ctx, "k2", jobRequest("http://127.0.0.1:9/c", "k2"))
	if err != nil {
		t.Fatalf("upsert: %v", err)
	}
	if e := last(old.ID); e.State != task.JobCancelled {
		t.Errorf("after the replace's answer the old job's stored history ends at %s (%s), want cancelled", e.State, e.Reason)
	}
	if e := last(nv.ID); e.State != task.JobPending {
		t.Errorf("after the replace's answer the new job's stored history ends at %s (%s), want pending", e.State, e.Reason)
	}
}
