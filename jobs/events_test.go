package jobs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"cronsheet/fire"
	"cronsheet/store"
	"cronsheet/task"
)

// eventBatchStore records the size of every AddJobEvents call and holds
// the first one until release is closed.
type eventBatchStore struct {
	Store
	release chan struct{}
	first   chan struct{} // closed when the first call arrived
	mu      sync.Mutex
	sizes   []int
}

func (s *eventBatchStore) AddJobEvents(_ context.Context, evs []store.JobEvent) error {
	s.mu.Lock()
	s.sizes = append(s.sizes, len(evs))
	n := len(s.sizes)
	s.mu.Unlock()
	if n == 1 {
		close(s.first)
		<-s.release
	}
	return nil
}

func (s *eventBatchStore) stored() (calls []int, total int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range s.sizes {
		total += n
	}
	return slices.Clone(s.sizes), total
}

// TestEventsRecordedInLargeBatches: transitions that queued while the
// recorder waited on the store are written maxEventBatch at a time: with
// small calls a burst of 100k fires at one instant fills the buffer
// behind SQLite's one writer, and everything that records a transition
// (fires, and a batch submission past the HTTP write timeout) waits
// (docs/BENCHMARKS.md, "100,000 jobs due at one instant").
func TestEventsRecordedInLargeBatches(t *testing.T) {
	st := &eventBatchStore{Store: testStore(t), release: make(chan struct{}), first: make(chan struct{})}
	svc := New(Deps{Store: st, Trigger: func(context.Context, fire.TriggerParams) ([]*task.Run, error) {
		return nil, errors.New("no trigger in this test")
	}})
	defer svc.Close()
	ev := func(i int) store.JobEvent {
		return store.JobEvent{JobID: fmt.Sprintf("job-%d", i), At: time.Now(), State: task.JobRunning}
	}
	svc.event(ev(0))
	<-st.first // the recorder is inside its first store call
	const queued = maxEventBatch + maxEventBatch/2
	for i := 1; i <= queued; i++ {
		svc.event(ev(i))
	}
	close(st.release)
	deadline := time.Now().Add(30 * time.Second)
	for {
		calls, total := st.stored()
		if total == queued+1 {
			if want := []int{1, maxEventBatch, maxEventBatch / 2}; !slices.Equal(calls, want) {
				t.Errorf("store calls of %v events, want %v", calls, want)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d events stored (calls %v)", total, queued+1, calls)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestSubmittedRecordedOnce: each new job's first transition (pending,
// "submitted…") is stored exactly once and handed to the OnEvents
// subscribers exactly once (the store writes it with the job,
// store.Jobs.CreateJobs): a single submission,
// an upsert that creates, an upsert that replaces (and the replaced job's
// cancel), a batch with a refused job. A refused job leaves none.
func TestSubmittedRecordedOnce(t *testing.T) {
	st := testStore(t)
	ctx := t.Context()
	svc := New(Deps{Store: st, Trigger: func(context.Context, fire.TriggerParams) ([]*task.Run, error) {
		return nil, errors.New("no trigger in this test")
	}})
	var mu sync.Mutex
	var published []store.JobEvent
	svc.OnEvents(func(evs []store.JobEvent) {
		mu.Lock()
		published = append(published, evs...)
		mu.Unlock()
	})
	want := map[string][]string{} // job id → its transitions' reasons, in order
	single, err := svc.Submit(ctx, jobRequest("https://example.com/single", ""))
	if err != nil {
		t.Fatal(err)
	}
	want[single.ID] = []string{"submitted"}
	first, err := svc.Upsert(ctx, "k", jobRequest("https://example.com/v1", ""))
	if err != nil {
		t.Fatal(err)
	}
	second, err := svc.Upsert(ctx, "k", jobRequest("https://example.com/v2", ""))
	if err != nil {
		t.Fatal(err)
	}
	want[first.ID] = []string{"submitted under key k", "replaced by " + second.ID}
	want[second.ID] = []string{"submitted under key k"}
	bad := jobRequest("https://example.com/bad", "")
	bad.Method = "BREW"
	res, err := svc.SubmitBatch(ctx, []Request{jobRequest("https://example.com/b0", ""), bad, jobRequest("https://example.com/b2", "")})
	if err != nil {
		t.Fatal(err)
	}
	if res[1].Err == nil {
		t.Fatalf("the batch's job with method BREW was accepted: %+v", res[1].View)
	}
	for _, i := range []int{0, 2} {
		if res[i].Err != nil {
			t.Fatalf("batch job %d: %v", i, res[i].Err)
		}
		want[res[i].View.ID] = []string{"submitted"}
	}
	svc.Close() // the recorder has stored and published everything

	got := map[string][]string{}
	for _, ev := range published {
		got[ev.JobID] = append(got[ev.JobID], ev.Reason)
	}
	for id, reasons := range want {
		if !slices.Equal(got[id], reasons) {
			t.Errorf("published for %s: %q, want %q", id, got[id], reasons)
		}
		evs, err := st.JobEvents(ctx, id, store.MaxJobEvents)
		if err != nil {
			t.Fatal(err)
		}
		var stored []string
		for _, ev := range evs {
			stored = append(stored, ev.Reason)
		}
		if !slices.Equal(stored, reasons) {
			t.Errorf("stored for %s: %q, want %q", id, stored, reasons)
		}
	}
	if len(got) != len(want) {
		t.Errorf("published for %d jobs, want %d: %v", len(got), len(want), got)
	}
}
