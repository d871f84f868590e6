package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"cronsheet/admission"
	"cronsheet/config"
	"cronsheet/executors/configured"
	"cronsheet/store"
	"cronsheet/task"
)

// settingsPollEvery is how often a node reads the store's settings
// version: a change made through any node applies on every node within
// about this long.
const settingsPollEvery = time.Second

// liveSettings applies the store's live settings (store.Settings) to this
// node: the admission host limits, the http host guard's lists and the cc
// group limits. The configuration seeds the store once (seed); after that
// the store's record is the truth, read again every settingsPollEvery.
type liveSettings struct {
	logger    *slog.Logger
	store     store.SettingsStore
	admission *admission.Controller
	execs     *configured.Executors

	cur atomic.Pointer[store.Settings] // the applied settings
	mu  sync.Mutex                     // one apply at a time
}

// settingsFromConfig is the record the configuration seeds.
func settingsFromConfig(cfg config.Config) *store.Settings {
	s := &store.Settings{HostRate: cfg.Flow.HostRate, HostBurst: cfg.Flow.HostBurst,
		Hosts: make(map[string]store.HostLimit, len(cfg.Flow.Hosts)),
		Allow: cfg.HTTP.Allow, Deny: cfg.HTTP.Deny, CCGroups: cfg.Flow.CCGroups, UpdatedBy: "config"}
	for h, l := range cfg.Flow.Hosts {
		s.Hosts[h] = store.HostLimit{Rate: l.Rate, Burst: l.Burst}
	}
	return s.Normalized()
}

// seed stores the configuration's settings when the store has none (the
// first node to start wins; the others read its record), then applies
// what the store holds.
func (l *liveSettings) seed(ctx context.Context, cfg config.Config) error {
	cur, err := l.store.GetSettings(ctx)
	if errors.Is(err, task.ErrNotFound) {
		cur, err = l.store.PutSettings(ctx, settingsFromConfig(cfg), 0)
		if errors.Is(err, task.ErrConflict) {
			cur, err = l.store.GetSettings(ctx)
		}
	}
	if err != nil {
		return fmt.Errorf("live settings: %w", err)
	}
	if err := l.apply(cur); err != nil {
		return fmt.Errorf("live settings (version %d in the store): %w", cur.Version, err)
	}
	return nil
}

// apply makes s this node's settings when it is newer than the version
// applied. Versions only move forward: a poll that read version N before
// N+1 was stored and applied (by the settings API, or a quicker poll)
// answers after it, and applying N then would take back N+1's limits and
// lists until the next poll. The check and the swap are one step under
// l.mu. Nothing in flight is dropped: waiting deliveries keep their place,
// calls already sent go on.
func (l *liveSettings) apply(s *store.Settings) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if old := l.cur.Load(); old != nil && s.Version <= old.Version {
		return nil
	}
	if err := l.execs.SetHostLists(s.Allow, s.Deny); err != nil {
		return err
	}
	hosts := make(map[string]admission.HostLimit, len(s.Hosts))
	for h, hl := range s.Hosts {
		hosts[h] = admission.HostLimit{Rate: hl.Rate, Burst: hl.Burst}
	}
	if err := l.admission.SetHostLimits(admission.Config{HostRate: s.HostRate, HostBurst: s.HostBurst, HostRates: hosts}); err != nil {
		return err
	}
	l.cur.Store(s)
	l.logger.Info("live settings applied", "version", s.Version, "by", s.UpdatedBy)
	return nil
}

// poll reads the store's settings every settingsPollEvery until ctx ends
// and applies a new version.
func (l *liveSettings) poll(ctx context.Context) {
	t := time.NewTicker(settingsPollEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if err := l.pollOnce(ctx); err != nil && ctx.Err() == nil {
			l.logger.Warn("live settings not read or applied; the next poll retries", "error", err)
		}
	}
}

// pollOnce reads the store's settings once and applies them when newer
// than the applied ones.
func (l *liveSettings) pollOnce(ctx context.Context) error {
	s, err := l.store.GetSettings(ctx)
	if err != nil {
		return err
	}
	return l.apply(s)
}

// current returns the applied settings (never nil after seed).
func (l *liveSettings) current() *store.Settings { return l.cur.Load() }

// ccLimit is the limit of a job's cc group: the settings' limit for group
// when they set one, else the job's own.
func (l *liveSettings) ccLimit(group string, asked int) int {
	if s := l.cur.Load(); s != nil {
		if n, ok := s.CCGroups[group]; ok && group != "" {
			return n
		}
	}
	return asked
}

// check is the settings API's check beyond store.Settings.Validate: the
// allow and deny entries as the host guard parses them.
func (l *liveSettings) check(s *store.Settings) error {
	return l.execs.CheckHostLists(s.Allow, s.Deny)
}
