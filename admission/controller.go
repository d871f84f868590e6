package admission

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jonboulle/clockwork"
)

// Config sets the per-host rate limits of a Controller. The zero value
// limits nothing.
type Config struct {
	// HostRate is the default rate, in requests per second, of every host's
	// token bucket. 0 means unlimited.
	HostRate float64
	// HostBurst is the default bucket size: how many requests may go at once
	// after an idle spell. 0 means 1 when HostRate is set.
	HostBurst int
	// HostRates overrides HostRate and HostBurst for some hosts, keyed by
	// host name (case-insensitive, no port). An override with Rate 0 makes
	// its host unlimited.
	HostRates map[string]HostLimit
}

// HostLimit is the token bucket of one host.
type HostLimit struct {
	// Rate is the rate in requests per second; 0 means unlimited.
	Rate float64
	// Burst is the bucket size; 0 means 1 when Rate is set.
	Burst int
}

// Request names what one delivery needs before it may start.
type Request struct {
	// Group is the concurrency group; "" is a group like any other.
	Group string
	// Limit is the most requests of Group in flight at once; 0 means no
	// limit. The limit of the latest request of a group applies to the
	// whole group, waiting requests included.
	Limit int
	// Host is the callback's host name (see [HostOf]); "" means no host
	// limit. A port, if any, is ignored.
	Host string
}

// Controller admits deliveries under group concurrency limits and host rate
// limits. It is safe for concurrent use; the zero value is not usable, call
// [New].
type Controller struct {
	clock clockwork.Clock

	mu         sync.Mutex
	def        HostLimit            // guarded by mu: SetHostLimits swaps it
	overrides  map[string]HostLimit // guarded by mu
	groups     map[string]*group
	hosts      map[string]*bucket
	lastSweep  time.Time
	sweptHosts int // len(hosts) after the last sweep
}

// New returns a Controller for cfg, or an error if a rate or burst is
// negative.
func New(cfg Config) (*Controller, error) {
	return newController(cfg, clockwork.NewRealClock())
}

func newController(cfg Config, clock clockwork.Clock) (*Controller, error) {
	def, overrides, err := checkConfig(cfg)
	if err != nil {
		return nil, err
	}
	return &Controller{
		clock:     clock,
		def:       def,
		overrides: overrides,
		groups:    map[string]*group{},
		hosts:     map[string]*bucket{},
		lastSweep: clock.Now(),
	}, nil
}

// checkConfig checks cfg's limits and returns the default and the
// overrides by normalised host.
func checkConfig(cfg Config) (HostLimit, map[string]HostLimit, error) {
	def, err := checkLimit("default", HostLimit{Rate: cfg.HostRate, Burst: cfg.HostBurst})
	if err != nil {
		return def, nil, err
	}
	overrides := make(map[string]HostLimit, len(cfg.HostRates))
	for host, hl := range cfg.HostRates {
		if overrides[normHost(host)], err = checkLimit(fmt.Sprintf("host %q", host), hl); err != nil {
			return def, nil, err
		}
	}
	return def, overrides, nil
}

// SetHostLimits replaces the host rate limits with cfg's, without a
// restart: requests already waiting for a token keep the delay they were
// given, later ones take tokens at the new rate (a host's bucket changes
// its rate and burst at its next request). An error (a negative rate or
// burst) changes nothing.
func (c *Controller) SetHostLimits(cfg Config) error {
	def, overrides, err := checkConfig(cfg)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.def, c.overrides = def, overrides
	return nil
}

func checkLimit(what string, hl HostLimit) (HostLimit, error) {
	if hl.Rate < 0 || hl.Burst < 0 {
		return hl, fmt.Errorf("flow: %s rate limit %v/s burst %d: must not be negative", what, hl.Rate, hl.Burst)
	}
	if hl.Rate > 0 && hl.Burst == 0 {
		hl.Burst = 1
	}
	return hl, nil
}

// Acquire waits until req may start: first until its group has fewer than
// req.Limit requests in flight (FIFO within the group), then until its
// host's bucket has a token. It returns release, which gives the group slot
// back and is safe to call more than once. If ctx ends first, Acquire
// returns ctx.Err() and holds nothing.
func (c *Controller) Acquire(ctx context.Context, req Request) (release func(), err error) {
	return c.AcquireWith(ctx, req, nil)
}

// Admit is a further gate of a group, passed once the group has room on
// this Controller and before the host token: a cluster-wide slot of the
// group (the caller's). It waits as long as it must, returning the
// release of what it took, or an error (ctx ended) holding nothing.
type Admit func(ctx context.Context) (release func(), err error)

// AcquireWith is Acquire with admit (when not nil) between the group and
// the host token: a request waits its turn in its group's FIFO here, so
// at most the group's limit of requests of this Controller wait in admit
// at once. The returned release gives back admit's holding, then the
// group slot.
func (c *Controller) AcquireWith(ctx context.Context, req Request, admit Admit) (release func(), err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := c.enterGroup(ctx, req); err != nil {
		return nil, err
	}
	leaveAdmit := func() {}
	if admit != nil {
		if leaveAdmit, err = admit(ctx); err != nil {
			c.leaveGroup(req.Group)
			return nil, err
		}
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			leaveAdmit()
			c.leaveGroup(req.Group)
		})
	}
	if err := c.takeToken(ctx, req.Host); err != nil {
		release()
		return nil, err
	}
	return release, nil
}

// Stats is a snapshot of a Controller's queues.
type Stats struct {
	// Groups holds every group with requests in flight or waiting.
	Groups map[string]GroupStats `json:"groups"`
	// Hosts holds every rate-limited host the Controller remembers.
	Hosts map[string]HostStats `json:"hosts"`
}

// GroupStats is the state of one concurrency group.
type GroupStats struct {
	// InFlight counts the requests that passed the group limit and are not
	// released yet (including those waiting for a host token).
	InFlight int `json:"in_flight"`
	// Waiting counts the requests queued for the group limit.
	Waiting int `json:"waiting"`
	// Limit is the group's current limit; 0 means none.
	Limit int `json:"limit"`
}

// HostStats is the state of one host's token bucket.
type HostStats struct {
	// Waiting counts the requests waiting for a token.
	Waiting int `json:"waiting"`
}

// QueueDepths returns the number of waiting requests per group, the shape
// metrics.Metrics.SetQueueDepthFunc takes.
func (s Stats) QueueDepths() map[string]int {
	out := make(map[string]int, len(s.Groups))
	for name, g := range s.Groups {
		out[name] = g.Waiting
	}
	return out
}

// Stats returns a snapshot of the groups and hosts. It also forgets idle
// host buckets, as Acquire does from time to time.
func (c *Controller) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sweepHosts(c.clock.Now())
	s := Stats{
		Groups: make(map[string]GroupStats, len(c.groups)),
		Hosts:  make(map[string]HostStats, len(c.hosts)),
	}
	for name, g := range c.groups {
		s.Groups[name] = GroupStats{InFlight: g.inflight, Waiting: g.waiters.Len(), Limit: g.limit}
	}
	for name, b := range c.hosts {
		s.Hosts[name] = HostStats{Waiting: b.waiting}
	}
	return s
}

// errNoToken is returned when a bucket can never grant a token; checkLimit
// makes that impossible, so it signals a bug.
var errNoToken = errors.New("flow: host bucket cannot grant a token")
