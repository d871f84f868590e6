package httpapi

import (
	"time"

	"cronsheet/task"
)

// WaitMargin is the time a request that waited its longest
// (task.MaxJobWait) still has to be answered before WriteTimeout.
const WaitMargin = 10 * time.Second

// WriteTimeout is the HTTP server's write timeout: the longest a request
// may take from its headers read to its answer written. It derives from
// the longest wait a request may ask for (task.MaxJobWait), so that a
// long poll always ends with an answer, never with the connection closed.
const WriteTimeout = time.Duration(task.MaxJobWait)*time.Second + WaitMargin
