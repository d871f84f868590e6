package task_test

import (
	"errors"
	"testing"

	"cronsheet/task"
)

func TestTargetProbeValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, url string
		probe     *task.TargetProbe
		kind      task.Channel
		field     string // "" = valid
	}{
		{name: "Minute", url: "https://x.example/h", probe: &task.TargetProbe{Interval: "1m"}},
		{name: "GETWithPath", url: "https://x.example/{{id}}", probe: &task.TargetProbe{Interval: "10s", Method: "GET", Path: "/up?x=1"}},
		{name: "NoInterval", url: "https://x.example/h", probe: &task.TargetProbe{}, field: "probe.interval"},
		{name: "NotADuration", url: "https://x.example/h", probe: &task.TargetProbe{Interval: "often"}, field: "probe.interval"},
		{name: "TooOften", url: "https://x.example/h", probe: &task.TargetProbe{Interval: "9s"}, field: "probe.interval"},
		{name: "TooRare", url: "https://x.example/h", probe: &task.TargetProbe{Interval: "25h"}, field: "probe.interval"},
		{name: "Method", url: "https://x.example/h", probe: &task.TargetProbe{Interval: "1m", Method: "POST"}, field: "probe.method"},
		{name: "TemplateNeedsPath", url: "https://x.example/{{id}}", probe: &task.TargetProbe{Interval: "1m"}, field: "probe.path"},
		{name: "RelativePath", url: "https://x.example/h", probe: &task.TargetProbe{Interval: "1m", Path: "up"}, field: "probe.path"},
		{name: "TemplatePath", url: "https://x.example/h", probe: &task.TargetProbe{Interval: "1m", Path: "/{{id}}"}, field: "probe.path"},
		{name: "NotHTTP", kind: task.ChannelExec, probe: &task.TargetProbe{Interval: "1m"}, field: "probe"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tg := &task.Target{ID: "t", Kind: task.ChannelHTTP, State: task.TargetRunning, Probe: tt.probe,
				HTTP: &task.HTTPTarget{Method: "POST", URL: tt.url}}
			if tt.kind == task.ChannelExec {
				tg.Kind, tg.HTTP, tg.Exec = task.ChannelExec, nil, &task.ExecTarget{Command: "x"}
			}
			err := tg.Validate()
			var ve *task.ValidationError
			switch {
			case tt.field == "" && err != nil:
				t.Errorf("Validate = %v, want valid", err)
			case tt.field != "" && (!errors.As(err, &ve) || ve.Field != tt.field):
				t.Errorf("Validate = %v, want a problem with %s", err, tt.field)
			}
		})
	}
}
