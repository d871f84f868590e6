package executors

import (
	"context"
	"fmt"
	"sync"

	"cronsheet/task"
)

// Registry maps each delivery channel to its Executor. It is safe for
// concurrent use; register everything at startup.
type Registry struct {
	mu    sync.RWMutex
	execs map[task.Channel]Executor
}

// NewRegistry returns an empty Registry.
func NewRegistry() *Registry {
	return &Registry{execs: make(map[task.Channel]Executor)}
}

// Register sets the executor of ch. It panics when ch is empty, e is nil or
// ch already has an executor: these are programmer errors at startup.
func (r *Registry) Register(ch task.Channel, e Executor) {
	if ch == "" {
		panic("executors: Register with an empty channel")
	}
	if e == nil {
		panic(fmt.Sprintf("executors: Register(%q) with a nil executor", ch))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.execs[ch]; dup {
		panic(fmt.Sprintf("executors: channel %q registered twice", ch))
	}
	r.execs[ch] = e
}

// Get returns the executor of ch. An unknown channel gives a task.Permanent
// error wrapping task.ErrInvalid.
func (r *Registry) Get(ch task.Channel) (Executor, error) {
	r.mu.RLock()
	e, ok := r.execs[ch]
	r.mu.RUnlock()
	if !ok {
		return nil, task.Permanent(fmt.Errorf("no executor for channel %q: %w", ch, task.ErrInvalid))
	}
	return e, nil
}

// Execute delivers d with the executor of d.Channel, so a Registry is itself
// an Executor.
func (r *Registry) Execute(ctx context.Context, d task.Delivery) (string, error) {
	e, err := r.Get(d.Channel)
	if err != nil {
		return "", err
	}
	return e.Execute(ctx, d)
}

var _ Executor = (*Registry)(nil)
