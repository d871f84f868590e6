package benchkit

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// Parallel runs f(0..n-1) on workers goroutines; it stops at the first
// error and returns it.
func Parallel(n, workers int, f func(i int) error) error {
	var next atomic.Int64
	var failed atomic.Bool
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	for range workers {
		wg.Go(func() {
			for !failed.Load() {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				if err := f(i); err != nil {
					failed.Store(true)
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// ErrTimedOut is what WaitFor returns when its condition did not hold in
// time.
var ErrTimedOut = errors.New("timed out")

// WaitFor polls cond every millisecond until it holds (nil) or timeout has
// passed (ErrTimedOut).
func WaitFor(cond func() bool, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return ErrTimedOut
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}

// WaitCount polls count every 5 ms until it reaches want (true), the
// deadline passes, or, with stall > 0, it has not changed for stall.
func WaitCount(count func() int64, want int64, deadline time.Time, stall time.Duration) bool {
	last, moved := count(), time.Now()
	for {
		c := count()
		switch now := time.Now(); {
		case c >= want:
			return true
		case now.After(deadline), stall > 0 && now.Sub(moved) > stall:
			return false
		case c != last:
			last, moved = c, now
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Progress writes a timestamped line to stderr, so that stdout stays the
// tables.
func Progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s  "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}
