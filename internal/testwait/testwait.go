// Package testwait waits in tests for a condition that another process or
// goroutine makes true, polling it, and fails the test with what it waited
// for when the time runs out.
package testwait

import (
	"testing"
	"time"
)

// For polls cond every 50 ms until it is true, and fails t with "gave up
// waiting for <what>" once timeout has passed.
func For(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
