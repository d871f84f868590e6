package fire

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// HealthStore records the targets' health (store.TargetHealthBook).
type HealthStore interface {
	RecordTargetOutcomes(ctx context.Context, outcomes []store.TargetOutcome) error
}

// healthBook records the outcome of every delivery attempt at a stored
// target in the target's health, off the delivery path: attempts add
// their outcome to a fold per target, and one writer goroutine at a time
// (started by the attempt that finds none running, counted in the
// Firer's WaitGroup so Shutdown waits for it) writes the folds that
// gathered while the previous write went on. A burst of deliveries to
// one target thus costs a write or two, not one each.
type healthBook struct {
	logger  *slog.Logger
	store   HealthStore
	timeout time.Duration
	wg      *sync.WaitGroup

	mu      sync.Mutex
	pending map[string]*store.TargetOutcome
	writing bool
}

// add folds an attempt at tg that ended at `at` with err (nil: success).
// Targets that are not stored (a job's inline target, a flow's) have no
// health.
func (h *healthBook) add(tg *task.Target, at time.Time, err error) {
	if h == nil || tg == nil || tg.Version == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	o := h.pending[tg.ID]
	if o == nil {
		o = &store.TargetOutcome{Target: tg.ID}
		h.pending[tg.ID] = o
	}
	fold(o, at, err)
	if !h.writing {
		h.writing = true
		h.wg.Add(1)
		go h.writeAll()
	}
}

// fold adds one attempt's outcome to o (see store.TargetOutcome).
func fold(o *store.TargetOutcome, at time.Time, err error) {
	if err == nil {
		if at.After(o.Success) {
			o.Success = at
		}
		if !at.Before(o.Failure) {
			o.Failures = 0
		}
		return
	}
	if at.After(o.Failure) {
		o.Failure, o.Error = at, err.Error()
	}
	if at.After(o.Success) {
		o.Failures++
	}
}

// writeAll writes the pending folds until none is left.
func (h *healthBook) writeAll() {
	defer h.wg.Done()
	for {
		h.mu.Lock()
		if len(h.pending) == 0 {
			h.writing = false
			h.mu.Unlock()
			return
		}
		batch := make([]store.TargetOutcome, 0, len(h.pending))
		for _, o := range h.pending {
			batch = append(batch, *o)
		}
		h.pending = map[string]*store.TargetOutcome{}
		h.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), h.timeout)
		err := h.store.RecordTargetOutcomes(ctx, batch)
		cancel()
		if err != nil {
			// Health is a view of the runs, which hold every outcome:
			// a lost fold shows an older state until the next attempt.
			h.logger.Warn("target health not recorded", "targets", len(batch), "error", err)
		}
	}
}
