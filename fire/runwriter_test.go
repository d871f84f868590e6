package fire

import (
	"context"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// heldWriter is a store.RunWriter that holds its first call until
// release is closed and keeps what each call was given.
type heldWriter struct {
	entered, release chan struct{}
	mu               sync.Mutex
	calls            [][3][]string // per call: the records', the updates' and the outcomes' trigger ids
}

func (w *heldWriter) WriteRuns(_ context.Context, b store.RunBatch) (store.RunWrites, error) {
	recs, outcomes := b.Fires, b.Outcomes
	w.mu.Lock()
	first := len(w.calls) == 0
	var call [3][]string
	for _, r := range recs {
		call[0] = append(call[0], r.Run.TriggerID)
	}
	for _, r := range b.Updates {
		call[1] = append(call[1], r.TriggerID)
	}
	for _, r := range outcomes {
		call[2] = append(call[2], r.Run.TriggerID)
	}
	w.calls = append(w.calls, call)
	w.mu.Unlock()
	if first {
		close(w.entered)
		<-w.release
	}
	out := store.RunWrites{Fires: make([]store.FireResult, len(recs)), Updated: make([]error, len(b.Updates)),
		Finished: make([]error, len(outcomes))}
	for i, r := range b.Updates {
		if r.TriggerID == "taken" {
			out.Updated[i] = task.ErrFenced
		}
	}
	for i, r := range recs {
		out.Fires[i].Inserted = r.Run.TriggerID != "dup"
	}
	for i, r := range outcomes {
		if r.Run.TriggerID == "fenced" {
			out.Finished[i] = task.ErrFenced
		}
	}
	return out, nil
}

// TestRunWriterSharesTransactions: the fire records, run updates and
// outcomes that queue while the writer is busy go in one WriteRuns call,
// each kind in the order it came, and each caller gets its own result.
func TestRunWriterSharesTransactions(t *testing.T) {
	w := &heldWriter{entered: make(chan struct{}), release: make(chan struct{})}
	g := runWriterOf(w, time.Minute)
	item := func(id string, kind writeKind) runWrite {
		return runWrite{rec: store.FireRecord{Run: &task.Run{TriggerID: id}}, kind: kind}
	}
	var wg sync.WaitGroup
	results := map[string]runWritten{}
	var mu sync.Mutex
	submit := func(items ...runWrite) {
		wg.Go(func() {
			out := g.submit(items...)
			mu.Lock()
			defer mu.Unlock()
			for i, it := range items {
				results[it.rec.Run.TriggerID] = out[i]
			}
		})
	}
	submit(item("first", writeOutcome)) // becomes the writer, held in its call
	<-w.entered
	submit(item("fenced", writeOutcome))
	waitQueued(t, g, 1)
	submit(item("fire-1", writeFire), item("dup", writeFire))
	waitQueued(t, g, 3)
	submit(item("taken", writeUpdate))
	waitQueued(t, g, 4)
	submit(item("done", writeOutcome))
	waitQueued(t, g, 5)
	close(w.release)
	wg.Wait()

	if len(w.calls) != 2 {
		t.Fatalf("%d WriteRuns calls (%v), want 2: the held one and one for all that queued", len(w.calls), w.calls)
	}
	got := w.calls[1]
	if want := [3][]string{{"fire-1", "dup"}, {"taken"}, {"fenced", "done"}}; !equal(got, want) {
		t.Errorf("second call wrote records %v, updates %v and outcomes %v, want %v", got[0], got[1], got[2], want)
	}
	for id, want := range map[string]runWritten{
		"first": {}, "done": {}, "fenced": {err: task.ErrFenced}, "taken": {err: task.ErrFenced},
		"fire-1": {fire: store.FireResult{Inserted: true}}, "dup": {},
	} {
		if r := results[id]; r.fire != want.fire || r.err != want.err {
			t.Errorf("%s: %+v, want %+v", id, r, want)
		}
	}
}

// waitQueued waits until g's queue holds n items.
func waitQueued(t *testing.T, g *groupCommit[runWrite, runWritten], n int) {
	t.Helper()
	for {
		g.mu.Lock()
		q := len(g.queue)
		g.mu.Unlock()
		if q == n {
			return
		}
		if t.Context().Err() != nil {
			t.Fatalf("the queue never held %d items", n)
		}
		runtime.Gosched()
	}
}

func equal(a, b [3][]string) bool {
	return slices.Equal(a[0], b[0]) && slices.Equal(a[1], b[1]) && slices.Equal(a[2], b[2])
}
