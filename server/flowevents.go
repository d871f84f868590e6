package server

import (
	"context"

	"cronsheet/metrics"
	"cronsheet/sink"
	"cronsheet/task"
)

// flowEvents sends the ends of flow executions and step runs to /metrics
// and the event sink (flows.Observer).
type flowEvents struct {
	metrics *metrics.FlowMetrics // nil: not counted
	sink    *sink.Sink           // nil: not sent
}

// StepFinished counts sr's outcome and sends it.
func (f *flowEvents) StepFinished(_ context.Context, x *task.Execution, sr *task.StepRun) {
	f.metrics.StepFinished(string(sr.Outcome))
	if f.sink != nil {
		f.sink.PublishFlow(sink.FlowEvent{At: sr.FinishedAt, Event: sink.EventFlowStep, FlowID: x.FlowID,
			ExecutionID: x.ID, TriggerID: x.TriggerID, Step: sr.Step, StepRun: sr.Index, State: string(sr.Outcome)})
	}
}

// ExecutionFinished counts x's final state and sends it.
func (f *flowEvents) ExecutionFinished(_ context.Context, x *task.Execution) {
	f.metrics.ExecutionFinished(string(x.State))
	if f.sink != nil {
		f.sink.PublishFlow(sink.FlowEvent{At: x.FinishedAt, Event: sink.EventFlowExecution, FlowID: x.FlowID,
			ExecutionID: x.ID, TriggerID: x.TriggerID, State: string(x.State), Reason: x.Reason})
	}
}
