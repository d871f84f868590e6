package benchkit

import (
	"fmt"
	"slices"
	"sync"
	"time"
)

// Dist is a distribution's median, 99th percentile and maximum.
type Dist struct{ P50, P99, Max time.Duration }

// Distribution returns the Dist of ds (the zero Dist when ds is empty);
// ds is left as it was.
func Distribution(ds []time.Duration) Dist {
	if len(ds) == 0 {
		return Dist{}
	}
	ds = slices.Clone(ds)
	slices.Sort(ds)
	at := func(q float64) time.Duration { return ds[min(len(ds)-1, int(q*float64(len(ds))))] }
	return Dist{P50: at(0.50), P99: at(0.99), Max: ds[len(ds)-1]}
}

// Recorder collects durations from many goroutines. Its zero value is
// ready; NewRecorder sizes it up front, so that it does not grow while the
// heap is measured.
type Recorder struct {
	mu sync.Mutex
	d  []time.Duration
}

// NewRecorder returns a Recorder with room for n durations.
func NewRecorder(n int) *Recorder { return &Recorder{d: make([]time.Duration, 0, n)} }

// Add records d.
func (r *Recorder) Add(d time.Duration) {
	r.mu.Lock()
	r.d = append(r.d, d)
	r.mu.Unlock()
}

// Len returns how many durations were recorded.
func (r *Recorder) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.d)
}

// Dist returns the distribution of the durations recorded so far.
func (r *Recorder) Dist() Dist {
	r.mu.Lock()
	defer r.mu.Unlock()
	return Distribution(r.d)
}

// MS formats d in milliseconds ("12.3 ms").
func MS(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }

// Secs formats d in seconds ("1.2 s").
func Secs(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

// KiB formats b bytes in KiB ("2.45 KiB").
func KiB(b float64) string { return fmt.Sprintf("%.2f KiB", b/1024) }
