package config

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"cronsheet/mapping"
	"cronsheet/sink/index"
)

// Validate checks every key and says which one is wrong. The sections
// are checked in order: serving, store, patrol, fire, process, events and
// flow, metrics, the channels, the scenarios.
func (c *Config) Validate() error {
	for _, check := range []func() error{
		c.validateServing, c.validateStore, c.Patrol.validate, c.Retention.validate, c.Fire.validate, c.validateProcess,
		c.validateEventsAndFlow, c.Metrics.validate, c.Email.validate, c.SMS.validate, c.validateScenarios,
	} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// validateServing checks listen, the auth keys and node_id.
func (c *Config) validateServing() error {
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		return fmt.Errorf("listen: %q is not host:port", c.Listen)
	}
	if err := c.validateAuth(); err != nil {
		return err
	}
	if c.NodeID == "" || len(c.NodeID) > 128 {
		return errors.New("node_id: must be 1..128 characters")
	}
	return nil
}

// validateStore checks the store's driver and that driver's keys.
func (c *Config) validateStore() error {
	switch c.Store.Driver {
	case "sqlite":
		if c.Store.Path == "" {
			return errors.New("store.path: required for driver sqlite")
		}
	case "mongo":
		return c.Store.validateMongo()
	default:
		return fmt.Errorf("store.driver: %q is not one of sqlite, mongo", c.Store.Driver)
	}
	return nil
}

// validate checks the patrol keys.
func (p *Patrol) validate() error {
	if p.Interval < 10*time.Millisecond || p.Interval > time.Minute {
		return fmt.Errorf("patrol.interval: %s is outside 10ms..1m", p.Interval)
	}
	if p.Lease < 3*p.Interval || p.Lease > time.Hour {
		return fmt.Errorf("patrol.lease: %s must be at least 3× patrol.interval and at most 1h", p.Lease)
	}
	if p.Batch < 1 || p.Batch > 10000 {
		return fmt.Errorf("patrol.batch: %d is outside 1..10000", p.Batch)
	}
	return nil
}

// validate checks the fire keys.
func (f *Fire) validate() error {
	if f.Workers < 1 || f.Workers > 10000 {
		return fmt.Errorf("fire.workers: %d must be 1 to 10000", f.Workers)
	}
	if w := f.ArmWindow; w != 0 && (w < 5*time.Second || w > 24*time.Hour) {
		return fmt.Errorf("fire.arm_window: %s must be 0 (off) or 5s to 24h", w)
	}
	if f.BackoffBase <= 0 || f.BackoffMax < f.BackoffBase {
		return errors.New("fire: backoff_base must be > 0 and backoff_max >= backoff_base")
	}
	return nil
}

// validateProcess checks shutdown_timeout and log_level.
func (c *Config) validateProcess() error {
	if c.ShutdownTimeout <= 0 {
		return errors.New("shutdown_timeout: must be > 0")
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("log_level: %q is not one of debug, info, warn, error", c.LogLevel)
	}
	if c.Declared != "" {
		if st, err := os.Stat(c.Declared); err != nil || !st.Mode().IsRegular() {
			return fmt.Errorf("declared: %q is not a readable file (a path from the working directory)", c.Declared)
		}
	}
	return nil
}

// validateEventsAndFlow checks events.kind, the events.index template and
// the flow limits.
func (c *Config) validateEventsAndFlow() error {
	switch c.Events.Kind {
	case "", "http", "kafka":
	default:
		return fmt.Errorf("events.kind: %q is not one of \"\", http, kafka", c.Events.Kind)
	}
	if c.Events.Index != "" {
		if _, err := index.Parse(c.Events.Index); err != nil {
			return fmt.Errorf("events.index: %w", err)
		}
	}
	if c.Flow.HostRate < 0 || c.Flow.HostBurst < 0 {
		return errors.New("flow: host_rate and host_burst must be >= 0")
	}
	for h, l := range c.Flow.Hosts {
		if h == "" || l.Rate < 0 || l.Burst < 0 {
			return fmt.Errorf("flow.hosts[%q]: a host name with rate and burst >= 0", h)
		}
	}
	for g, n := range c.Flow.CCGroups {
		if g == "" || n < 1 || n > 1000 {
			return fmt.Errorf("flow.cc_groups[%q]: a group name with a limit of 1 to 1000; got %d", g, n)
		}
	}
	return nil
}

// validate checks the statsd keys, when a statsd address is set.
func (m *Metrics) validate() error {
	if m.StatsdAddr == "" {
		return nil
	}
	if _, _, err := net.SplitHostPort(m.StatsdAddr); err != nil {
		return fmt.Errorf("metrics.statsd_addr: %q is not host:port", m.StatsdAddr)
	}
	if m.StatsdEvery < 100*time.Millisecond {
		return fmt.Errorf("metrics.statsd_every: %s is under 100ms", m.StatsdEvery)
	}
	return nil
}

// validateScenarios checks each declared scenario and that no name is
// declared twice.
func (c *Config) validateScenarios() error {
	seen := map[string]bool{}
	for i, sc := range c.Scenarios {
		if _, err := mapping.New(sc); err != nil {
			return fmt.Errorf("scenarios[%d]: %w", i, err)
		}
		if seen[sc.Name] {
			return fmt.Errorf("scenarios[%d].name: %q is defined twice", i, sc.Name)
		}
		seen[sc.Name] = true
	}
	return nil
}

// validateMongo checks the mongo driver's keys.
func (c *Store) validateMongo() error {
	if c.URI == "" {
		return errors.New("store.uri: required for driver mongo (or set CRONSHEET_MONGO_URI)")
	}
	if !strings.HasPrefix(c.URI, "mongodb://") && !strings.HasPrefix(c.URI, "mongodb+srv://") {
		return errors.New("store.uri: must start with mongodb:// or mongodb+srv://")
	}
	if c.Database == "" || len(c.Database) > 63 || strings.ContainsAny(c.Database, "/\\. \"$") {
		return fmt.Errorf("store.database: %q must be 1..63 characters without / \\ . space \" $", c.Database)
	}
	if c.ConnectTimeout < time.Second || c.ConnectTimeout > 5*time.Minute {
		return fmt.Errorf("store.connect_timeout: %s is outside 1s..5m", c.ConnectTimeout)
	}
	if c.Timeout < 100*time.Millisecond || c.Timeout > 5*time.Minute {
		return fmt.Errorf("store.timeout: %s is outside 100ms..5m", c.Timeout)
	}
	if c.WriteConcern != "majority" && c.WriteConcern != "1" {
		return fmt.Errorf("store.write_concern: %q is not one of majority, 1", c.WriteConcern)
	}
	if c.ReadPreference != "primary" && c.ReadPreference != "nearest" {
		return fmt.Errorf("store.read_preference: %q is not one of primary, nearest", c.ReadPreference)
	}
	return nil
}

// validate checks the email keys, when email.mode is send.
func (e *Email) validate() error {
	switch e.Mode {
	case ModeOutbox:
		return nil
	case ModeSend:
	default:
		return fmt.Errorf("email.mode: %q is not one of send, outbox", e.Mode)
	}
	switch {
	case e.Host == "":
		return errors.New("email.host: required when email.mode is send")
	case e.Port < 1 || e.Port > 65535:
		return fmt.Errorf("email.port: %d is not a port", e.Port)
	case e.From == "":
		return errors.New("email.from: required when email.mode is send")
	case e.TLS != "none" && e.TLS != "starttls" && e.TLS != "tls":
		return fmt.Errorf("email.tls: %q is not one of none, starttls, tls", e.TLS)
	case e.Timeout <= 0:
		return errors.New("email.timeout: must be > 0")
	}
	return nil
}

// validate checks the SMS keys, when sms.mode is send.
func (s *SMS) validate() error {
	switch s.Mode {
	case ModeOutbox:
		return nil
	case ModeSend:
	default:
		return fmt.Errorf("sms.mode: %q is not one of send, outbox", s.Mode)
	}
	switch {
	case s.AccountSID == "":
		return errors.New("sms.account_sid: required when sms.mode is send")
	case s.From == "":
		return errors.New("sms.from: required when sms.mode is send")
	case s.AuthToken == "":
		return errors.New("sms: TWILIO_AUTH_TOKEN must be set in the environment when sms.mode is send")
	case s.Timeout <= 0:
		return errors.New("sms.timeout: must be > 0")
	}
	return nil
}

// validateAuth checks the auth keys: local_dev only on a loopback listener.
func (c *Config) validateAuth() error {
	switch c.Auth {
	case AuthRequired:
	case AuthLocalDev:
		if !loopbackListen(c.Listen) {
			return fmt.Errorf("auth: local_dev signs everyone in as admin, so it needs a loopback listen address "+
				"(127.0.0.1, [::1] or localhost), not %q; use auth: required", c.Listen)
		}
	default:
		return fmt.Errorf("auth: %q is not one of required, local_dev", c.Auth)
	}
	for i, h := range c.PublicHosts {
		if h == "" || strings.ContainsAny(h, "/: ") {
			return fmt.Errorf("public_hosts[%d]: %q must be a bare host name or IP", i, h)
		}
	}
	for i, p := range c.TrustedProxies {
		if net.ParseIP(p) == nil {
			if _, _, err := net.ParseCIDR(p); err != nil {
				return fmt.Errorf("trusted_proxies[%d]: %q is not an IP or CIDR", i, p)
			}
		}
	}
	if c.Session.Idle < time.Minute || c.Session.Max < c.Session.Idle {
		return errors.New("session: idle must be at least 1m and max at least idle")
	}
	return nil
}

// loopbackListen reports whether a listen address binds loopback only.
func loopbackListen(listen string) bool {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
