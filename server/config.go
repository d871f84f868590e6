package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"cronsheet/mapping"
)

// Config is cronsheet's configuration, read from config.yaml (snake_case
// keys). Secrets never live in the file: CRONSHEET_SMTP_PASSWORD and
// TWILIO_AUTH_TOKEN come from the environment.
type Config struct {
	// Listen is the HTTP address (default 127.0.0.1:8080).
	Listen string `yaml:"listen"`
	// NodeID names this process in claims and runs (default the host
	// name). It is stable across restarts, so a restarted node takes back
	// its own claims and runs at once; two live processes may not share
	// one (the second refuses to start).
	NodeID string       `yaml:"node_id"`
	Store  StoreConfig  `yaml:"store"`
	Patrol PatrolConfig `yaml:"patrol"`
	// Scenarios are the row scenarios declared besides the shipped memos
	// one, which is always served (ScenarioConfigs); a scenario declared
	// under the name memos replaces it.
	Scenarios []mapping.Config `yaml:"scenarios"`
	Email     EmailConfig      `yaml:"email"`
	SMS       SMSConfig        `yaml:"sms"`
	Fire      FireConfig       `yaml:"fire"`
	// HTTP, Exec and Kafka configure targets of those kinds.
	HTTP  HTTPTargetConfig  `yaml:"http"`
	Exec  ExecTargetConfig  `yaml:"exec"`
	Kafka KafkaTargetConfig `yaml:"kafka"`
	// Jobs configures the jobs API.
	Jobs JobsConfig `yaml:"jobs"`
	// Events sends every job transition to an optional sink.
	Events EventsConfig `yaml:"events"`
	// Flow limits callbacks per host; Metrics configures /metrics and statsd.
	Flow    FlowConfig    `yaml:"flow"`
	Metrics MetricsConfig `yaml:"metrics"`
	// Auth is required (default: every route but /healthz and the sign-in
	// page needs a session or a token) or local_dev (requests without
	// credentials act as a local admin; allowed only when Listen is a
	// loopback address, and the pages show a banner saying so).
	Auth string `yaml:"auth"`
	// PublicHosts are the host names clients may reach this server by,
	// besides loopback; any other Host header is refused (DNS rebinding).
	PublicHosts []string `yaml:"public_hosts"`
	// TrustedProxies are the proxies (IPs or CIDRs) whose X-Forwarded-For
	// is believed for the client address; empty (default) trusts none.
	TrustedProxies []string `yaml:"trusted_proxies"`
	// Session bounds browser sessions.
	Session SessionConfig `yaml:"session"`
	// AdminPassword, from CRONSHEET_ADMIN_PASSWORD, creates the user
	// "admin" (role admin) at start when the store has no user yet.
	AdminPassword string `yaml:"-"`
	// LogLevel is debug, info (default), warn or error.
	LogLevel string `yaml:"log_level"`
	// ShutdownTimeout bounds graceful shutdown (default 10s).
	ShutdownTimeout time.Duration `yaml:"shutdown_timeout"`
}

// Auth modes.
const (
	AuthRequired = "required"
	AuthLocalDev = "local_dev"
)

// SessionConfig bounds browser sessions.
type SessionConfig struct {
	// Idle ends a session unused this long (default 2h).
	Idle time.Duration `yaml:"idle"`
	// Max ends every session this long after sign-in (default 24h).
	Max time.Duration `yaml:"max"`
}

// StoreConfig selects the storage driver.
type StoreConfig struct {
	// Driver is sqlite (default) or mongo.
	Driver string `yaml:"driver"`
	// Path is the SQLite file (default ./data/cronsheet.db).
	Path string `yaml:"path"`
	// URI and Database are for the mongo driver; CRONSHEET_MONGO_URI, when
	// set, replaces URI (so credentials need not be in the file).
	URI      string `yaml:"uri"`
	Database string `yaml:"database"`
	// ConnectTimeout bounds the mongo driver's wait for a server at start
	// (default 10s); an unreachable server then stops start-up.
	ConnectTimeout time.Duration `yaml:"connect_timeout"`
	// Timeout bounds each mongo call (default 10s).
	Timeout time.Duration `yaml:"timeout"`
	// WriteConcern is majority (default) or 1 (primary only: faster, but a
	// failover may roll a write back).
	WriteConcern string `yaml:"write_concern"`
	// ReadPreference is primary (default) or nearest (possibly stale reads).
	ReadPreference string `yaml:"read_preference"`
}

// defaultStoreConfig is the embedded SQLite store, with the mongo driver's
// defaults for when driver is mongo.
func defaultStoreConfig() StoreConfig {
	return StoreConfig{Driver: "sqlite", Path: "./data/cronsheet.db", ConnectTimeout: 10 * time.Second,
		Timeout: 10 * time.Second, WriteConcern: "majority", ReadPreference: "primary"}
}

// validateMongo checks the mongo driver's keys.
func (c *StoreConfig) validateMongo() error {
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

// PatrolConfig tunes the patrol loops.
type PatrolConfig struct {
	// Interval between passes (default 1s).
	Interval time.Duration `yaml:"interval"`
	// Lease is how long a claim, or a node's heartbeat, lives without
	// renewal (default 30s: long enough to ride out a MongoDB replica-set
	// election). A dead node's tasks fire again on another node within
	// about the lease.
	Lease time.Duration `yaml:"lease"`
	// Batch bounds rows or tasks per query (default 500).
	Batch int `yaml:"batch"`
}

// FireConfig tunes retries.
type FireConfig struct {
	// BackoffBase is the first retry delay (default 1s).
	BackoffBase time.Duration `yaml:"backoff_base"`
	// BackoffMax caps a retry delay (default 5m).
	BackoffMax time.Duration `yaml:"backoff_max"`
	// Workers bounds the delivery attempts in flight on this node, all
	// targets together (default 256, 1..10000); more wait for a worker.
	// Concurrency groups and host rate limits bound them further.
	Workers int `yaml:"workers"`
	// ArmWindow: only tasks due within it are held armed in full, with a
	// timer; tasks due later are parked (id, version, due instant) and
	// read back from the store as they enter it, and those due more than
	// two windows ahead are handed back to the store, claimed again a
	// window before their slot (default 2m; 0 holds every task in full;
	// else 5s..24h).
	ArmWindow time.Duration `yaml:"arm_window"`
}

// HTTPTargetConfig says which hosts HTTP targets may call back. The rules,
// in order, for the URL's host and every address dialed: an allow entry
// permits; else a deny entry refuses; else public addresses are permitted
// and loopback, private, link-local (cloud metadata) and other special
// addresses are refused. Entries are CIDRs, IPs, host names or ".domain".
type HTTPTargetConfig struct {
	Allow []string `yaml:"allow"`
	Deny  []string `yaml:"deny"`
}

// ExecTargetConfig lists the commands exec targets may run, by name.
type ExecTargetConfig struct {
	Commands map[string]ExecCommandConfig `yaml:"commands"`
}

// ExecCommandConfig is one allow-listed command: an absolute path and its
// arguments, each a template whose {{name}} placeholders params fill (one
// argv element each, no shell).
type ExecCommandConfig struct {
	Path string   `yaml:"path"`
	Args []string `yaml:"args"`
	Dir  string   `yaml:"dir"`
	Env  []string `yaml:"env"`
}

// KafkaTargetConfig configures the producer of kafka targets; with no
// brokers, kafka targets are refused.
type KafkaTargetConfig struct {
	Brokers  []string `yaml:"brokers"`
	ClientID string   `yaml:"client_id"`
}

// JobsConfig configures the jobs API. Tokens come from the environment:
// CRONSHEET_JOB_TOKENS (comma-separated) is the allow list of API clients'
// bearer tokens (empty: the API is open, for local use) and
// CRONSHEET_JOB_DENIED_TOKENS the deny list (revoked tokens).
type JobsConfig struct {
	AllowTokens []string `yaml:"-"`
	DenyTokens  []string `yaml:"-"`
	// Kafka, with brokers set, takes jobs from Topic (consumer group Group)
	// and answers on ResultTopic; both topics must exist.
	Kafka JobsKafkaConfig `yaml:"kafka"`
}

// JobsKafkaConfig is the Kafka intake of the jobs API.
type JobsKafkaConfig struct {
	Brokers     []string `yaml:"brokers"`
	Topic       string   `yaml:"topic"`
	ResultTopic string   `yaml:"result_topic"`
	Group       string   `yaml:"group"`
}

// EventsConfig is the lifecycle event sink: one JSON document per job
// transition, as an Elasticsearch bulk request (kind http) or a Kafka
// record (kind kafka). Best effort: the store keeps every transition; the
// sink's queue drops its oldest events when the sink is down for long.
// CRONSHEET_EVENTS_URL, when set, replaces url (credentials stay out of the
// file).
type EventsConfig struct {
	// Kind is "" (off), http or kafka.
	Kind    string        `yaml:"kind"`
	URL     string        `yaml:"url"`
	Index   string        `yaml:"index"`
	Timeout time.Duration `yaml:"timeout"`
	Brokers []string      `yaml:"brokers"`
	Topic   string        `yaml:"topic"`
}

// FlowConfig rate-limits callbacks per host with token buckets (jobs past
// the limit wait; none is dropped). Rate 0 = unlimited. Jobs' own "cc"
// groups limit their concurrency; the firer's delivery slots are the global
// worker pool.
type FlowConfig struct {
	// HostRate is the default rate (calls per second) for every host.
	HostRate  float64 `yaml:"host_rate"`
	HostBurst int     `yaml:"host_burst"`
	// Hosts overrides the rate of single hosts.
	Hosts map[string]FlowHostConfig `yaml:"hosts"`
}

// FlowHostConfig is one host's rate and burst.
type FlowHostConfig struct {
	Rate  float64 `yaml:"rate"`
	Burst int     `yaml:"burst"`
}

// MetricsConfig configures metrics: /metrics is always served (to viewers,
// or to anyone when Public is set); a statsd address turns on a push of
// the same figures.
type MetricsConfig struct {
	// Public opens GET /metrics without a token (default false).
	Public       bool          `yaml:"public"`
	StatsdAddr   string        `yaml:"statsd_addr"`
	StatsdPrefix string        `yaml:"statsd_prefix"`
	StatsdEvery  time.Duration `yaml:"statsd_every"`
}

// Delivery modes of a channel.
const (
	ModeSend   = "send"
	ModeOutbox = "outbox"
)

// EmailConfig configures the email channel.
type EmailConfig struct {
	// Mode is send (through SMTP) or outbox (default: record, don't send).
	Mode     string `yaml:"mode"`
	Host     string `yaml:"host"`
	Port     int    `yaml:"port"`
	Username string `yaml:"username"`
	From     string `yaml:"from"`
	// TLS is none, starttls (default) or tls.
	TLS     string        `yaml:"tls"`
	Timeout time.Duration `yaml:"timeout"`
	// Password comes from CRONSHEET_SMTP_PASSWORD.
	Password string `yaml:"-"`
}

// SMSConfig configures the SMS channel (Twilio).
type SMSConfig struct {
	// Mode is send (through Twilio) or outbox (default).
	Mode       string `yaml:"mode"`
	AccountSID string `yaml:"account_sid"`
	From       string `yaml:"from"`
	// APIBaseURL overrides https://api.twilio.com (tests, proxies).
	APIBaseURL string        `yaml:"api_base_url"`
	Timeout    time.Duration `yaml:"timeout"`
	// AuthToken comes from TWILIO_AUTH_TOKEN.
	AuthToken string `yaml:"-"`
}

// DefaultConfig returns the configuration used for keys the file omits.
func DefaultConfig() Config {
	host, _ := os.Hostname()
	return Config{
		Listen:          "127.0.0.1:8080",
		NodeID:          cmpString(host, "node"),
		Store:           defaultStoreConfig(),
		Patrol:          PatrolConfig{Interval: time.Second, Lease: 30 * time.Second, Batch: 500},
		Email:           EmailConfig{Mode: ModeOutbox, Port: 587, TLS: "starttls", Timeout: 30 * time.Second},
		SMS:             SMSConfig{Mode: ModeOutbox, Timeout: 30 * time.Second},
		Fire:            FireConfig{BackoffBase: time.Second, BackoffMax: 5 * time.Minute, Workers: 256, ArmWindow: 2 * time.Minute},
		Metrics:         MetricsConfig{StatsdPrefix: "cronsheet", StatsdEvery: 10 * time.Second},
		Auth:            AuthRequired,
		Session:         SessionConfig{Idle: 2 * time.Hour, Max: 24 * time.Hour},
		LogLevel:        "info",
		ShutdownTimeout: 10 * time.Second,
	}
}

func cmpString(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// LoadConfig reads path over the defaults, takes secrets from getenv and
// validates the result. Errors name the offending key.
func LoadConfig(path string, getenv func(string) string) (Config, error) {
	cfg := DefaultConfig()
	data, err := os.ReadFile(path)
	if err != nil {
		return cfg, fmt.Errorf("config: %w", err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&cfg); err != nil && !errors.Is(err, io.EOF) { // empty file: all defaults
		return cfg, fmt.Errorf("config %s: %s", path, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	cfg.Email.Password = getenv("CRONSHEET_SMTP_PASSWORD")
	cfg.SMS.AuthToken = getenv("TWILIO_AUTH_TOKEN")
	if u := getenv("CRONSHEET_EVENTS_URL"); u != "" {
		cfg.Events.URL = u
	}
	cfg.Jobs.AllowTokens = splitList(getenv("CRONSHEET_JOB_TOKENS"))
	cfg.Jobs.DenyTokens = splitList(getenv("CRONSHEET_JOB_DENIED_TOKENS"))
	cfg.AdminPassword = getenv("CRONSHEET_ADMIN_PASSWORD")
	if uri := getenv("CRONSHEET_MONGO_URI"); uri != "" {
		cfg.Store.URI = uri
	}
	if err := cfg.Validate(); err != nil {
		return cfg, fmt.Errorf("config %s: %w", path, err)
	}
	return cfg, nil
}

// Validate checks every key and says which one is wrong.
func (c *Config) Validate() error {
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		return fmt.Errorf("listen: %q is not host:port", c.Listen)
	}
	if err := c.validateAuth(); err != nil {
		return err
	}
	if c.NodeID == "" || len(c.NodeID) > 128 {
		return errors.New("node_id: must be 1..128 characters")
	}
	switch c.Store.Driver {
	case "sqlite":
		if c.Store.Path == "" {
			return errors.New("store.path: required for driver sqlite")
		}
	case "mongo":
		if err := c.Store.validateMongo(); err != nil {
			return err
		}
	default:
		return fmt.Errorf("store.driver: %q is not one of sqlite, mongo", c.Store.Driver)
	}
	if c.Patrol.Interval < 10*time.Millisecond || c.Patrol.Interval > time.Minute {
		return fmt.Errorf("patrol.interval: %s is outside 10ms..1m", c.Patrol.Interval)
	}
	if c.Patrol.Lease < 3*c.Patrol.Interval || c.Patrol.Lease > time.Hour {
		return fmt.Errorf("patrol.lease: %s must be at least 3× patrol.interval and at most 1h", c.Patrol.Lease)
	}
	if c.Patrol.Batch < 1 || c.Patrol.Batch > 10000 {
		return fmt.Errorf("patrol.batch: %d is outside 1..10000", c.Patrol.Batch)
	}
	if c.Fire.Workers < 1 || c.Fire.Workers > 10000 {
		return fmt.Errorf("fire.workers: %d must be 1 to 10000", c.Fire.Workers)
	}
	if w := c.Fire.ArmWindow; w != 0 && (w < 5*time.Second || w > 24*time.Hour) {
		return fmt.Errorf("fire.arm_window: %s must be 0 (off) or 5s to 24h", w)
	}
	if c.Fire.BackoffBase <= 0 || c.Fire.BackoffMax < c.Fire.BackoffBase {
		return errors.New("fire: backoff_base must be > 0 and backoff_max >= backoff_base")
	}
	if c.ShutdownTimeout <= 0 {
		return errors.New("shutdown_timeout: must be > 0")
	}
	switch c.LogLevel {
	case "debug", "info", "warn", "error":
	default:
		return fmt.Errorf("log_level: %q is not one of debug, info, warn, error", c.LogLevel)
	}
	switch c.Events.Kind {
	case "", "http", "kafka":
	default:
		return fmt.Errorf("events.kind: %q is not one of \"\", http, kafka", c.Events.Kind)
	}
	if c.Flow.HostRate < 0 || c.Flow.HostBurst < 0 {
		return errors.New("flow: host_rate and host_burst must be >= 0")
	}
	for h, l := range c.Flow.Hosts {
		if h == "" || l.Rate < 0 || l.Burst < 0 {
			return fmt.Errorf("flow.hosts[%q]: a host name with rate and burst >= 0", h)
		}
	}
	if m := c.Metrics; m.StatsdAddr != "" {
		if _, _, err := net.SplitHostPort(m.StatsdAddr); err != nil {
			return fmt.Errorf("metrics.statsd_addr: %q is not host:port", m.StatsdAddr)
		}
		if m.StatsdEvery < 100*time.Millisecond {
			return fmt.Errorf("metrics.statsd_every: %s is under 100ms", m.StatsdEvery)
		}
	}
	if err := c.Email.validate(); err != nil {
		return err
	}
	if err := c.SMS.validate(); err != nil {
		return err
	}
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

// ScenarioConfigs returns every scenario the node serves: the shipped
// memos scenario (mapping.MemosConfig) unless Scenarios declares one named
// memos, then the declared ones in order.
func (c *Config) ScenarioConfigs() []mapping.Config {
	out := make([]mapping.Config, 0, len(c.Scenarios)+1)
	if !slices.ContainsFunc(c.Scenarios, func(sc mapping.Config) bool { return sc.Name == "memos" }) {
		out = append(out, mapping.MemosConfig())
	}
	return append(out, c.Scenarios...)
}

func (e *EmailConfig) validate() error {
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

func (s *SMSConfig) validate() error {
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

// splitList splits a comma-separated list, dropping blanks.
func splitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
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
