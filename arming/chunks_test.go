package arming

import (
	"context"
	"sync"
	"testing"
	"time"

	"cronsheet/fire"
	"cronsheet/store"
)

// headCounter is a Store that keeps the size of each TaskHeads read.
type headCounter struct {
	Store
	mu    sync.Mutex
	reads []int
}

func (h *headCounter) TaskHeads(ctx context.Context, ids []string) ([]store.TaskHead, error) {
	h.mu.Lock()
	h.reads = append(h.reads, len(ids))
	h.mu.Unlock()
	return h.Store.TaskHeads(ctx, ids)
}

// TestBucketFiresFirstChunkFirst: a bucket larger than firstChunk reads
// the heads of its first firstChunk tasks on their own (their fires then
// start while the rest is read), then the rest in chunks that double;
// every task is delivered once.
func TestBucketFiresFirstChunkFirst(t *testing.T) {
	b := newArmerTest(t, fire.Config{}, nil, true)
	hc := &headCounter{Store: b.st}
	a := b.armer(t, hc)
	n := firstChunk + firstChunk/2
	armBucket(t, b, a, n)
	got := map[string]int{}
	var first time.Time
	deadline := time.After(45 * time.Second)
	for len(got) < n {
		select {
		case d := <-b.delivered:
			if first.IsZero() {
				first = d.Slot
			}
			if d.Slot.Equal(first) {
				got[d.TaskID]++
			}
		case <-deadline:
			t.Fatalf("%d of %d tasks delivered in time", len(got), n)
		}
	}
	for id, c := range got {
		if c != 1 {
			t.Errorf("%s delivered %d times, want once", id, c)
		}
	}
	hc.mu.Lock()
	defer hc.mu.Unlock()
	// The first read is the first chunk alone; the next holds (at most)
	// the rest. A loaded machine may arm a task of the batch after its
	// bucket was taken, which then reads that one on its own.
	if len(hc.reads) < 2 || hc.reads[0] != firstChunk || hc.reads[1] < 1 || hc.reads[1] > n-firstChunk {
		t.Errorf("heads read in chunks of %v, want %d then at most %d", hc.reads, firstChunk, n-firstChunk)
	}
}
