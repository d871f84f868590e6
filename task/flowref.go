package task

import "strings"

// FlowTargetPrefix starts a task target that names a flow: a task whose
// targets list "flow:<id>" starts an execution of flow <id> at each fire,
// with the fire's params as the trigger's params.
const FlowTargetPrefix = "flow:"

// FlowState is a flow's state as the API shows it.
type FlowState string

// Flow states: running while the flow has an unfinished execution.
const (
	FlowIdle    FlowState = "idle"
	FlowRunning FlowState = "running"
)

// FlowTargetID returns the task target naming flow flowID.
func FlowTargetID(flowID string) string { return FlowTargetPrefix + flowID }

// FlowOfTarget returns the flow a task target names, and whether it names
// one.
func FlowOfTarget(id string) (string, bool) {
	return strings.CutPrefix(id, FlowTargetPrefix)
}

// ValidTaskTarget checks one entry of a task's targets: a target id, or
// "flow:" and a flow id.
func ValidTaskTarget(id string) error {
	if flowID, ok := FlowOfTarget(id); ok {
		if err := ValidTargetID(flowID); err != nil {
			return Invalid("id", "flow target %q: %s", Truncate(id, 80), err.(*ValidationError).Msg)
		}
		return nil
	}
	return ValidTargetID(id)
}

// FlowTarget returns the target a "flow:<id>" task target stands for: a
// running builtin start_flow of that flow. It is made, never stored, so it
// needs no setup and cannot be paused; nil when id names no flow.
func FlowTarget(id string) *Target {
	flowID, ok := FlowOfTarget(id)
	if !ok || ValidTargetID(flowID) != nil {
		return nil
	}
	return &Target{ID: id, Name: "flow " + flowID, Kind: ChannelBuiltin, State: TargetRunning,
		Builtin: &BuiltinTarget{Action: BuiltinStartFlow, Flows: []string{flowID}}}
}
