package patrol

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// ProbeStore is what the probe patrol needs of storage: the targets, the
// probe slot claims and the health it records (store.TargetHealthBook).
type ProbeStore interface {
	ListTargets(ctx context.Context, afterID string, limit int) ([]*task.Target, error)
	ClaimTargetProbe(ctx context.Context, target string, slot time.Time) (bool, error)
	RecordTargetOutcomes(ctx context.Context, outcomes []store.TargetOutcome) error
}

// ProbeFunc sends a target's probe: nil when it answered well.
type ProbeFunc func(ctx context.Context, t *task.Target) error

// ProbeResult counts what one pass of the probe patrol did.
type ProbeResult struct {
	// Claimed is how many probes this node claimed (and sent).
	Claimed int
	// Failed is how many of them failed.
	Failed int
}

// Probe is the probe patrol: every pass it lists the targets with a
// probe (task.TargetProbe) and, for each whose current slot (now
// truncated to its interval) this node has not yet tried, claims the
// slot (store.TargetHealthBook.ClaimTargetProbe: one node per target and
// slot in the cluster), sends the probe and records its answer in the
// target's probe health. Paused and preset targets are probed too: a
// probe is no trigger.
type Probe struct {
	logger *slog.Logger
	store  ProbeStore
	probe  ProbeFunc
	now    func() time.Time

	mu    sync.Mutex
	tried map[string]time.Time // target → the last slot this node claimed or lost
}

// NewProbe returns the probe patrol. now may be nil (time.Now).
func NewProbe(logger *slog.Logger, st ProbeStore, probe ProbeFunc, now func() time.Time) *Probe {
	if now == nil {
		now = time.Now
	}
	return &Probe{logger: logger.With("component", "patrol.probe"), store: st, probe: probe, now: now,
		tried: map[string]time.Time{}}
}

// probePage is how many targets one list call reads.
const probePage = 500

// RunOnce makes one pass: every due probe is sent, at most 8 at a time,
// and the pass returns when they are all recorded.
func (p *Probe) RunOnce(ctx context.Context) (ProbeResult, error) {
	var (
		res   ProbeResult
		resMu sync.Mutex
		wg    sync.WaitGroup
		after string
	)
	sem := make(chan struct{}, 8)
	done := func(err error) (ProbeResult, error) {
		wg.Wait()
		return res, err
	}
	for {
		page, err := p.store.ListTargets(ctx, after, probePage)
		if err != nil {
			return done(err)
		}
		for _, t := range page {
			if t.Probe == nil || t.HTTP == nil || !p.claim(ctx, t) {
				continue
			}
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				failed := p.send(ctx, t)
				resMu.Lock()
				res.Claimed++
				if failed {
					res.Failed++
				}
				resMu.Unlock()
			})
		}
		if len(page) < probePage {
			return done(nil)
		}
		after = page[len(page)-1].ID
	}
}

// claim reports whether this node sends t's probe for the current slot.
func (p *Probe) claim(ctx context.Context, t *task.Target) bool {
	every := t.Probe.Every()
	if every <= 0 {
		return false
	}
	slot := p.now().Truncate(every)
	p.mu.Lock()
	seen := !p.tried[t.ID].Before(slot)
	if !seen {
		p.tried[t.ID] = slot
	}
	p.mu.Unlock()
	if seen {
		return false
	}
	won, err := p.store.ClaimTargetProbe(ctx, t.ID, slot)
	if err != nil {
		p.logger.WarnContext(ctx, "probe not claimed", "target", t.ID, "error", err)
		p.mu.Lock()
		delete(p.tried, t.ID) // try again next pass
		p.mu.Unlock()
		return false
	}
	return won
}

// send probes t and records the answer; it reports whether it failed.
func (p *Probe) send(ctx context.Context, t *task.Target) bool {
	err := p.probe(ctx, t)
	if err != nil && errors.Is(ctx.Err(), context.Canceled) {
		return false // stopping: nothing learnt about the target
	}
	o := store.TargetOutcome{Target: t.ID, Probe: true}
	if err == nil {
		o.Success = p.now()
	} else {
		o.Failure, o.Error, o.Failures = p.now(), err.Error(), 1
		p.logger.InfoContext(ctx, "probe failed", "target", t.ID, "error", err)
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := p.store.RecordTargetOutcomes(rctx, []store.TargetOutcome{o}); err != nil {
		p.logger.WarnContext(ctx, "probe answer not recorded", "target", t.ID, "error", err)
	}
	return err != nil
}

// Run makes a pass every interval until ctx ends.
func (p *Probe) Run(ctx context.Context, interval time.Duration) {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		if _, err := p.RunOnce(ctx); err != nil && ctx.Err() == nil {
			p.logger.WarnContext(ctx, "probe pass", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
