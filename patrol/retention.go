package patrol

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"cronsheet/store"
)

// RetentionStore is what the retention patrol needs of the store.
type RetentionStore interface {
	RetentionCutoff(ctx context.Context, kind store.RetentionKind, keep int) (store.Cursor, error)
	Prune(ctx context.Context, p store.PruneParams) (store.PruneResult, error)
}

var _ RetentionStore = (store.Retention)(nil)

// RetentionRule bounds one kind: older than MaxAge goes, beyond the
// newest MaxCount goes; a zero field is no bound.
type RetentionRule struct {
	MaxAge   time.Duration
	MaxCount int
}

// RetentionConfig tunes the retention patrol. Zero values take the
// defaults.
type RetentionConfig struct {
	// Interval between passes (default 1m), with ±10% jitter; the first
	// pass comes one interval after Run starts.
	Interval time.Duration
	// Batch is how many items one Prune call examines (default 500).
	Batch int
	// Pause is the rest between two batches (0 = none).
	Pause time.Duration
	// Rules bound each kind; a kind without a rule is kept.
	Rules map[store.RetentionKind]RetentionRule
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Deleted, when set, receives each batch's deletions; Passed, each
	// whole pass's duration (the metrics).
	Deleted func(kind string, n int)
	Passed  func(d time.Duration)
}

// Retention is the retention patrol: each pass walks every kind with a
// rule, oldest first, in batches of one short write each, and deletes
// what is no longer live beyond its bounds. Several nodes may run it on
// one store at once: a delete names its items and repeats their
// conditions, so each item is deleted, and counted, by one node only.
type Retention struct {
	logger *slog.Logger
	cfg    RetentionConfig
	store  RetentionStore
}

// RetentionResult is what one pass deleted, per kind.
type RetentionResult map[store.RetentionKind]int

// NewRetention returns the retention patrol.
func NewRetention(logger *slog.Logger, cfg RetentionConfig, st RetentionStore) *Retention {
	if cfg.Interval <= 0 {
		cfg.Interval = time.Minute
	}
	if cfg.Batch <= 0 {
		cfg.Batch = 500
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Deleted == nil {
		cfg.Deleted = func(string, int) {}
	}
	if cfg.Passed == nil {
		cfg.Passed = func(time.Duration) {}
	}
	return &Retention{logger: logger.With("component", "patrol.retention"), cfg: cfg, store: st}
}

// Run runs a pass every interval until ctx ends.
func (r *Retention) Run(ctx context.Context) {
	for {
		d := time.Duration(float64(r.cfg.Interval) * (0.9 + 0.2*rand.Float64()))
		select {
		case <-ctx.Done():
			return
		case <-time.After(d):
		}
		if _, err := r.RunOnce(ctx); err != nil && !errors.Is(err, context.Canceled) {
			r.logger.ErrorContext(ctx, "retention pass", "error", err)
		}
	}
}

// RunOnce runs one pass over every kind and returns what it deleted. A
// kind that fails does not stop the others; the errors come back joined.
func (r *Retention) RunOnce(ctx context.Context) (RetentionResult, error) {
	start := time.Now()
	res := RetentionResult{}
	var errs []error
	for _, kind := range store.RetentionKinds {
		rule, ok := r.cfg.Rules[kind]
		if !ok || (rule.MaxAge <= 0 && rule.MaxCount <= 0) {
			continue
		}
		n, err := r.pruneKind(ctx, kind, rule)
		res[kind] = n
		if err != nil {
			if ctx.Err() != nil {
				return res, ctx.Err()
			}
			errs = append(errs, err)
		}
	}
	took := time.Since(start)
	r.cfg.Passed(took)
	args := []any{"took", took}
	for _, kind := range store.RetentionKinds {
		args = append(args, string(kind), res[kind])
	}
	r.logger.InfoContext(ctx, "retention pass", args...)
	return res, errors.Join(errs...)
}

// before is where kind's bounds end: the later of its age bound and its
// count bound.
func (r *Retention) before(ctx context.Context, kind store.RetentionKind, rule RetentionRule) (store.Cursor, error) {
	var b store.Cursor
	if rule.MaxAge > 0 {
		b = store.Cursor{At: r.cfg.Now().Add(-rule.MaxAge).Truncate(time.Millisecond)}
	}
	if rule.MaxCount > 0 {
		c, err := r.store.RetentionCutoff(ctx, kind, rule.MaxCount)
		if err != nil {
			return b, err
		}
		if b.Before(c) {
			b = c
		}
	}
	return b, nil
}

// pruneKind walks kind up to its bounds, batch by batch, resting Pause
// between batches.
func (r *Retention) pruneKind(ctx context.Context, kind store.RetentionKind, rule RetentionRule) (int, error) {
	before, err := r.before(ctx, kind, rule)
	if err != nil || before.IsZero() {
		return 0, wrapKind(kind, err)
	}
	p := store.PruneParams{Kind: kind, Before: before, Limit: r.cfg.Batch}
	total := 0
	for {
		res, err := r.store.Prune(ctx, p)
		if err != nil {
			return total, wrapKind(kind, err)
		}
		total += res.Deleted
		r.cfg.Deleted(string(kind), res.Deleted)
		r.logger.DebugContext(ctx, "retention batch", "kind", string(kind), "examined", res.Examined, "deleted", res.Deleted)
		if res.Examined < p.Limit || !p.After.Before(res.Next) {
			return total, nil
		}
		p.After = res.Next
		if r.cfg.Pause > 0 {
			select {
			case <-ctx.Done():
				return total, ctx.Err()
			case <-time.After(r.cfg.Pause):
			}
		}
	}
}

func wrapKind(kind store.RetentionKind, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("retention of %s: %w", kind, err)
}
