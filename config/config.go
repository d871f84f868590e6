// Package config is cronsheet's configuration: the keys of config.yaml
// (Config and its sections), their defaults (Default), the secrets taken
// from the environment, and the validation that names the offending key
// (Load, Config.Validate).
package config

import (
	"slices"
	"time"

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
	NodeID string `yaml:"node_id"`
	Store  Store  `yaml:"store"`
	Patrol Patrol `yaml:"patrol"`
	// Retention bounds what the store keeps of each kind.
	Retention Retention `yaml:"retention"`
	// Scenarios are the row scenarios declared besides the shipped memos
	// one, which is always served (ScenarioConfigs); a scenario declared
	// under the name memos replaces it.
	Scenarios []mapping.Config `yaml:"scenarios"`
	Email     Email            `yaml:"email"`
	SMS       SMS              `yaml:"sms"`
	Fire      Fire             `yaml:"fire"`
	// HTTP, Exec and Kafka configure targets of those kinds.
	HTTP  HTTPTarget  `yaml:"http"`
	Exec  ExecTarget  `yaml:"exec"`
	Kafka KafkaTarget `yaml:"kafka"`
	// Jobs configures the jobs API.
	Jobs Jobs `yaml:"jobs"`
	// Events sends job, flow and task run events to an optional sink.
	Events Events `yaml:"events"`
	// Flow limits callbacks per host; Metrics configures /metrics and statsd.
	Flow    Flow    `yaml:"flow"`
	Metrics Metrics `yaml:"metrics"`
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
	Session Session `yaml:"session"`
	// AdminPassword, from CRONSHEET_ADMIN_PASSWORD, creates the user
	// "admin" (role admin) at start when the store has no user yet.
	AdminPassword string `yaml:"-"`
	// LogLevel is debug, info (default), warn or error.
	LogLevel string `yaml:"log_level"`
	// ShutdownTimeout bounds graceful shutdown (default 10s).
	ShutdownTimeout time.Duration `yaml:"shutdown_timeout"`
	// Declared, when set, is a declaration file (the format of cronsheet
	// apply) applied once at start, after the store opens and before the
	// node serves, through the node's own API as the principal
	// "declared-file". A file that does not parse stops the start; a
	// refusal is logged and the node serves anyway. Default: none.
	Declared string `yaml:"declared"`
}

// Auth modes.
const (
	AuthRequired = "required"
	AuthLocalDev = "local_dev"
)

// Session bounds browser sessions.
type Session struct {
	// Idle ends a session unused this long (default 2h).
	Idle time.Duration `yaml:"idle"`
	// Max ends every session this long after sign-in (default 24h).
	Max time.Duration `yaml:"max"`
}

// Store selects the storage driver.
type Store struct {
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

// defaultStore is the embedded SQLite store, with the mongo driver's
// defaults for when driver is mongo.
func defaultStore() Store {
	return Store{Driver: "sqlite", Path: "./data/cronsheet.db", ConnectTimeout: 10 * time.Second,
		Timeout: 10 * time.Second, WriteConcern: "majority", ReadPreference: "primary"}
}

// Patrol tunes the patrol loops.
type Patrol struct {
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

// Fire tunes retries.
type Fire struct {
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

// HTTPTarget says which hosts HTTP targets may call back. The rules,
// in order, for the URL's host and every address dialed: an allow entry
// permits; else a deny entry refuses; else public addresses are permitted
// and loopback, private, link-local (cloud metadata), documentation and
// other special addresses are refused. Entries are CIDRs, IPs, host names
// or ".domain". Both lists are empty by default; allow 127.0.0.0/8 and
// ::1/128 to reach hooks on this machine (local development).
type HTTPTarget struct {
	Allow []string `yaml:"allow"`
	Deny  []string `yaml:"deny"`
}

// ExecTarget lists the commands exec targets may run, by name.
type ExecTarget struct {
	Commands map[string]ExecCommand `yaml:"commands"`
}

// ExecCommand is one allow-listed command: an absolute path and its
// arguments, each a template whose {{name}} placeholders params fill (one
// argv element each, no shell).
type ExecCommand struct {
	Path string   `yaml:"path"`
	Args []string `yaml:"args"`
	Dir  string   `yaml:"dir"`
	Env  []string `yaml:"env"`
}

// KafkaTarget configures the producer of kafka targets; with no
// brokers, kafka targets are refused.
type KafkaTarget struct {
	Brokers  []string `yaml:"brokers"`
	ClientID string   `yaml:"client_id"`
}

// Jobs configures the jobs API. Tokens come from the environment:
// CRONSHEET_JOB_TOKENS (comma-separated) is the allow list of API clients'
// bearer tokens (empty: the API is open, for local use) and
// CRONSHEET_JOB_DENIED_TOKENS the deny list (revoked tokens).
type Jobs struct {
	AllowTokens []string `yaml:"-"`
	DenyTokens  []string `yaml:"-"`
	// Kafka, with brokers set, takes jobs from Topic (consumer group Group)
	// and answers on ResultTopic; both topics must exist.
	Kafka JobsKafka `yaml:"kafka"`
}

// JobsKafka is the Kafka intake of the jobs API.
type JobsKafka struct {
	Brokers     []string `yaml:"brokers"`
	Topic       string   `yaml:"topic"`
	ResultTopic string   `yaml:"result_topic"`
	Group       string   `yaml:"group"`
}

// Events is the lifecycle event sink: one JSON document per job
// transition, flow event and task run fire and end, as an Elasticsearch
// bulk request (kind http) or a Kafka record (kind kafka). Index, for
// http, is a template: {service} is jobs, tasks or flows and {date} the
// event's UTC day as 2006.01.02 (sink/index); Kafka's Topic is one topic
// for every event. Best effort: the store keeps every transition; the
// sink's queue drops its oldest events when the sink is down for long.
// CRONSHEET_EVENTS_URL, when set, replaces url (credentials stay out of the
// file).
type Events struct {
	// Kind is "" (off), http or kafka.
	Kind    string        `yaml:"kind"`
	URL     string        `yaml:"url"`
	Index   string        `yaml:"index"`
	Timeout time.Duration `yaml:"timeout"`
	Brokers []string      `yaml:"brokers"`
	Topic   string        `yaml:"topic"`
}

// Flow rate-limits callbacks per host with token buckets (jobs past
// the limit wait; none is dropped). Rate 0 = unlimited. Jobs' own "cc"
// groups limit their concurrency; the firer's delivery slots are the global
// worker pool. Flow's limits and http.allow/deny only seed the store's
// live settings on a store that has none (server/settings.go); after
// that the store's settings apply.
type Flow struct {
	// HostRate is the default rate (calls per second) for every host.
	HostRate  float64 `yaml:"host_rate"`
	HostBurst int     `yaml:"host_burst"`
	// Hosts overrides the rate of single hosts.
	Hosts map[string]FlowHost `yaml:"hosts"`
	// CCGroups sets the limit of jobs' cc groups by name, in place of the
	// limit each job asks.
	CCGroups map[string]int `yaml:"cc_groups"`
}

// FlowHost is one host's rate and burst.
type FlowHost struct {
	Rate  float64 `yaml:"rate"`
	Burst int     `yaml:"burst"`
}

// Metrics configures metrics: /metrics is always served (to viewers,
// or to anyone when Public is set); a statsd address turns on a push of
// the same figures.
type Metrics struct {
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

// Email configures the email channel.
type Email struct {
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

// SMS configures the SMS channel (Twilio).
type SMS struct {
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
