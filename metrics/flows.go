package metrics

import "github.com/prometheus/client_golang/prometheus"

// FlowMetrics counts task flow executions and step runs. Create it with
// [Metrics.NewFlowMetrics]; a nil *FlowMetrics records nothing.
type FlowMetrics struct {
	executions *prometheus.CounterVec
	steps      *prometheus.CounterVec
}

// NewFlowMetrics registers the flow metrics on m's registry and returns
// them; call it once per Metrics. On a nil m it returns nil.
func (m *Metrics) NewFlowMetrics() *FlowMetrics {
	if m == nil {
		return nil
	}
	f := &FlowMetrics{
		executions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "flow_executions_total",
			Help: "Finished flow executions, by final state (success, failure, timeout, interrupted).",
		}, []string{"state"}),
		steps: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "flow_step_outcomes_total",
			Help: "Finished flow step runs, by outcome (success, failure, timeout, interrupted).",
		}, []string{"outcome"}),
	}
	m.reg.MustRegister(f.executions, f.steps)
	return f
}

// ExecutionFinished counts one execution that ended in state.
func (f *FlowMetrics) ExecutionFinished(state string) {
	if f == nil {
		return
	}
	f.executions.WithLabelValues(state).Inc()
}

// StepFinished counts one step run that ended with outcome.
func (f *FlowMetrics) StepFinished(outcome string) {
	if f == nil {
		return
	}
	f.steps.WithLabelValues(outcome).Inc()
}
