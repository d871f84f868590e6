package arming

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// modernc.org/sqlite's goroutines end lazily.
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
	)
}
