package store

import (
	"context"
	"time"
)

// Clock is implemented by stores whose server has a clock of its own
// (MongoDB): leases and heartbeats are measured on it, so nodes whose
// clocks disagree still agree on when a lease ends. A store without it
// (SQLite: its processes share one host clock) leaves each node its own.
type Clock interface {
	// ServerTime returns the server's current time.
	ServerTime(ctx context.Context) (time.Time, error)
}
