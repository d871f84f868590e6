package server

import (
	"cronsheet/sink"
	"cronsheet/task"
)

// onFire hears each run a fire records (fire.Config.OnFire): its fired
// event goes to the event sink.
func (s *Server) onFire(t *task.Task, _ *task.Target, r task.Run) {
	if s.events != nil && t.Job == nil {
		s.events.PublishRun(runEvent(sink.EventRunFired, t, r))
	}
}

// sendRunEnd sends the end of a task's run to the event sink when r is
// final. A job's runs are not sent as task runs: the job's transitions
// (sink.EventType) carry them.
func (s *Server) sendRunEnd(t *task.Task, r task.Run) {
	if s.events != nil && t.Job == nil && r.State.Final() {
		s.events.PublishRun(runEvent(sink.EventRunFinal, t, r))
	}
}

// runEvent is the sink event of r, a run of t: fired at its fire, final
// at its end (with the time from fire to end).
func runEvent(event string, t *task.Task, r task.Run) sink.RunEvent {
	ev := sink.RunEvent{At: r.FiredAt, Event: event, TaskID: r.TaskID, Title: t.Params[task.ParamTitle],
		TriggerID: r.TriggerID, TriggerType: string(r.TriggerType), Slot: r.Slot, Target: r.Target,
		State: string(r.State), Attempt: r.Attempt, Error: r.Error, Node: r.Node}
	if event == sink.EventRunFinal {
		ev.At = r.FinishedAt
		if ev.At.IsZero() {
			ev.At = r.FiredAt
		}
		ev.Duration = max(ev.At.Sub(r.FiredAt), 0)
	}
	return ev
}
