package store

import (
	"context"
	"time"

	"cronsheet/task"
)

// CCSlots is the cluster-wide table of concurrency-group slots: a job's
// concurrency group (task.Job CC, CCLimit) admits at most CCLimit
// deliveries at once across every node sharing the store.
//
// A slot is one row under the unique key (group, slot index); holding one
// of the indexes 0..limit-1 of a group is the right to deliver. The insert
// of that row is the only gate: the unique index guarantees at most limit
// holders cluster-wide, also on FerretDB, where conditional updates are
// not atomic across processes (so no exclusion relies on one). A row
// whose lease ended is reclaimable: it is deleted (conditionally on its
// fence) and the index inserted again, and that insert is again the gate.
type CCSlots interface {
	// TakeCCSlot takes one free slot of p.Group with an index below
	// p.Limit, lowest first: an index without a row, or whose row's lease
	// ended before p.Now (that row is deleted first). It reports false
	// when every index is held. Limit < 1 is task.ErrInvalid.
	TakeCCSlot(ctx context.Context, p TakeCCSlotParams) (CCSlot, bool, error)
	// ReleaseCCSlot deletes the row (group, slot) only while it still
	// holds fence: a slot reclaimed by someone else meanwhile is left
	// alone, without error.
	ReleaseCCSlot(ctx context.Context, group string, slot int, fence int64) error
	// RenewCCSlots sets lease_until to until on every slot held by node
	// whose lease has not ended at now (an ended one may be being
	// reclaimed); it returns how many.
	RenewCCSlots(ctx context.Context, node string, now, until time.Time) (int, error)
	// ReleaseNodeCCSlots deletes every slot held by node (a graceful
	// stop, or the start of a process of that node id after a crash) and
	// returns how many.
	ReleaseNodeCCSlots(ctx context.Context, node string) (int, error)
	// ListCCSlots returns every slot row, expired ones included, by group
	// then index.
	ListCCSlots(ctx context.Context) ([]CCSlot, error)
}

// TakeCCSlotParams are the arguments of CCSlots.TakeCCSlot.
type TakeCCSlotParams struct {
	Group string
	Limit int
	// Node is the holder node, Holder what holds the slot there (a task
	// id); both are shown in the status.
	Node   string
	Holder string
	// Fence identifies this holding: release and reclaim delete a row
	// only while it still has the fence they read. The caller makes it
	// unique (random); it must not be 0.
	Fence      int64
	LeaseUntil time.Time
	Now        time.Time
}

// CCSlot is one held slot of a concurrency group.
type CCSlot struct {
	Group      string    `json:"group"`
	Slot       int       `json:"slot"`
	Node       string    `json:"node"`
	Holder     string    `json:"holder"`
	Fence      int64     `json:"fence"`
	LeaseUntil time.Time `json:"lease_until"`
}

// Check reports arguments TakeCCSlot refuses (task.ErrInvalid): a limit
// below 1, no node, a zero fence.
func (p TakeCCSlotParams) Check() error {
	if p.Limit < 1 {
		return task.Invalid("cc_limit", "must be at least 1")
	}
	if p.Fence == 0 || p.Node == "" {
		return task.Invalid("fence", "a slot needs a node and a non-zero fence")
	}
	return nil
}
