package config

import (
	"strings"
	"testing"
	"time"
)

func TestRetentionDefaultsAndOverride(t *testing.T) {
	t.Parallel()
	cfg, err := Load(writeConfig(t, "retention:\n  runs: {max_age: 168h}\n  audit: {max_count: 0}\n  batch: 100\n"), noEnv)
	if err != nil {
		t.Fatal(err)
	}
	r := cfg.Retention
	if r.Runs.MaxAge != 7*day || r.Runs.MaxCount != 1_000_000 {
		t.Errorf("runs = %+v, want max_age 168h and the default max_count kept", r.Runs)
	}
	if r.Audit.MaxAge != 180*day || r.Audit.MaxCount != 0 {
		t.Errorf("audit = %+v, want the default age and no count bound", r.Audit)
	}
	if r.Batch != 100 || r.Interval != time.Minute || r.Jobs.MaxAge != 14*day || r.Outbox.MaxAge != 7*day ||
		r.FlowExecutions.MaxCount != 100_000 {
		t.Errorf("retention = %+v", r)
	}
}

func TestRetentionErrorsNameTheKey(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ body, want string }{
		{"retention: {interval: 10ms}\n", "retention.interval"},
		{"retention: {batch: 0}\n", "retention.batch"},
		{"retention: {batch: 20000}\n", "retention.batch"},
		{"retention: {pause: -1s}\n", "retention.pause"},
		{"retention: {runs: {max_age: -1h}}\n", "retention.runs.max_age"},
		{"retention: {jobs: {max_age: 10s}}\n", "retention.jobs.max_age"},
		{"retention: {outbox: {max_count: -1}}\n", "retention.outbox.max_count"},
		{"retention: {flow_executions: {max_count: 2000000000}}\n", "retention.flow_executions.max_count"},
	} {
		_, err := Load(writeConfig(t, tc.body), noEnv)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: error %v, want one naming %s", tc.body, err, tc.want)
		}
	}
	if _, err := Load(writeConfig(t, "retention: {interval: 0s}\n"), noEnv); err != nil {
		t.Errorf("interval 0 (off): %v", err)
	}
}
