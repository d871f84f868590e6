// Package metrics exposes cronsheet's Prometheus metrics on a registry of its
// own (never the global one) and can push the same figures to statsd.
//
// Every method is safe on a nil *Metrics, which does nothing, so callers may
// leave metrics off by passing nil. metrics imports no project package.
package metrics

import (
	"maps"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Namespace prefixes every metric name.
const Namespace = "cronsheet"

// Metrics holds cronsheet's collectors and their registry. Create it with
// [New]; a nil *Metrics is valid and records nothing.
type Metrics struct {
	reg            *prometheus.Registry
	fired          *prometheus.CounterVec
	triggerLag     prometheus.Histogram
	outcomes       *prometheus.CounterVec
	patrolDuration *prometheus.HistogramVec
	transitions    *prometheus.CounterVec
	armed          prometheus.Gauge
	queue          *queueCollector
	pushErrors     prometheus.Counter
}

// New returns Metrics registered on a new registry.
func New() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		fired: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "fires_total",
			Help: "Fires, by the kind of the target delivered to and trigger type.",
		}, []string{"kind", "trigger_type"}),
		triggerLag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "trigger_lag_seconds",
			Help:    "Delay between a slot's scheduled time and its fire.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10},
		}),
		outcomes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "run_outcomes_total",
			Help: "Runs that reached a final state, by target kind and that state.",
		}, []string{"kind", "state"}),
		patrolDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "patrol_duration_seconds",
			Help:    "Duration of one patrol pass, by patrol.",
			Buckets: []float64{.001, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"patrol"}),
		transitions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "job_transitions_total",
			Help: "Job state transitions, by new state.",
		}, []string{"state"}),
		armed: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: Namespace, Name: "armed_tasks",
			Help: "Tasks armed on this node.",
		}),
		queue: newQueueCollector(),
		pushErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: Namespace, Name: "statsd_push_errors_total",
			Help: "Statsd pushes that failed, in part or whole.",
		}),
	}
	m.reg.MustRegister(m.fired, m.triggerLag, m.outcomes, m.patrolDuration, m.transitions,
		m.armed, m.queue, m.pushErrors)
	return m
}

// Fired counts one fire to a target of kind (the target's kind, e.g. "http",
// or the channel of a task without targets), triggered by triggerType
// (e.g. "schedule", "manual").
func (m *Metrics) Fired(kind, triggerType string) {
	if m == nil {
		return
	}
	m.fired.WithLabelValues(kind, triggerType).Inc()
}

// TriggerLag records how late a fire was against its slot.
func (m *Metrics) TriggerLag(d time.Duration) {
	if m == nil {
		return
	}
	m.triggerLag.Observe(d.Seconds())
}

// Outcome counts one run to a target of kind that ended in the final state
// state (e.g. "done", "dead", "timeout"). Callers count each run once, when
// it becomes final, whoever makes it so; "accepted" is not an outcome.
func (m *Metrics) Outcome(kind, state string) {
	if m == nil {
		return
	}
	m.outcomes.WithLabelValues(kind, state).Inc()
}

// QueueDepth sets how many deliveries of group wait. A depth of 0 drops the
// group's series, so groups that come and go leave nothing behind.
func (m *Metrics) QueueDepth(group string, n int) {
	if m == nil {
		return
	}
	m.queue.set(group, n)
}

// SetQueueDepthFunc sets a function called at each scrape (and statsd push)
// for the queue depth of every group, e.g. from admission.Stats.QueueDepths.
// Its figures take precedence over those given to QueueDepth. nil removes it.
func (m *Metrics) SetQueueDepthFunc(fn func() map[string]int) {
	if m == nil {
		return
	}
	m.queue.setFunc(fn)
}

// PatrolDuration records the duration of one pass of the named patrol.
func (m *Metrics) PatrolDuration(patrol string, d time.Duration) {
	if m == nil {
		return
	}
	m.patrolDuration.WithLabelValues(patrol).Observe(d.Seconds())
}

// JobTransition counts one job moving to state.
func (m *Metrics) JobTransition(state string) {
	if m == nil {
		return
	}
	m.transitions.WithLabelValues(state).Inc()
}

// Armed sets the number of tasks armed on this node.
func (m *Metrics) Armed(n int) {
	if m == nil {
		return
	}
	m.armed.Set(float64(n))
}

// Handler returns the /metrics handler of the registry. On a nil *Metrics
// it answers 404.
func (m *Metrics) Handler() http.Handler {
	if m == nil {
		return http.NotFoundHandler()
	}
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// queueCollector is the queue depth gauge: values set one by one, overlaid
// by a function evaluated at collection.
type queueCollector struct {
	desc *prometheus.Desc

	mu     sync.Mutex
	depths map[string]int
	fn     func() map[string]int
}

func newQueueCollector() *queueCollector {
	return &queueCollector{
		desc: prometheus.NewDesc(prometheus.BuildFQName(Namespace, "", "queue_depth"),
			"Deliveries waiting, by concurrency group.", []string{"group"}, nil),
		depths: map[string]int{},
	}
}

func (q *queueCollector) set(group string, n int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if n == 0 {
		delete(q.depths, group)
		return
	}
	q.depths[group] = n
}

func (q *queueCollector) setFunc(fn func() map[string]int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.fn = fn
}

// Describe implements prometheus.Collector.
func (q *queueCollector) Describe(ch chan<- *prometheus.Desc) { ch <- q.desc }

// Collect implements prometheus.Collector. fn runs without q.mu held, so it
// may take its own locks.
func (q *queueCollector) Collect(ch chan<- prometheus.Metric) {
	q.mu.Lock()
	depths := maps.Clone(q.depths)
	fn := q.fn
	q.mu.Unlock()
	if fn != nil {
		maps.Copy(depths, fn())
	}
	for group, n := range depths {
		ch <- prometheus.MustNewConstMetric(q.desc, prometheus.GaugeValue, float64(n), group)
	}
}
