package sqlite

import (
	"context"
	"cronsheet/store"
	"database/sql"
	"errors"
	"fmt"
	"math"

	"cronsheet/task"
)

const (
	qAddOutbox = `INSERT INTO outbox (id, task_id, trigger_id, channel, recipient, subject, body, created_at)
		VALUES (NULLIF(?, 0), ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (trigger_id) WHERE trigger_id <> '' DO NOTHING RETURNING id`
	qOutboxByTrigger = `SELECT id, created_at FROM outbox WHERE trigger_id = ? AND trigger_id <> ''`
	qListOutbox      = `SELECT id, task_id, trigger_id, channel, recipient, subject, body, created_at
		FROM outbox WHERE id < ? ORDER BY id DESC LIMIT ?`
)

// AddOutbox stores m and sets its ID and CreatedAt when zero. A given ID
// that is taken is task.ErrConflict; a TriggerID already stored is not
// stored twice (see store.Outbox).
func (s *Store) AddOutbox(ctx context.Context, m *task.OutboxMessage) error {
	created := store.UnixMS(m.CreatedAt)
	if created == 0 {
		created = s.nowMS()
	}
	var id int64
	err := s.st.addOutbox.QueryRowContext(ctx, m.ID, m.TaskID, m.TriggerID, string(m.Channel), m.To,
		m.Subject, m.Body, created).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		err = s.st.outboxByTrigger.QueryRowContext(ctx, m.TriggerID).Scan(&id, &created)
	}
	if err != nil {
		return fmt.Errorf("add outbox message for task %s: %w", m.TaskID, translate(err))
	}
	m.ID, m.CreatedAt = id, store.FromUnixMS(created)
	return nil
}

// ListOutbox returns messages newest first, with ID < beforeID when
// beforeID > 0, at most limit.
func (s *Store) ListOutbox(ctx context.Context, beforeID int64, limit int) ([]*task.OutboxMessage, error) {
	if err := store.CheckLimit(limit); err != nil {
		return nil, fmt.Errorf("list outbox: %w", err)
	}
	if beforeID <= 0 {
		beforeID = math.MaxInt64
	}
	rs, err := s.st.listOutbox.QueryContext(ctx, beforeID, limit)
	if err != nil {
		return nil, fmt.Errorf("list outbox: %w", err)
	}
	defer rs.Close()
	var out []*task.OutboxMessage
	for rs.Next() {
		var (
			m       task.OutboxMessage
			created int64
		)
		if err := rs.Scan(&m.ID, &m.TaskID, &m.TriggerID, &m.Channel, &m.To, &m.Subject, &m.Body, &created); err != nil {
			return nil, fmt.Errorf("list outbox: %w", err)
		}
		m.CreatedAt = store.FromUnixMS(created)
		out = append(out, &m)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("list outbox: %w", err)
	}
	return out, nil
}
