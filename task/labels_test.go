package task

import (
	"errors"
	"strings"
	"testing"
)

func TestValidateLabels(t *testing.T) {
	t.Parallel()
	many := map[string]string{}
	for i := range MaxLabels + 1 {
		many[string(rune('a'+i))] = "x"
	}
	tests := []struct {
		name   string
		labels map[string]string
		field  string // "" = valid
	}{
		{"none", nil, ""},
		{"marker", map[string]string{"managed_by": "team-a", "declared_secrets": "$2a$10$abc"}, ""},
		{"too many", many, "labels"},
		{"dot in key", map[string]string{"a.b": "x"}, "labels"},
		{"dollar key", map[string]string{"$set": "x"}, "labels"},
		{"empty key", map[string]string{"": "x"}, "labels"},
		{"long value", map[string]string{"k": strings.Repeat("x", MaxLabelValueLen+1)}, "labels.k"},
		{"two lines", map[string]string{"k": "a\nb"}, "labels.k"},
		{"chinese value", map[string]string{"team": "值班"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := ValidateLabels(tt.labels)
			var ve *ValidationError
			switch {
			case tt.field == "" && err != nil:
				t.Fatalf("ValidateLabels = %v; want nil", err)
			case tt.field != "" && (!errors.As(err, &ve) || ve.Field != tt.field):
				t.Fatalf("ValidateLabels = %v; want a ValidationError naming %s", err, tt.field)
			}
		})
	}
}

func TestTargetAndFlowValidateLabels(t *testing.T) {
	t.Parallel()
	bad := map[string]string{"a.b": "x"}
	tg := &Target{ID: "t1", Kind: ChannelExec, State: TargetRunning, Exec: &ExecTarget{Command: "c"}, Labels: bad}
	if err := tg.Validate(); err == nil || !strings.Contains(err.Error(), "labels") {
		t.Errorf("target Validate = %v; want a labels error", err)
	}
	f := &Flow{ID: "f1", Start: "s", Steps: []*Step{{ID: "s", Targets: []string{"t1"}}}, Labels: bad}
	if err := f.Validate(); err == nil || !strings.Contains(err.Error(), "labels") {
		t.Errorf("flow Validate = %v; want a labels error", err)
	}
}
