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
// recorder waited on the store are written maxEventBatch at a time. With
// 256 per call, a burst of 100k fires at one instant filled the buffer
// behind SQLite's one writer, and everything that records a transition
// (fires, and a batch submission past the HTTP write timeout) waited.
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
