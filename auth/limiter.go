package auth

import (
	"sync"
	"time"
)

// Limiter slows password guessing: after Free failed sign-ins for one key
// (a user name, or a client address) within Window, each further attempt
// for that key must wait, twice as long after every failure, up to
// MaxDelay. A success clears the key. It keeps at most maxKeys keys (the
// oldest window is forgotten first) and is safe for concurrent use. The
// state is per process: several nodes each count their own failures.
type Limiter struct {
	free     int
	window   time.Duration
	base     time.Duration
	maxDelay time.Duration
	now      func() time.Time

	mu   sync.Mutex
	keys map[string]*failures
}

type failures struct {
	n     int
	first time.Time
	until time.Time // no attempt before
}

// maxKeys bounds the limiter's memory.
const maxKeys = 100000

// LimiterConfig tunes a Limiter; zero fields take the defaults.
type LimiterConfig struct {
	// Free is how many failures pass without delay (default 5).
	Free int
	// Window is how long failures are remembered (default 15m).
	Window time.Duration
	// Base is the first delay (default 1s); MaxDelay the cap (default 5m).
	Base     time.Duration
	MaxDelay time.Duration
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// NewLimiter returns a Limiter for cfg.
func NewLimiter(cfg LimiterConfig) *Limiter {
	l := &Limiter{free: cfg.Free, window: cfg.Window, base: cfg.Base, maxDelay: cfg.MaxDelay, now: cfg.Now,
		keys: map[string]*failures{}}
	if l.free <= 0 {
		l.free = 5
	}
	if l.window <= 0 {
		l.window = 15 * time.Minute
	}
	if l.base <= 0 {
		l.base = time.Second
	}
	if l.maxDelay <= 0 {
		l.maxDelay = 5 * time.Minute
	}
	if l.now == nil {
		l.now = time.Now
	}
	return l
}

// Wait says how long the caller must wait before trying keys again (0 =
// go ahead): the longest wait of any of them.
func (l *Limiter) Wait(keys ...string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	var wait time.Duration
	for _, k := range keys {
		f := l.keys[k]
		if f == nil {
			continue
		}
		if now.Sub(f.first) > l.window && !now.Before(f.until) {
			delete(l.keys, k)
			continue
		}
		wait = max(wait, f.until.Sub(now))
	}
	return wait
}

// Fail records a failed attempt for each key.
func (l *Limiter) Fail(keys ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	for _, k := range keys {
		f := l.keys[k]
		if f == nil || (now.Sub(f.first) > l.window && !now.Before(f.until)) {
			if len(l.keys) >= maxKeys {
				l.evict()
			}
			f = &failures{first: now}
			l.keys[k] = f
		}
		f.n++
		if f.n >= l.free {
			d := l.base << min(f.n-l.free, 20)
			f.until = now.Add(min(d, l.maxDelay))
		}
	}
}

// Succeed clears keys.
func (l *Limiter) Succeed(keys ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range keys {
		delete(l.keys, k)
	}
}

// evict drops the key whose window began first.
func (l *Limiter) evict() {
	var (
		oldest string
		at     time.Time
	)
	for k, f := range l.keys {
		if oldest == "" || f.first.Before(at) {
			oldest, at = k, f.first
		}
	}
	delete(l.keys, oldest)
}
