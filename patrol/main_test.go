package patrol_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves a goroutine behind: Runner's
// loops must end with their context, and every store is closed in cleanup.
// Nothing is ignored: database/sql stops its connection openers on Close and
// modernc.org/sqlite starts no goroutines of its own.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
