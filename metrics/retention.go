package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// RetentionMetrics counts what the retention patrol deletes. Create it
// with [Metrics.NewRetentionMetrics]; a nil *RetentionMetrics records
// nothing.
type RetentionMetrics struct {
	deleted *prometheus.CounterVec
	pass    prometheus.Gauge
}

// NewRetentionMetrics registers the retention metrics on m's registry and
// returns them; call it once per Metrics. On a nil m it returns nil.
func (m *Metrics) NewRetentionMetrics() *RetentionMetrics {
	if m == nil {
		return nil
	}
	r := &RetentionMetrics{
		deleted: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "retention_deleted_total",
			Help: "Items the retention patrol deleted on this node, by kind (runs, jobs, outbox, audit, flow_executions).",
		}, []string{"kind"}),
		pass: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: Namespace, Name: "retention_last_pass_seconds",
			Help: "How long this node's last retention pass took, all kinds together.",
		}),
	}
	m.reg.MustRegister(r.deleted, r.pass)
	return r
}

// Deleted counts n items of kind deleted.
func (r *RetentionMetrics) Deleted(kind string, n int) {
	if r == nil || n <= 0 {
		return
	}
	r.deleted.WithLabelValues(kind).Add(float64(n))
}

// Pass records how long a whole pass took.
func (r *RetentionMetrics) Pass(d time.Duration) {
	if r == nil {
		return
	}
	r.pass.Set(d.Seconds())
}
