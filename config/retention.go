package config

import (
	"fmt"
	"time"
)

// Retention bounds what the store keeps of each kind (README,
// "Retention"). The retention patrol deletes, in batches, the items of a
// kind that are no longer live and are older than MaxAge or beyond the
// newest MaxCount. A zero MaxAge or MaxCount turns that rule off; a kind
// with both zero is kept for ever.
type Retention struct {
	// Interval between passes (default 1m; 0s turns retention off; else
	// 1s..24h). The first pass comes one interval after start.
	Interval time.Duration `yaml:"interval"`
	// Batch bounds the items one short write transaction examines
	// (default 500, 1..10000).
	Batch int `yaml:"batch"`
	// Pause is the rest between two batches, so a long pass never holds
	// the store's writes for long (default 20ms, 0..10s).
	Pause time.Duration `yaml:"pause"`
	// Runs: finished runs (default 30 days, 1,000,000).
	Runs RetentionRule `yaml:"runs"`
	// Jobs: finished jobs with their events, keys and runs (default 14
	// days, 1,000,000). A job's key is free again once the job is gone.
	Jobs RetentionRule `yaml:"jobs"`
	// Outbox: recorded messages (default 7 days, 100,000).
	Outbox RetentionRule `yaml:"outbox"`
	// Audit: the audit trail (default 180 days, 1,000,000).
	Audit RetentionRule `yaml:"audit"`
	// FlowExecutions: finished flow executions (default 30 days, 100,000).
	FlowExecutions RetentionRule `yaml:"flow_executions"`
}

// RetentionRule bounds one kind.
type RetentionRule struct {
	// MaxAge deletes what is older (0 = no age bound; else at least 1m).
	MaxAge time.Duration `yaml:"max_age"`
	// MaxCount keeps only the newest MaxCount (0 = no count bound).
	MaxCount int `yaml:"max_count"`
}

const day = 24 * time.Hour

// defaultRetention is what keeps a busy node's store bounded.
func defaultRetention() Retention {
	return Retention{Interval: time.Minute, Batch: 500, Pause: 20 * time.Millisecond,
		Runs:           RetentionRule{MaxAge: 30 * day, MaxCount: 1_000_000},
		Jobs:           RetentionRule{MaxAge: 14 * day, MaxCount: 1_000_000},
		Outbox:         RetentionRule{MaxAge: 7 * day, MaxCount: 100_000},
		Audit:          RetentionRule{MaxAge: 180 * day, MaxCount: 1_000_000},
		FlowExecutions: RetentionRule{MaxAge: 30 * day, MaxCount: 100_000},
	}
}

// Bounds on retention values.
const (
	maxRetentionAge   = 100 * 365 * day
	maxRetentionCount = 1_000_000_000
)

// validate checks the retention keys, naming the offending one.
func (r *Retention) validate() error {
	if r.Interval != 0 && (r.Interval < time.Second || r.Interval > day) {
		return fmt.Errorf("retention.interval: must be 0 (off) or 1s to 24h, got %s", r.Interval)
	}
	if r.Batch < 1 || r.Batch > 10_000 {
		return fmt.Errorf("retention.batch: must be 1 to 10000, got %d", r.Batch)
	}
	if r.Pause < 0 || r.Pause > 10*time.Second {
		return fmt.Errorf("retention.pause: must be 0 to 10s, got %s", r.Pause)
	}
	for _, k := range []struct {
		name string
		rule RetentionRule
	}{{"runs", r.Runs}, {"jobs", r.Jobs}, {"outbox", r.Outbox}, {"audit", r.Audit}, {"flow_executions", r.FlowExecutions}} {
		if a := k.rule.MaxAge; a != 0 && (a < time.Minute || a > maxRetentionAge) {
			return fmt.Errorf("retention.%s.max_age: must be 0 (no age bound) or 1m to 100 years, got %s", k.name, a)
		}
		if c := k.rule.MaxCount; c < 0 || c > maxRetentionCount {
			return fmt.Errorf("retention.%s.max_count: must be 0 (no count bound) to %d, got %d", k.name, maxRetentionCount, c)
		}
	}
	return nil
}
