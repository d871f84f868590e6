package executors

import (
	"context"

	"cronsheet/task"
)

// Executor delivers one attempt of a run. output is a short human-readable
// result (e.g. "smtp 250 queued", "twilio sid SM…"), stored capped at
// task.MaxOutput. A returned error is classified with task.IsPermanent and
// task.RetryDelay; any other error means retry with backoff.
type Executor interface {
	Execute(ctx context.Context, d task.Delivery) (output string, err error)
}

// ExecutorFunc adapts an ordinary function to an Executor.
type ExecutorFunc func(ctx context.Context, d task.Delivery) (string, error)

// Execute calls f(ctx, d).
func (f ExecutorFunc) Execute(ctx context.Context, d task.Delivery) (string, error) {
	return f(ctx, d)
}

var _ Executor = ExecutorFunc(nil)
