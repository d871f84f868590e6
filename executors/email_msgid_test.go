package executors_test

import (
	"context"
	"testing"

	"cronsheet/executors"
)

// TestEmailMessageID: every email carries Message-ID <trigger_id@domain of
// the sender>, and a resend of the same run (another attempt, possibly by
// another executor after a takeover) carries the same one, so receivers and
// threads see one message.
func TestEmailMessageID(t *testing.T) {
	t.Parallel()
	b := setupSMTP(t, &smtpBackend{}, smtpOpts{})
	d := emailDelivery()
	if _, err := newEmail(t, b.config(executors.TLSNone)).Execute(context.Background(), d); err != nil {
		t.Fatalf("Execute: %v", err)
	}
	d.Attempt++
	if _, err := newEmail(t, b.config(executors.TLSNone)).Execute(context.Background(), d); err != nil {
		t.Fatalf("Execute again: %v", err)
	}
	msgs := b.backend.messages()
	if len(msgs) != 2 {
		t.Fatalf("server received %d messages, want 2", len(msgs))
	}
	want := "<" + d.TriggerID + "@cronsheet.test>"
	for i, msg := range msgs {
		if got := parseMessage(t, msg.Data).header.Get("Message-Id"); got != want {
			t.Errorf("message %d: Message-ID = %q, want %q", i, got, want)
		}
	}
	other := emailDelivery()
	other.TriggerID = "tr_other"
	if _, err := newEmail(t, b.config(executors.TLSNone)).Execute(context.Background(), other); err != nil {
		t.Fatalf("Execute other: %v", err)
	}
	if got := parseMessage(t, b.backend.messages()[2].Data).header.Get("Message-Id"); got != "<tr_other@cronsheet.test>" {
		t.Errorf("another run's Message-ID = %q, want <tr_other@cronsheet.test>", got)
	}
}
