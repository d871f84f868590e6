package server

import (
	"cronsheet/config"
	"cronsheet/patrol"
	"cronsheet/store"
)

// buildRetention makes the retention patrol from the retention section,
// or none when its interval is 0. Ages are measured on the store's clock,
// so the nodes of one store agree on what is old.
func (s *Server) buildRetention() {
	r := s.cfg.Retention
	if r.Interval <= 0 {
		return
	}
	rule := func(c config.RetentionRule) patrol.RetentionRule {
		return patrol.RetentionRule{MaxAge: c.MaxAge, MaxCount: c.MaxCount}
	}
	m := s.metrics.NewRetentionMetrics()
	s.retention = patrol.NewRetention(s.logger, patrol.RetentionConfig{
		Interval: r.Interval, Batch: r.Batch, Pause: r.Pause, Now: s.clock.Now,
		Rules: map[store.RetentionKind]patrol.RetentionRule{
			store.RetainRuns: rule(r.Runs), store.RetainJobs: rule(r.Jobs), store.RetainOutbox: rule(r.Outbox),
			store.RetainAudit: rule(r.Audit), store.RetainFlowExecutions: rule(r.FlowExecutions),
		},
		Deleted: m.Deleted, Passed: m.Pass,
	}, s.store)
}
