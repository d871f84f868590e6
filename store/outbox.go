package store

import (
	"context"

	"cronsheet/task"
)

// Outbox keeps deliveries that are recorded instead of sent.
type Outbox interface {
	// AddOutbox stores m and sets its ID and CreatedAt when zero. A message
	// whose non-empty TriggerID is already in the outbox is not stored again
	// (a delivery resumed after a crash that had already reached the outbox):
	// m takes the stored message's ID and CreatedAt and nil is returned, so
	// the outbox holds each run exactly once.
	AddOutbox(ctx context.Context, m *task.OutboxMessage) error
	// ListOutbox returns messages newest first, with ID < beforeID when
	// beforeID > 0, at most limit.
	ListOutbox(ctx context.Context, beforeID int64, limit int) ([]*task.OutboxMessage, error)
}
