package task

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// TestAdmitMatrix is the state matrix of design note 001 (docs/SEEDS.md): every task state ×
// target state × trigger type, and whether the trigger reaches the target.
func TestAdmitMatrix(t *testing.T) {
	t.Parallel()
	const (
		yes = ""
		no  = "rejected"
	)
	type row struct {
		task    State
		target  TargetState
		trigger TriggerType
		want    string // yes, or the start of the reason
	}
	var cases []row
	for _, ts := range []State{StateRunning, StateStopped, StateClosed} {
		for _, gs := range []TargetState{TargetRunning, TargetPaused, TargetPreset} {
			for _, tt := range []TriggerType{TriggerSchedule, TriggerMisfire, TriggerManual, TriggerAPI, TriggerFlow, TriggerBackfill} {
				want := yes
				switch {
				case ts == StateClosed:
					want = "task is closed"
				case ts == StateStopped && tt.Scheduled():
					want = "task is stopped"
				case gs == TargetPreset:
					want = "target is preset"
				case gs == TargetPaused && tt.Scheduled():
					want = "target is paused"
				}
				cases = append(cases, row{ts, gs, tt, want})
			}
		}
	}
	// The rule table above restates design note 001 (docs/SEEDS.md); spot-check it against
	// cases written out from the note's sentences, so that a mistake in both cannot pass.
	spot := map[[3]string]bool{ // accepted?
		{"running", "running", "schedule"}: true,
		{"running", "paused", "schedule"}:  false,
		{"running", "paused", "manual"}:    true,
		{"running", "preset", "manual"}:    false,
		{"stopped", "running", "schedule"}: false,
		{"stopped", "running", "manual"}:   true,
		{"stopped", "paused", "manual"}:    true,
		{"closed", "running", "manual"}:    false,
		{"closed", "running", "schedule"}:  false,
		{"running", "running", "misfire"}:  true,
		{"running", "paused", "misfire"}:   false,
	}
	seen := 0
	for _, c := range cases {
		got := Admit(c.task, c.target, c.trigger)
		if (got == "") != (c.want == yes) || !strings.HasPrefix(got, c.want) {
			t.Errorf("Admit(task %s, target %s, %s) = %q, want %q", c.task, c.target, c.trigger, got, c.want)
		}
		if acc, ok := spot[[3]string{string(c.task), string(c.target), string(c.trigger)}]; ok {
			seen++
			if acc != (got == "") {
				t.Errorf("spot check (task %s, target %s, %s): accepted = %v, want %v", c.task, c.target, c.trigger, got == "", acc)
			}
		}
	}
	if len(cases) != 3*3*6 || seen != len(spot) {
		t.Fatalf("matrix has %d cases and %d spot checks matched; want 54 and %d", len(cases), seen, len(spot))
	}
	if r := Admit("weird", TargetRunning, TriggerManual); !strings.Contains(r, "unknown") {
		t.Errorf("unknown task state admitted: %q", r)
	}
	if r := Admit(StateRunning, "weird", TriggerManual); !strings.Contains(r, "unknown") {
		t.Errorf("unknown target state admitted: %q", r)
	}
}

func TestTargetValidate(t *testing.T) {
	t.Parallel()
	ok := func() *Target {
		return &Target{ID: "hook", Kind: ChannelHTTP, State: TargetRunning,
			HTTP: &HTTPTarget{Method: "POST", URL: "http://127.0.0.1:9000/hook/{{name}}", Headers: map[string]string{"X-A": "{{a}}"}}}
	}
	if err := ok().Validate(); err != nil {
		t.Fatalf("valid target refused: %v", err)
	}
	cases := []struct {
		name  string
		edit  func(*Target)
		field string
	}{
		{"no id", func(t *Target) { t.ID = "" }, "id"},
		{"bad id", func(t *Target) { t.ID = "a b" }, "id"},
		{"reserved id", func(t *Target) { t.ID = "email" }, "id"},
		{"long id", func(t *Target) { t.ID = strings.Repeat("a", MaxTargetID+1) }, "id"},
		{"bad kind", func(t *Target) { t.Kind = "ftp" }, "kind"},
		{"bad state", func(t *Target) { t.State = "on" }, "state"},
		{"negative feedback timeout", func(t *Target) { t.FeedbackTimeout = -1 }, "feedback_timeout"},
		{"missing http", func(t *Target) { t.HTTP = nil }, "http"},
		{"stray exec", func(t *Target) { t.Exec = &ExecTarget{Command: "x"} }, "exec"},
		{"bad method", func(t *Target) { t.HTTP.Method = "DELETE" }, "http.method"},
		{"no url", func(t *Target) { t.HTTP.URL = "" }, "http.url"},
		{"ftp url", func(t *Target) { t.HTTP.URL = "ftp://x/y" }, "http.url"},
		{"template in host", func(t *Target) { t.HTTP.URL = "http://{{host}}/x" }, "http.url"},
		{"template right after host", func(t *Target) { t.HTTP.URL = "http://h{{x}}" }, "http.url"},
		{"unclosed template", func(t *Target) { t.HTTP.URL = "http://h/{{x" }, "http.url"},
		{"header with newline", func(t *Target) { t.HTTP.Headers["X-B"] = "a\r\nb" }, "http.headers.X-B"},
		{"bad header name", func(t *Target) { t.HTTP.Headers["X B"] = "1" }, "http.headers"},
		{"get with body", func(t *Target) { t.HTTP.Method = "GET"; t.HTTP.Body = "x" }, "http.body"},
		{"timeout too long", func(t *Target) { t.HTTP.Timeout = MaxHTTPTimeout + 1 }, "http.timeout"},
		{"exec without command", func(t *Target) { t.Kind, t.HTTP, t.Exec = ChannelExec, nil, &ExecTarget{} }, "exec.command"},
		{"kafka bad topic", func(t *Target) { t.Kind, t.HTTP, t.Kafka = ChannelKafka, nil, &KafkaTarget{Topic: "a b"} }, "kafka.topic"},
		{"builtin bad action", func(t *Target) { t.Kind, t.HTTP, t.Builtin = ChannelBuiltin, nil, &BuiltinTarget{Action: "x"} }, "builtin.action"},
		{"pause without tasks", func(t *Target) {
			t.Kind, t.HTTP, t.Builtin = ChannelBuiltin, nil, &BuiltinTarget{Action: BuiltinPauseTask}
		}, "builtin.tasks"},
		{"cleanup without rule", func(t *Target) {
			t.Kind, t.HTTP, t.Builtin = ChannelBuiltin, nil, &BuiltinTarget{Action: BuiltinCleanupRuns}
		}, "builtin"},
	}
	for _, c := range cases {
		tg := ok()
		c.edit(tg)
		err := tg.Validate()
		var ve *ValidationError
		if !errors.As(err, &ve) || ve.Field != c.field || !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: Validate() = %v, want a ValidationError on %q", c.name, err, c.field)
		}
	}
	for _, good := range []*Target{
		{ID: "mail", Kind: ChannelEmail, State: TargetPreset},
		{ID: "cmd", Kind: ChannelExec, State: TargetPaused, Exec: &ExecTarget{Command: "report"}},
		{ID: "k", Kind: ChannelKafka, State: TargetRunning, Kafka: &KafkaTarget{Topic: "jobs.v1", Key: "{{task_id}}"}},
		{ID: "gc", Kind: ChannelBuiltin, State: TargetRunning, Builtin: &BuiltinTarget{Action: BuiltinCleanupRuns, KeepCount: 10}},
		{ID: "ctl", Kind: ChannelBuiltin, State: TargetRunning, Builtin: &BuiltinTarget{Action: BuiltinTriggerTask, Tasks: []string{"a", "b"}}},
		{ID: "q", Kind: ChannelHTTP, State: TargetRunning, HTTP: &HTTPTarget{Method: "GET", URL: "https://h.example/x?{{q}}"}},
	} {
		if err := good.Validate(); err != nil {
			t.Errorf("target %s refused: %v", good.ID, err)
		}
	}
}

func TestValidParams(t *testing.T) {
	t.Parallel()
	big := map[string]string{}
	for i := range MaxParams + 1 {
		big[strings.Repeat("k", 1+i%100)+string(rune('a'+i%26))+string(rune('a'+i/26))] = "v"
	}
	cases := []struct {
		p     map[string]string
		field string
	}{
		{big, "params"},
		{map[string]string{"": "x"}, "params"},
		{map[string]string{strings.Repeat("k", MaxParamKey+1): "x"}, "params"},
		{map[string]string{"k": strings.Repeat("v", MaxParamValue+1)}, "params.k"},
	}
	for _, c := range cases {
		var ve *ValidationError
		if err := ValidParams("params", c.p); !errors.As(err, &ve) || ve.Field != c.field {
			t.Errorf("ValidParams(%d keys) = %v, want an error on %s", len(c.p), err, c.field)
		}
	}
	if err := ValidParams("params", map[string]string{"to": "a@b.c"}); err != nil {
		t.Errorf("small params refused: %v", err)
	}
}

func TestExpand(t *testing.T) {
	t.Parallel()
	vars := map[string]string{"name": "Ann; rm -rf /", "n": "2"}
	cases := []struct{ in, want, err string }{
		{"plain", "plain", ""},
		{"hi {{name}}!", "hi Ann; rm -rf /!", ""},
		{"{{ n }}{{n}}", "22", ""},
		{"{{missing}}", "", "neither a param"},
		{"{{n", "", "not closed"},
		{"{{}}", "", "no name"},
	}
	for _, c := range cases {
		got, err := Expand(c.in, vars)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("Expand(%q) error = %v, want %q", c.in, err, c.err)
			}
			if cerr := CheckTemplate(c.in); (cerr != nil) != (c.err != "neither a param") {
				t.Errorf("CheckTemplate(%q) = %v", c.in, cerr)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("Expand(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestDeliveryVarsAndDocument(t *testing.T) {
	t.Parallel()
	d := Delivery{TaskID: "t1", TriggerID: "tr_1", Slot: time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.UTC), Attempt: 2,
		Params: map[string]string{"a": "1", "task_id": "spoof"}, TriggerType: TriggerManual, Target: &Target{ID: "hook"}}
	v := d.Vars()
	if v["a"] != "1" || v["task_id"] != "t1" || v["target"] != "hook" || v["attempt"] != "2" || v["slot"] != "2026-01-02T03:04:05.006Z" {
		t.Errorf("Vars() = %v", v)
	}
	if d.LedgerKey() != "t1:1767323045006:hook" {
		t.Errorf("LedgerKey() = %q", d.LedgerKey())
	}
	own := Delivery{TaskID: "t1", Slot: d.Slot, Channel: ChannelEmail}
	if own.LedgerKey() != "t1:1767323045006:email" {
		t.Errorf("LedgerKey() of a task's own channel = %q, want the channel as target", own.LedgerKey())
	}
	doc := string(d.Document())
	for _, want := range []string{`"trigger_id":"tr_1"`, `"idempotency_key":"t1:1767323045006:hook"`, `"target":"hook"`, `"a":"1"`} {
		if !strings.Contains(doc, want) {
			t.Errorf("Document() = %s, missing %s", doc, want)
		}
	}
}

func TestDeriveJobState(t *testing.T) {
	t.Parallel()
	delayed := func(st State, done int) *Task {
		return &Task{State: st, IsDone: done, Job: &Job{Method: JobPOST, DueAt: time.Unix(1, 0)}}
	}
	cron := func(st State) *Task { return &Task{State: st, CronPara: "every 1m", Job: &Job{Method: JobPOST}} }
	run := func(s RunState, tt TriggerType) *Run { return &Run{State: s, TriggerType: tt} }
	cases := []struct {
		name   string
		t      *Task
		latest *Run
		want   JobState
	}{
		{"new", delayed(StateRunning, 0), nil, JobPending},
		{"firing", delayed(StateRunning, 0), run(RunRunning, TriggerSchedule), JobRunning},
		{"awaiting feedback", delayed(StateRunning, 0), run(RunAccepted, TriggerSchedule), JobRunning},
		{"retrying", delayed(StateRunning, 0), run(RunFailed, TriggerSchedule), JobFailed},
		{"done", delayed(StateRunning, 1), run(RunDone, TriggerSchedule), JobDone},
		{"dead", delayed(StateRunning, 1), run(RunDead, TriggerSchedule), JobDead},
		{"timed out", delayed(StateRunning, 1), run(RunTimeout, TriggerSchedule), JobDead},
		{"cancelled before firing", delayed(StateClosed, 0), run(RunCancelled, TriggerSchedule), JobCancelled},
		{"replaced after it fired", delayed(StateClosed, 1), run(RunDone, TriggerSchedule), JobDone},
		{"blocked", delayed(StateStopped, 0), nil, JobBlocked},
		{"blocked while retrying", delayed(StateStopped, 0), run(RunFailed, TriggerSchedule), JobFailed},
		{"backfilling", delayed(StateRunning, 1), run(RunRunning, TriggerBackfill), JobBackfilling},
		{"backfilled", delayed(StateClosed, 1), run(RunDone, TriggerBackfill), JobDone},
		{"cron between fires", cron(StateRunning), run(RunDone, TriggerSchedule), JobPending},
		{"cron after a dead fire", cron(StateRunning), run(RunDead, TriggerSchedule), JobPending},
		{"cron cancelled", cron(StateClosed), run(RunDone, TriggerSchedule), JobCancelled},
	}
	for _, c := range cases {
		if got := DeriveJobState(c.t, c.latest); got != c.want {
			t.Errorf("%s: DeriveJobState = %s, want %s", c.name, got, c.want)
		}
	}
}
