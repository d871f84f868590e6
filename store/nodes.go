package store

import (
	"context"
	"time"
)

// Nodes is the registry of the processes sharing the store: each beats
// while it runs, so the others know whose runs and claims are orphaned.
type Nodes interface {
	// RegisterNode records n as running. Another process already
	// registered under n.ID (another Incarnation) whose last beat is after
	// staleBefore is task.ErrConflict: two live processes must not share
	// a node id. A stale entry is replaced.
	RegisterNode(ctx context.Context, n Node, staleBefore time.Time) error
	// BeatNode records a heartbeat of n (BeatAt, Held). When the entry
	// under n.ID belongs to another incarnation it is task.ErrConflict; a
	// missing entry is re-created.
	BeatNode(ctx context.Context, n Node) error
	// RemoveNode deletes n's entry when it still belongs to incarnation
	// (a graceful stop, so the others take its work at once).
	RemoveNode(ctx context.Context, id, incarnation string) error
	// ListNodes returns every registered node, by id.
	ListNodes(ctx context.Context) ([]Node, error)
}

// Node is one registered process.
type Node struct {
	ID string `json:"node_id"`
	// Incarnation tells apart two processes that use the same ID.
	Incarnation string `json:"incarnation"`
	Version     string `json:"version"`
	// Host and PID say where the process runs, so a restart on the same
	// host can tell a crashed predecessor (no such process) from a live one.
	Host      string    `json:"host"`
	PID       int       `json:"pid"`
	StartedAt time.Time `json:"started_at"`
	BeatAt    time.Time `json:"beat_at"`
	// Held is how many tasks the node held at its last beat.
	Held int `json:"held"`
}
