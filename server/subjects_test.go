package server

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"cronsheet/config"
	"cronsheet/task"
)

// TestSMSCarriesTitle: an SMS of a row with a title carries the title on
// its first line, then the content, as received by the Twilio stand-in.
// Before, the title was dropped (an SMS has no subject).
func TestSMSCarriesTitle(t *testing.T) {
	var rec smsServer
	twilio := newTwilioStandIn(t, &rec)
	b := setup(t, func(c *config.Config) {
		c.SMS = config.SMS{Mode: config.ModeSend, AccountSID: "ACtest", From: "+15005550006",
			APIBaseURL: twilio, Timeout: 5 * time.Second, AuthToken: "token"}
	})
	var row task.Row
	b.call(t, "POST", "/api/v1/scenarios/memos/rows", map[string]any{
		"title": "Meds", "content": "pills", "when": "in 1s", "channel": "sms", "to": "+14155550100",
	}, &row)
	waitTask(t, b, row.ID, func(tk *task.Task) bool { return tk.IsDone == 1 })
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.forms) != 1 || rec.forms[0].Get("Body") != "Meds\npills" {
		t.Errorf("twilio got %v, want one message with body %q", rec.forms, "Meds\npills")
	}
}

// TestFlowStepEmailSubject: a flow step's email has a subject naming the
// flow and step, after the trigger's title when it has one, as received
// by the SMTP server. Before, a step's email went out with an empty
// subject unless its params set a title.
func TestFlowStepEmailSubject(t *testing.T) {
	b := setup(t, nil)
	if code := b.call(t, "POST", "/api/v1/targets", map[string]any{"id": "mail", "kind": "email", "state": "running"}, nil); code != http.StatusCreated {
		t.Fatalf("create target: %d", code)
	}
	b.createFlow(t, map[string]any{"id": "nightly", "start": "notify", "steps": []any{
		map[string]any{"id": "notify", "targets": []string{"mail"}, "params": map[string]string{"to": "ops@example.com"}}}})
	for i, c := range []struct {
		params map[string]string
		want   string
	}{
		{nil, "flow nightly, step notify"},
		{map[string]string{"title": "Backup report"}, "Backup report (flow nightly, step notify)"},
	} {
		x := b.triggerFlow(t, "nightly", c.params)
		if got := b.waitExecution(t, x.ID); got.State != task.ExecSuccess {
			t.Fatalf("execution %s: %s (%s)", x.ID, got.State, got.Reason)
		}
		msgs := b.smtp.WaitFor(i+1, 15*time.Second)
		if len(msgs) != i+1 {
			t.Fatalf("%d emails, want %d", len(msgs), i+1)
		}
		if m := msgs[i]; m.Subject != c.want || !strings.Contains(strings.Join(m.To, ","), "ops@example.com") {
			t.Errorf("email %d: subject %q to %v, want subject %q", i, m.Subject, m.To, c.want)
		}
	}
}
