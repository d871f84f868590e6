package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

var _ store.Nodes = (*Store)(nil)

const (
	// qRegisterNode inserts the node, or replaces an entry of the same id
	// that belongs to this incarnation or whose last beat is older than ?7;
	// a live entry of another incarnation is left alone (no row returned).
	qRegisterNode = `INSERT INTO nodes (node_id, incarnation, version, started_at, beat_at, held, host, pid)
		VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
		ON CONFLICT (node_id) DO UPDATE SET incarnation = excluded.incarnation, version = excluded.version,
			started_at = excluded.started_at, beat_at = excluded.beat_at, held = excluded.held,
			host = excluded.host, pid = excluded.pid
		WHERE nodes.incarnation = excluded.incarnation OR nodes.beat_at < ?9
		RETURNING incarnation`
	// qBeatNode updates the node's beat, or re-creates a missing entry; an
	// entry of another incarnation is left alone (no row returned).
	qBeatNode = `INSERT INTO nodes (node_id, incarnation, version, started_at, beat_at, held, host, pid)
		VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
		ON CONFLICT (node_id) DO UPDATE SET beat_at = excluded.beat_at, held = excluded.held
		WHERE nodes.incarnation = excluded.incarnation
		RETURNING incarnation`
	qRemoveNode = `DELETE FROM nodes WHERE node_id = ? AND incarnation = ?`
	qListNodes  = `SELECT node_id, incarnation, version, started_at, beat_at, held, host, pid FROM nodes ORDER BY node_id`
)

// RegisterNode records n as running, refusing a live entry of another
// incarnation under the same id (store.Nodes.RegisterNode).
func (s *Store) RegisterNode(ctx context.Context, n store.Node, staleBefore time.Time) error {
	if err := s.nodeWrite(ctx, s.st.registerNode, n, store.UnixMS(staleBefore)); err != nil {
		return fmt.Errorf("register node %s: %w", n.ID, err)
	}
	return nil
}

// BeatNode records a heartbeat of n (store.Nodes.BeatNode).
func (s *Store) BeatNode(ctx context.Context, n store.Node) error {
	if err := s.nodeWrite(ctx, s.st.beatNode, n); err != nil {
		return fmt.Errorf("beat node %s: %w", n.ID, err)
	}
	return nil
}

// nodeWrite runs qRegisterNode or qBeatNode: no row back means the entry
// belongs to another live incarnation.
func (s *Store) nodeWrite(ctx context.Context, st *sql.Stmt, n store.Node, extra ...any) error {
	if n.ID == "" || n.Incarnation == "" {
		return task.Invalid("node_id", "node id and incarnation are required")
	}
	args := append([]any{n.ID, n.Incarnation, n.Version, store.UnixMS(n.StartedAt), store.UnixMS(n.BeatAt), n.Held,
		n.Host, n.PID}, extra...)
	var inc string
	err := st.QueryRowContext(ctx, args...).Scan(&inc)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("node id %q is used by another live process: %w", n.ID, task.ErrConflict)
	}
	return s.noteWrite(translate(err))
}

// RemoveNode deletes n's entry if it still belongs to incarnation.
func (s *Store) RemoveNode(ctx context.Context, id, incarnation string) error {
	if _, err := s.st.removeNode.ExecContext(ctx, id, incarnation); err != nil {
		return fmt.Errorf("remove node %s: %w", id, translate(err))
	}
	return nil
}

// ListNodes returns every registered node by id.
func (s *Store) ListNodes(ctx context.Context) ([]store.Node, error) {
	rs, err := s.r.QueryContext(ctx, qListNodes)
	if err != nil {
		return nil, fmt.Errorf("list nodes: %w", translate(err))
	}
	defer rs.Close()
	var out []store.Node
	for rs.Next() {
		var (
			n             store.Node
			started, beat int64
		)
		if err := rs.Scan(&n.ID, &n.Incarnation, &n.Version, &started, &beat, &n.Held, &n.Host, &n.PID); err != nil {
			return nil, fmt.Errorf("list nodes: %w", err)
		}
		n.StartedAt, n.BeatAt = store.FromUnixMS(started), store.FromUnixMS(beat)
		out = append(out, n)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("list nodes: %w", err)
	}
	return out, nil
}
