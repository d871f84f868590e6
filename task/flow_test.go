package task

import (
	"errors"
	"testing"
)

func testFlow() *Flow {
	return &Flow{ID: "nightly", Start: "extract", Steps: []*Step{
		{ID: "extract", Targets: []string{"hook"}, On: map[Outcome][]string{OutcomeSuccess: {"load"}, OutcomeFailure: {"alert"}}},
		{ID: "load", Targets: []string{"hook"}},
		{ID: "alert", Targets: []string{"mail-ops"}},
	}}
}

func TestFlowValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		edit  func(f *Flow)
		field string
	}{
		{"Valid", func(*Flow) {}, ""},
		{"NoStart", func(f *Flow) { f.Start = "" }, ""},
		{"UnknownStart", func(f *Flow) { f.Start = "x" }, "start"},
		{"UnknownEdge", func(f *Flow) { f.Steps[0].On[OutcomeTimeout] = []string{"nope"} }, "steps[0].on.timeout[0]"},
		{"NoTargets", func(f *Flow) { f.Steps[1].Targets = nil }, "steps[1].targets"},
		{"BadResult", func(f *Flow) { f.Steps[2].Result = "most" }, "steps[2].result"},
		{"BadOutcome", func(f *Flow) { f.Steps[2].On = map[Outcome][]string{"maybe": {"load"}} }, "steps[2].on"},
		{"DuplicateStep", func(f *Flow) { f.Steps[2].ID = "load" }, "steps[2].id"},
		{"CycleWithoutDepth", func(f *Flow) { f.Steps[1].On = map[Outcome][]string{OutcomeSuccess: {"extract"}} }, "max_depth"},
		{"CycleWithDepth", func(f *Flow) {
			f.Steps[1].On = map[Outcome][]string{OutcomeSuccess: {"extract"}}
			f.MaxDepth = 5
		}, ""},
		{"UnreachableCycle", func(f *Flow) { f.Steps[2].On = map[Outcome][]string{OutcomeSuccess: {"alert"}}; f.Start = "load" }, ""},
		{"BadTimeout", func(f *Flow) { f.Steps[0].Timeout = -1 }, "steps[0].timeout"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := testFlow()
			tt.edit(f)
			err := f.Validate()
			var ve *ValidationError
			switch {
			case tt.field == "" && err != nil:
				t.Fatalf("Validate() = %v, want nil", err)
			case tt.field != "" && (!errors.As(err, &ve) || ve.Field != tt.field):
				t.Fatalf("Validate() = %v, want an error on %s", err, tt.field)
			}
		})
	}
}

func TestStepOutcome(t *testing.T) {
	t.Parallel()
	two := []string{"a", "b"}
	okFail := []StepTargetRun{{Target: "a", State: RunDone}, {Target: "b", State: RunDead}}
	tests := []struct {
		name string
		mode ResultMode
		runs []StepTargetRun
		want Outcome
	}{
		{"AllOneFailing", ResultAll, okFail, OutcomeFailure},
		{"AnyOneFailing", ResultAny, okFail, OutcomeSuccess},
		{"AllPending", ResultAll, []StepTargetRun{{Target: "a", State: RunDone}, {Target: "b", State: RunAccepted}}, ""},
		{"AnyAllFailed", ResultAny, []StepTargetRun{{Target: "a", State: RunDead}, {Target: "b", State: RunTimeout}}, OutcomeTimeout},
		{"AnyWaiting", ResultAny, []StepTargetRun{{Target: "a", State: RunDead}}, ""},
		{"AllDone", ResultAll, []StepTargetRun{{Target: "a", State: RunDone}, {Target: "b", State: RunDone}}, OutcomeSuccess},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := StepOutcome(tt.mode, two, tt.runs); got != tt.want {
				t.Fatalf("StepOutcome = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRenderStepParams(t *testing.T) {
	t.Parallel()
	got := RenderStepParams(map[string]string{"msg": "{{prev.status}}: {{prev.output}} for {{params.day}}"},
		map[string]string{"day": "mon"}, OutcomeSuccess, "42 rows")
	if got["msg"] != "success: 42 rows for mon" || got["day"] != "mon" {
		t.Fatalf("RenderStepParams = %v", got)
	}
}
