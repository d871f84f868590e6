package task

import (
	"fmt"
	"strings"
)

// CheckStepRecipient checks that step s (steps[i] of its flow) can reach
// target t: an email or SMS target has no recipient of its own, so the
// step's params must carry one in "to" — an address, or a template such
// as {{params.to}} that the trigger's params fill. Without it every run of
// the step fails, so the flow is refused at save, naming
// steps[i].params.to. Every door that writes flows (the flows API, and
// cronsheet apply's check of a file) calls it.
func CheckStepRecipient(i int, s *Step, t *Target) error {
	if t == nil || (t.Kind != ChannelEmail && t.Kind != ChannelSMS) {
		return nil
	}
	field := fmt.Sprintf("steps[%d].params.to", i)
	to := strings.TrimSpace(s.Params[ParamTo])
	if to == "" {
		return Invalid(field, "required: step %q sends through %s target %q, which has no recipient of its own; "+
			"give an address, or {{params.to}} to take it from the trigger's params", Truncate(s.ID, 100), t.Kind, t.ID)
	}
	if strings.Contains(to, "{{") {
		return nil
	}
	check := CheckEmail
	if t.Kind == ChannelSMS {
		check = CheckPhone
	}
	if err := check(to); err != nil {
		return Invalid(field, "step %q, target %q: %v", Truncate(s.ID, 100), t.ID, err)
	}
	return nil
}
