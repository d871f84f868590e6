package flows

import (
	"strconv"
	"time"

	"cronsheet/task"
)

// StepTaskID is the id of the hidden task step stepID of f fires through.
// The flow's version is part of it: an edited flow gets new step tasks,
// and executions keep firing the version they started with.
func StepTaskID(f *task.Flow, stepID string) string {
	return "flow." + f.ID + ".v" + strconv.FormatInt(f.Version, 10) + "." + stepID
}

// stepTask is the hidden task of step s of f: stopped (never armed by a
// schedule; a trigger still fires it), enabled, the step's targets and
// params, one attempt plus the default retries within the step timeout.
func stepTask(f *task.Flow, s *task.Step) *task.Task {
	ttl := min(s.TimeoutDuration(), task.MaxTTL)
	return &task.Task{
		TaskID: StepTaskID(f, s.ID), Scenario: Scenario, TaskType: task.ChannelHTTP,
		TaskPara: "flow " + f.ID + " step " + s.ID, Params: s.Params, ExecuteType: task.Once,
		TTL: min(ttl, time.Duration(task.DefaultTTL)), MaxRetries: task.DefaultRetries, Misfire: task.MisfireOnce,
		Targets: s.Targets, State: task.StateStopped, IsEnable: 1,
	}
}

// stepSubject is the subject of step stepID's deliveries in f (an email's
// Subject, an SMS's first line): the flow and step named, after the title
// when the step run has one (the step's own params, or the trigger's,
// such as the row that started the flow). Without it a step's email went
// out with an empty subject unless something set a title.
func stepSubject(f *task.Flow, stepID, title string) string {
	name := "flow " + f.ID + ", step " + stepID
	if title == "" {
		return name
	}
	return task.Truncate(title+" ("+name+")", task.MaxParamValue)
}
