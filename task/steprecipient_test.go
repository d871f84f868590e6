package task_test

import (
	"errors"
	"testing"

	"cronsheet/task"
)

func TestCheckStepRecipient(t *testing.T) {
	t.Parallel()
	email := &task.Target{ID: "mail", Kind: task.ChannelEmail}
	sms := &task.Target{ID: "text", Kind: task.ChannelSMS}
	hook := &task.Target{ID: "hook", Kind: task.ChannelHTTP}
	tests := []struct {
		name   string
		target *task.Target
		to     string
		ok     bool
	}{
		{"EmailAddress", email, "ann@example.com", true},
		{"EmailTemplate", email, "{{params.to}}", true},
		{"EmailNone", email, "", false},
		{"EmailBlank", email, "  ", false},
		{"EmailBad", email, "ann", false},
		{"SMSNumber", sms, "+8613800138000", true},
		{"SMSEmail", sms, "ann@example.com", false},
		{"HTTPNone", hook, "", true},
		{"Unknown", nil, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := &task.Step{ID: "s", Targets: []string{"x"}}
			if tt.to != "" {
				s.Params = map[string]string{task.ParamTo: tt.to}
			}
			err := task.CheckStepRecipient(2, s, tt.target)
			var ve *task.ValidationError
			switch {
			case tt.ok && err != nil:
				t.Errorf("CheckStepRecipient = %v, want nil", err)
			case !tt.ok && (!errors.As(err, &ve) || ve.Field != "steps[2].params.to"):
				t.Errorf("CheckStepRecipient = %v, want a ValidationError naming steps[2].params.to", err)
			}
		})
	}
}
