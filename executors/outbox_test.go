package executors_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"cronsheet/executors"
	"cronsheet/task"
)

// memOutbox is an in-memory OutboxWriter that assigns ids like a store.
type memOutbox struct {
	err error

	mu   sync.Mutex
	msgs []task.OutboxMessage
}

var _ executors.OutboxWriter = (*memOutbox)(nil)

func (w *memOutbox) AddOutbox(_ context.Context, m *task.OutboxMessage) error {
	if w.err != nil {
		return w.err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	m.ID = int64(len(w.msgs) + 1)
	w.msgs = append(w.msgs, *m)
	return nil
}

func TestOutbox(t *testing.T) {
	t.Parallel()

	t.Run("RecordsAndLogs", func(t *testing.T) {
		t.Parallel()
		var logs bytes.Buffer
		w := &memOutbox{}
		o := executors.NewOutbox(slog.New(slog.NewTextHandler(&logs, nil)), w)
		d := emailDelivery()

		out, err := o.Execute(context.Background(), d)
		if err != nil {
			t.Fatalf("Execute: %v", err)
		}
		if out != "outbox id 1" {
			t.Errorf("output = %q, want %q", out, "outbox id 1")
		}
		want := task.OutboxMessage{ID: 1, TaskID: d.TaskID, TriggerID: d.TriggerID,
			Channel: task.ChannelEmail, To: d.To, Subject: d.Subject, Body: d.Body}
		if len(w.msgs) != 1 || w.msgs[0] != want {
			t.Errorf("stored %+v\nwant    %+v", w.msgs, want)
		}
		for _, s := range []string{"level=INFO", "component=executors.outbox", "outbox_id=1", "trigger_id=trg-42", "to=ann@example.com"} {
			if !strings.Contains(logs.String(), s) {
				t.Errorf("log %q lacks %q", logs.String(), s)
			}
		}
	})

	t.Run("EmptyChannelIsOutbox", func(t *testing.T) {
		t.Parallel()
		w := &memOutbox{}
		d := task.Delivery{TaskID: "t", To: "anything goes", Body: "b"}

		if _, err := executors.NewOutbox(nil, w).Execute(context.Background(), d); err != nil {
			t.Fatalf("Execute: %v", err)
		}
		if len(w.msgs) != 1 || w.msgs[0].Channel != task.ChannelOutbox {
			t.Errorf("stored %+v, want channel outbox", w.msgs)
		}
	})

	t.Run("InvalidRecipientIsPermanent", func(t *testing.T) {
		t.Parallel()
		w := &memOutbox{}
		o := executors.NewOutbox(nil, w)
		for _, d := range []task.Delivery{
			{Channel: task.ChannelEmail, To: "not-an-address"},
			{Channel: task.ChannelSMS, To: "0415550100"},
		} {
			if _, err := o.Execute(context.Background(), d); !task.IsPermanent(err) || !errors.Is(err, task.ErrInvalid) {
				t.Errorf("%s to %q: err = %v, want permanent ErrInvalid", d.Channel, d.To, err)
			}
		}
		if len(w.msgs) != 0 {
			t.Errorf("stored %+v, want nothing", w.msgs)
		}
	})

	t.Run("WriterErrorIsRetryable", func(t *testing.T) {
		t.Parallel()
		boom := errors.New("disk full")
		o := executors.NewOutbox(nil, &memOutbox{err: boom})

		_, err := o.Execute(context.Background(), smsDelivery())
		if !errors.Is(err, boom) || task.IsPermanent(err) {
			t.Errorf("err = %v, want retryable wrapping %v", err, boom)
		}
	})
}
