package admission

import (
	"context"
	"net"
	"net/url"
	"strings"
	"time"

	"golang.org/x/time/rate"
)

// sweepEvery is how often, at most, idle host buckets are looked for, unless
// the number of buckets has doubled since the last sweep.
const sweepEvery = time.Minute

// bucket is one host's token bucket.
type bucket struct {
	lim     *rate.Limiter
	waiting int
}

// HostOf returns the lower-case host name (no port) of rawURL, the key of
// its rate limit, or "" if rawURL does not parse.
func HostOf(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	return strings.ToLower(u.Hostname())
}

// normHost lower-cases host and drops a port.
func normHost(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return strings.ToLower(strings.Trim(host, "[]"))
}

// Limit returns the token bucket that applies to host (see [HostOf]): its
// override, else the default, as the live settings last set them. A Rate
// of 0 is no limit.
func (c *Controller) Limit(host string) HostLimit {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.limitOf(normHost(host))
}

// limitOf is host's limit. c.mu is held.
func (c *Controller) limitOf(host string) HostLimit {
	if hl, ok := c.overrides[host]; ok {
		return hl
	}
	return c.def
}

// takeToken waits for a token of host's bucket; unlimited hosts pass at
// once.
func (c *Controller) takeToken(ctx context.Context, host string) error {
	host = normHost(host)
	if host == "" {
		return nil
	}
	c.mu.Lock()
	hl := c.limitOf(host)
	if hl.Rate <= 0 {
		c.mu.Unlock()
		return nil
	}
	now := c.clock.Now()
	c.sweepHosts(now)
	b := c.hosts[host]
	switch {
	case b == nil:
		b = &bucket{lim: rate.NewLimiter(rate.Limit(hl.Rate), hl.Burst)}
		c.hosts[host] = b
	case b.lim.Limit() != rate.Limit(hl.Rate) || b.lim.Burst() != hl.Burst:
		// SetHostLimits changed the host's limit: the bucket keeps its
		// tokens and takes the new rate and size from now on.
		b.lim.SetLimitAt(now, rate.Limit(hl.Rate))
		b.lim.SetBurstAt(now, hl.Burst)
	}
	r := b.lim.ReserveN(now, 1)
	if !r.OK() {
		c.mu.Unlock()
		return errNoToken
	}
	delay := r.DelayFrom(now)
	if delay <= 0 {
		c.mu.Unlock()
		return nil
	}
	b.waiting++
	c.mu.Unlock()

	t := c.clock.NewTimer(delay)
	defer t.Stop()
	var err error
	select {
	case <-t.Chan():
	case <-ctx.Done():
		err = ctx.Err()
		r.CancelAt(c.clock.Now()) // hand the token back to later requests
	}
	c.mu.Lock()
	b.waiting--
	c.mu.Unlock()
	return err
}

// sweepHosts forgets the buckets nobody waits on whose tokens are back to
// full: such a bucket is the same as a new one, so forgetting it loses
// nothing. It runs at most every sweepEvery, or when the number of buckets
// has doubled, so its cost is amortised. c.mu is held.
func (c *Controller) sweepHosts(now time.Time) {
	if now.Sub(c.lastSweep) < sweepEvery && len(c.hosts) < 2*max(c.sweptHosts, 64) {
		return
	}
	for host, b := range c.hosts {
		if b.waiting == 0 && b.lim.TokensAt(now) >= float64(b.lim.Burst()) {
			delete(c.hosts, host)
		}
	}
	c.lastSweep = now
	c.sweptHosts = len(c.hosts)
}
