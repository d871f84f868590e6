package config

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Default returns the configuration used for keys the file omits.
func Default() Config {
	host, _ := os.Hostname()
	return Config{
		Listen:          "127.0.0.1:8080",
		NodeID:          cmpString(host, "node"),
		Store:           defaultStore(),
		Patrol:          Patrol{Interval: time.Second, Lease: 30 * time.Second, Batch: 500},
		Retention:       defaultRetention(),
		Email:           Email{Mode: ModeOutbox, Port: 587, TLS: "starttls", Timeout: 30 * time.Second},
		SMS:             SMS{Mode: ModeOutbox, Timeout: 30 * time.Second},
		Fire:            Fire{BackoffBase: time.Second, BackoffMax: 5 * time.Minute, Workers: 256, ArmWindow: 2 * time.Minute},
		Metrics:         Metrics{StatsdPrefix: "cronsheet", StatsdEvery: 10 * time.Second},
		Auth:            AuthRequired,
		Session:         Session{Idle: 2 * time.Hour, Max: 24 * time.Hour},
		LogLevel:        "info",
		ShutdownTimeout: 10 * time.Second,
	}
}

// cmpString returns s, or def when s is empty.
func cmpString(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Load reads path over the defaults, takes secrets from getenv and
// validates the result. Errors name the offending key.
func Load(path string, getenv func(string) string) (Config, error) {
	cfg := Default()
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
