package metrics

import "github.com/prometheus/client_golang/prometheus"

// CountSinkEvents registers the event sink's figures, read at each scrape
// (and statsd push): cronsheet_sink_dropped_total from dropped, the events
// the sink gave up on (pushed out of its full queue, refused for good by
// the far end, or unsent at shutdown). Call it once per Metrics; nothing
// on a nil m.
func (m *Metrics) CountSinkEvents(dropped func() int64) {
	if m == nil {
		return
	}
	m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Namespace: Namespace, Name: "sink_dropped_total",
		Help: "Lifecycle events the event sink gave up on: pushed out of its full queue, refused by the far end, or unsent at shutdown.",
	}, func() float64 { return float64(dropped()) }))
}
