package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func noEnv(string) string { return "" }

func TestLoadConfigShipped(t *testing.T) {
	t.Parallel()
	cfg, err := Load("../config.yaml", noEnv)
	if err != nil {
		t.Fatalf("shipped config.yaml: %v", err)
	}
	if cfg.Listen != "127.0.0.1:8080" || cfg.Store.Driver != "sqlite" || cfg.Email.Mode != ModeOutbox ||
		cfg.SMS.Mode != ModeOutbox || cfg.Patrol.Interval != time.Second || cfg.Patrol.Lease != 30*time.Second || cfg.Fire.Workers != 256 {
		t.Errorf("shipped config = %+v", cfg)
	}
}

func TestLoadConfigDefaultsAndSecrets(t *testing.T) {
	t.Parallel()
	env := map[string]string{"CRONSHEET_SMTP_PASSWORD": "s3cret", "TWILIO_AUTH_TOKEN": "tok"}
	cfg, err := Load(writeConfig(t, "sms: {mode: send, account_sid: AC1, from: '+15005550006'}\n"),
		func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Email.Password != "s3cret" || cfg.SMS.AuthToken != "tok" {
		t.Errorf("secrets not taken from the environment: %+v %+v", cfg.Email, cfg.SMS)
	}
	if cfg.NodeID == "" || cfg.Store.Path != "./data/cronsheet.db" || cfg.Patrol.Batch != 500 {
		t.Errorf("defaults not applied: %+v", cfg)
	}
	empty, err := Load(writeConfig(t, ""), noEnv)
	if err != nil || empty.Listen != "127.0.0.1:8080" {
		t.Errorf("empty file: %+v, %v; want all defaults", empty, err)
	}
}

func TestLoadConfigErrorsNameTheKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body, want string
	}{
		{"UnknownKey", "listen: 127.0.0.1:1\nlisten_addr: x\n", "listen_addr"},
		{"BadListen", "listen: nowhere\n", "listen:"},
		{"BadDriver", "store: {driver: redis}\n", "store.driver"},
		{"EmptyPath", "store: {driver: sqlite, path: ''}\n", "store.path"},
		{"BadInterval", "patrol: {interval: 1h}\n", "patrol.interval"},
		{"ShortLease", "patrol: {interval: 1s, lease: 2s}\n", "patrol.lease"},
		{"NoWorkers", "fire: {workers: 0}\n", "fire.workers"},
		{"TooManyWorkers", "fire: {workers: 20000}\n", "fire.workers"},
		{"BadBatch", "patrol: {batch: 0}\n", "patrol.batch"},
		{"BadDuration", "patrol: {interval: soon}\n", "soon"},
		{"BadLogLevel", "log_level: loud\n", "log_level"},
		{"DeclaredMissing", "declared: /nonexistent/declared.yaml\n", "declared"},
		{"UnknownIndexPlaceholder", "events: {kind: http, url: 'http://es:9200/_bulk', index: 'cronsheet-{month}'}\n", "events.index: unknown placeholder {month}"},
		{"UpperCaseIndex", "events: {index: Cronsheet}\n", "events.index"},
		{"BadEmailMode", "email: {mode: pigeon}\n", "email.mode"},
		{"EmailSendNeedsHost", "email: {mode: send, host: ''}\n", "email.host"},
		{"EmailBadTLS", "email: {mode: send, host: h, from: a@b.c, tls: maybe}\n", "email.tls"},
		{"SMSNeedsToken", "sms: {mode: send, account_sid: AC1, from: '+15005550006'}\n", "TWILIO_AUTH_TOKEN"},
		{"SMSNeedsSID", "sms: {mode: send, from: '+15005550006'}\n", "sms.account_sid"},
		{"BadScenario", "scenarios: [{name: 'no spaces', collection: x}]\n", "scenarios[0]"},
		{"NotYAML", "listen: [\n", "config"},
		{"BadCCGroupLimit", "flow: {cc_groups: {billing: 0}}\n", "flow.cc_groups"},
		{"NoURI", "store: {driver: mongo, database: x}\n", "store.uri"},
		{"BadURI", "store: {driver: mongo, uri: 'http://h/', database: x}\n", "store.uri"},
		{"NoDatabase", "store: {driver: mongo, uri: 'mongodb://h/'}\n", "store.database"},
		{"BadDatabase", "store: {driver: mongo, uri: 'mongodb://h/', database: 'a.b'}\n", "store.database"},
		{"ShortConnect", "store: {driver: mongo, uri: 'mongodb://h/', database: x, connect_timeout: 1ms}\n", "store.connect_timeout"},
		{"BadWriteConcern", "store: {driver: mongo, uri: 'mongodb://h/', database: x, write_concern: all}\n", "store.write_concern"},
		{"BadReadPref", "store: {driver: mongo, uri: 'mongodb://h/', database: x, read_preference: any}\n", "store.read_preference"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Load(writeConfig(t, tt.body), noEnv)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Load(%q) error = %v, want it to name %q", tt.body, err, tt.want)
			}
		})
	}
}

func TestLoadConfigMissingFile(t *testing.T) {
	t.Parallel()
	if _, err := Load(filepath.Join(t.TempDir(), "nope.yaml"), noEnv); err == nil {
		t.Error("missing file accepted")
	}
}
