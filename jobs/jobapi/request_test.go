package jobapi

import (
	"errors"
	"strings"
	"testing"
	"time"

	"cronsheet/fire"
	"cronsheet/mapping/schedule"
	"cronsheet/task"
)

var now = time.Date(2026, 11, 30, 10, 0, 0, 123_456_789, time.UTC)

func build(t *testing.T, body string) (Built, error) {
	t.Helper()
	r, err := ParseRequest([]byte(body))
	if err != nil {
		return Built{}, err
	}
	return Build(r, "job_1", now)
}

func TestBuildPoulpeBody(t *testing.T) {
	t.Parallel()
	b, err := build(t, `{"method":"POST","delay":2,"name":"http://127.0.0.1:9000/hook","params":"{\"a\":1}","cc":"1 3","wait":10}`)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	j := b.Task.Job
	if j.Method != task.JobPOST || j.Body != `{"a":1}` || j.CC != "workers 1 3" || j.CCLimit != 2 ||
		!j.DueAt.Equal(now.Add(2*time.Second).Truncate(time.Millisecond)) || b.Wait != 10*time.Second {
		t.Errorf("job = %+v, wait %v", j, b.Wait)
	}
	tk := b.Task
	if tk.Scenario != task.JobScenario || tk.ExecuteType != task.Once || tk.MaxRetries != task.DefaultJobRetry ||
		tk.TaskType != task.ChannelHTTP || tk.State != task.StateRunning || tk.IsEnable != 1 {
		t.Errorf("task = %+v", tk)
	}
	if tg := j.Target(); tg.HTTP == nil || !tg.HTTP.Raw || tg.HTTP.Body != `{"a":1}` || tg.Validate() != nil {
		t.Errorf("target = %+v (%v)", tg.HTTP, tg.Validate())
	}
}

func TestBuildForms(t *testing.T) {
	t.Parallel()
	b, err := build(t, `{"method":"get","name":"http://h/x?z=0","params":{"a":"1","n":2}}`)
	if err != nil || b.Task.Job.Body != "a=1&n=2" || b.Task.Job.Target().HTTP.URL != "http://h/x?z=0&a=1&n=2" {
		t.Errorf("GET with object params: %+v, %v", b.Task, err)
	}
	b, err = build(t, `{"method":"EXEC","name":"report","params":"--day 2026-11-30"}`)
	if err != nil || b.Task.Params["arg2"] != "2026-11-30" || b.Task.Params["args"] != "--day 2026-11-30" {
		t.Errorf("EXEC with poulpe args: %+v, %v", b.Task.Params, err)
	}
	b, err = build(t, `{"method":"MAIL_TO","name":"ann@example.com","params":{"subject":"Hi","body":"Hello"}}`)
	if err != nil || b.Task.Params[task.ParamTo] != "ann@example.com" || b.Task.Params[task.ParamTitle] != "Hi" || b.Task.TaskPara != "Hello" {
		t.Errorf("MAIL_TO: %+v, %v", b.Task, err)
	}
	b, err = build(t, `{"method":"KAFKA","name":"events.v1","params":"{}","cron":"every 5m","cc":{"group":"kafka","limit":4}}`)
	if err != nil || b.Task.CronPara != "every 5m" || b.Task.ExecuteType != task.Periodic || !b.Task.Job.DueAt.IsZero() || b.Task.Job.CCLimit != 4 {
		t.Errorf("KAFKA cron: %+v, %v", b.Task, err)
	}
	b, err = build(t, `{"method":"SMS","name":"+15551234567","params":"on my way","at":"2026-12-01T08:00:00.5+08:00","max_retries":0,"ttl":5}`)
	if err != nil || !b.Task.Job.DueAt.Equal(time.Date(2026, 12, 1, 0, 0, 0, 5e8, time.UTC)) || b.Task.MaxRetries != 0 || b.Task.TTL != 5*time.Second {
		t.Errorf("SMS at: %+v, %v", b.Task, err)
	}
}

// TestBuildErrors: every bad field is named, the same way for every
// channel (they all call ParseRequest and Build).
func TestBuildErrors(t *testing.T) {
	t.Parallel()
	cases := []struct{ body, field, msg string }{
		{`{"name":"http://h/"}`, "method", "required"},
		{`{"method":"FTP","name":"x"}`, "method", "must be GET"},
		{`{"method":"POST"}`, "name", "required"},
		{`{"method":"POST","name":"ftp://h/"}`, "name", "http://"},
		{`{"method":"POST","name":"http://h/","delay":-1}`, "delay", "must be 0 to 31622400 seconds (366 days); got -1"},
		{`{"method":"POST","name":"http://h/","delay":1e9}`, "delay", "must be 0 to 31622400 seconds (366 days); got 1000000000"},
		{`{"method":"POST","name":"http://h/","ttl":0}`, "ttl", "must be 0.001 to 86400 seconds (1 day); got 0"},
		{`{"method":"POST","name":"http://h/","delay":"soon"}`, "delay", "must be a number; got text"},
		{`{"method":"POST","name":"http://h/","delay":1,"at":"2026-12-01T00:00:00Z"}`, "delay", "one of"},
		{`{"method":"POST","name":"http://h/","at":"tomorrow"}`, "at", "RFC 3339"},
		{`{"method":"POST","name":"http://h/","at":"0001-01-01T00:00:00Z"}`, "at", "out of range"},
		{`{"method":"POST","name":"http://h/","at":"1969-12-31T23:59:59.999Z"}`, "at", "out of range"},
		{`{"method":"POST","name":"http://h/","cron":"every fortnight"}`, "cron", ""},
		{`{"method":"POST","name":"http://h/","cron":"in 5m"}`, "cron", "once"},
		{`{"method":"POST","name":"http://h/","cc":"one three"}`, "cc", "worker numbers"},
		{`{"method":"POST","name":"http://h/","cc":{"group":"g","limit":0}}`, "cc.limit", ""},
		{`{"method":"POST","name":"http://h/","cc":{"limit":2}}`, "cc.group", "required"},
		{`{"method":"POST","name":"http://h/","params":[1]}`, "params", "text or an object"},
		{`{"method":"POST","name":"http://h/","params":{"a":{"b":1}}}`, "params.a", ""},
		{`{"method":"POST","name":"http://h/","max_retries":101}`, "max_retries", ""},
		{`{"method":"POST","name":"http://h/","ttl":0}`, "ttl", ""},
		{`{"method":"POST","name":"http://h/","wait":301}`, "wait", ""},
		{`{"method":"POST","name":"http://h/","cron":"every 1m","overlap":"pile"}`, "overlap", "not allow, skip or queue"},
		{`{"method":"POST","name":"http://h/","colour":"red"}`, "colour", "unknown field"},
		{`{"method":"POST","name":"http://h/"} {}`, "body", "trailing"},
		{`{"method":"MAIL_TO","name":"not-an-address"}`, "name", ""},
		{`{"method":"SMS","name":"+15551234567"}`, "params", "text is required"},
		{``, "body", "empty"},
		{`{`, "body", ""},
	}
	for _, c := range cases {
		_, err := build(t, c.body)
		var ve *task.ValidationError
		if !errors.As(err, &ve) || ve.Field != c.field || !strings.Contains(ve.Msg, c.msg) {
			t.Errorf("%s: error %v, want field %q with %q", c.body, err, c.field, c.msg)
		}
	}
	if _, err := ParseBatch([]byte(`[{"method":"POST","name":"http://h/"},{"method":"POST","name":"http://h/","x":1}]`)); err == nil ||
		!strings.Contains(err.Error(), "jobs[1].x") {
		t.Errorf("batch error = %v, want it to name jobs[1].x", err)
	}
	reqs, err := ParseBatch([]byte(`{"jobs":[{"method":"GET","name":"http://h/"}]}`))
	if err != nil || len(reqs) != 1 {
		t.Errorf("ParseBatch({jobs}) = %v, %v", reqs, err)
	}
}

// TestEveryJobFirstFireOneIntervalAfterIntake: an interval cron job taken
// in at a sub-second instant first fires no less than one interval later.
func TestEveryJobFirstFireOneIntervalAfterIntake(t *testing.T) {
	t.Parallel()
	b, err := build(t, `{"method":"GET","name":"http://h/x","cron":"every 1s"}`)
	if err != nil {
		t.Fatal(err)
	}
	sched, err := schedule.Parse(b.Task.CronPara, b.Task.TZ)
	if err != nil {
		t.Fatal(err)
	}
	plan := fire.MakePlan(fire.NewSlots(b.Task, sched), b.Task.Misfire, time.Time{}, now)
	if want := now.Truncate(time.Second).Add(2 * time.Second); !plan.Next.Equal(want) {
		t.Errorf("first slot = %s, want %s (a whole second, at least 1s after %s)", plan.Next, want, now)
	}
}
