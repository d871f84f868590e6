package executors

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"

	"cronsheet/task"
)

// OutboxWriter stores outbox messages; store.Outbox satisfies it.
type OutboxWriter interface {
	// AddOutbox stores m and sets its ID (and CreatedAt when zero).
	AddOutbox(ctx context.Context, m *task.OutboxMessage) error
}

// Outbox is the executor that keeps a delivery instead of sending it, like a
// console mail backend: it writes a task.OutboxMessage and logs it at info.
// It serves the outbox channel and channels configured in outbox mode.
type Outbox struct {
	logger *slog.Logger
	w      OutboxWriter
}

// NewOutbox returns an Outbox writing through w. logger may be nil.
func NewOutbox(logger *slog.Logger, w OutboxWriter) *Outbox {
	return &Outbox{logger: componentLogger(logger, "executors.outbox"), w: w}
}

// Execute records d as an outbox message of channel d.Channel (the outbox
// channel when empty). An email or SMS delivery whose recipient the real
// executor would refuse is refused the same way (task.Permanent), so outbox
// mode catches bad rows. Writer errors are returned as they are: retryable
// unless the writer marked them otherwise.
func (o *Outbox) Execute(ctx context.Context, d task.Delivery) (string, error) {
	ch := cmp.Or(d.Channel, task.ChannelOutbox)
	if err := validRecipient(ch, d.To); err != nil {
		return "", task.Permanent(err)
	}
	m := &task.OutboxMessage{
		TaskID:    d.TaskID,
		TriggerID: d.TriggerID,
		Channel:   ch,
		To:        d.To,
		Subject:   d.Subject,
		Body:      d.Body,
	}
	if err := o.w.AddOutbox(ctx, m); err != nil {
		return "", fmt.Errorf("add outbox message: %w", err)
	}
	o.logger.InfoContext(ctx, "outbox message",
		"outbox_id", m.ID, "task_id", d.TaskID, "trigger_id", d.TriggerID,
		"attempt", d.Attempt, "channel", ch, "to", d.To, "subject", d.Subject,
		"body", task.Truncate(d.Body, task.MaxOutput))
	return fmt.Sprintf("outbox id %d", m.ID), nil
}

// validRecipient checks d.To the way the real executor of ch would.
func validRecipient(ch task.Channel, to string) error {
	switch ch {
	case task.ChannelEmail:
		return task.CheckEmail(to)
	case task.ChannelSMS:
		return task.CheckPhone(to)
	}
	return nil
}

// componentLogger derives the component logger; a nil logger discards.
func componentLogger(logger *slog.Logger, component string) *slog.Logger {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return logger.With("component", component)
}

var _ Executor = (*Outbox)(nil)
