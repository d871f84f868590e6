package patrol

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"
)

// RunnerConfig tunes a Runner. Zero values take the defaults.
type RunnerConfig struct {
	// Interval between patrol passes (default 1s), with ±10% jitter.
	Interval time.Duration
	// RenewEvery is the lease renewal period (default 5s; a third of the lease).
	RenewEvery time.Duration
	// PassTimeout bounds one pass of all patrols (default 30s).
	PassTimeout time.Duration
	// Observe, when set, receives how long each patrol took in a pass
	// ("sync", "publish", "reconcile", "rescue").
	Observe func(patrol string, d time.Duration)
	// Beat, when set, is called before each lease renewal: this node's
	// heartbeat in the node registry.
	Beat func(ctx context.Context) error
	// Rescue, when set, is the rescuer patrol: it runs with reconcile and
	// takes over the runs that nobody delivers (fire.Firer.Rescue).
	Rescue func(ctx context.Context) (int, error)
}

// Runner drives the patrols: sync, publish and reconcile in that order on
// every tick or wake-up, and lease renewal on its own ticker.
type Runner struct {
	logger    *slog.Logger
	cfg       RunnerConfig
	sync      *Sync
	publish   *Publish
	reconcile *Reconcile
	renew     *Renew
	wake      chan struct{}
	passed    func() // test hook: called after each pass; may be nil
}

// NewRunner returns a Runner over the given patrols.
func NewRunner(logger *slog.Logger, cfg RunnerConfig, s *Sync, p *Publish, r *Reconcile, rn *Renew) *Runner {
	if cfg.Interval <= 0 {
		cfg.Interval = time.Second
	}
	if cfg.RenewEvery <= 0 {
		cfg.RenewEvery = 5 * time.Second
	}
	if cfg.PassTimeout <= 0 {
		cfg.PassTimeout = 30 * time.Second
	}
	return &Runner{logger: logger.With("component", "patrol"), cfg: cfg, sync: s, publish: p,
		reconcile: r, renew: rn, wake: make(chan struct{}, 1)}
}

// Wake asks for a pass now; it never blocks.
func (r *Runner) Wake() {
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// Run drives the patrols until ctx ends.
func (r *Runner) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { r.renewLoop(ctx) })
	defer wg.Wait()
	var lastReconcile time.Time
	woken := false
	for {
		// A pass woken by an edit runs sync and publish at once; reconcile,
		// the safety net that reads every claim of this node, runs at most
		// once per interval (at 100k armed tasks, once per woken pass would
		// be most of a burst's CPU). Its work is never urgent: a fire checks
		// its task itself, and a changed task is re-armed by publish.
		full := !woken || time.Since(lastReconcile) >= r.cfg.Interval
		r.pass(ctx, full)
		if full {
			lastReconcile = time.Now()
		}
		timer := time.NewTimer(jitter(r.cfg.Interval))
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-r.wake:
			timer.Stop()
			woken = true
		case <-timer.C:
			woken = false
		}
	}
}

// Pass runs sync, publish and reconcile once each, logging their results.
func (r *Runner) Pass(ctx context.Context) { r.pass(ctx, true) }

// pass runs sync and publish, and reconcile when withReconcile.
func (r *Runner) pass(ctx context.Context, withReconcile bool) {
	pctx, cancel := context.WithTimeout(ctx, r.cfg.PassTimeout)
	defer cancel()
	start := time.Now()
	sres, serr := r.sync.RunOnce(pctx)
	r.report(ctx, "sync", serr)
	r.observe("sync", start)
	mid := time.Now()
	pres, perr := r.publish.RunOnce(pctx)
	r.report(ctx, "publish", perr)
	r.observe("publish", mid)
	var rres ReconcileResult
	if withReconcile {
		mid = time.Now()
		var rerr error
		rres, rerr = r.reconcile.RunOnce(pctx)
		r.report(ctx, "reconcile", rerr)
		r.observe("reconcile", mid)
		if r.cfg.Rescue != nil {
			mid = time.Now()
			_, err := r.cfg.Rescue(pctx)
			r.report(ctx, "rescue", err)
			r.observe("rescue", mid)
		}
	}
	if sres != (SyncResult{}) || pres != (PublishResult{}) || rres != (ReconcileResult{}) {
		r.logger.DebugContext(ctx, "patrol pass", "sync", sres, "publish", pres, "reconcile", rres,
			"duration", time.Since(start))
	}
	if r.passed != nil {
		r.passed()
	}
}

// observe reports a patrol's duration since start to Config.Observe.
func (r *Runner) observe(patrol string, start time.Time) {
	if r.cfg.Observe != nil {
		r.cfg.Observe(patrol, time.Since(start))
	}
}

func (r *Runner) report(ctx context.Context, name string, err error) {
	if err == nil || errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return
	}
	r.logger.ErrorContext(ctx, "patrol failed", "patrol", name, "error", err)
}

func (r *Runner) renewLoop(ctx context.Context) {
	for {
		timer := time.NewTimer(jitter(r.cfg.RenewEvery))
		select {
		case <-ctx.Done():
			timer.Stop()
			return
		case <-timer.C:
		}
		rctx, cancel := context.WithTimeout(ctx, r.cfg.RenewEvery)
		if r.cfg.Beat != nil {
			r.report(ctx, "heartbeat", r.cfg.Beat(rctx))
		}
		_, err := r.renew.RunOnce(rctx)
		cancel()
		r.report(ctx, "renew", err)
	}
}

// jitter returns d ± 10%.
func jitter(d time.Duration) time.Duration {
	return time.Duration(float64(d) * (0.9 + 0.2*rand.Float64()))
}
