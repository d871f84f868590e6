package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"cronsheet/store"
)

var _ store.CCSlots = (*Store)(nil)

// ccSlotsSchema is the cluster-wide concurrency-group slots table
// (store.CCSlots). Its primary key (grp, slot) is the gate: at most one
// row per index, so at most limit holders of a group. ix_cc_node serves
// the renewal and the release of a node's slots. The table is new in this
// build without a schema version of its own: CREATE … IF NOT EXISTS adds
// it to an existing file, and an older build ignores it.
const ccSlotsSchema = `
CREATE TABLE IF NOT EXISTS cc_slots (
	grp         TEXT    NOT NULL,
	slot        INTEGER NOT NULL,
	node        TEXT    NOT NULL,
	holder      TEXT    NOT NULL DEFAULT '',
	fence       INTEGER NOT NULL,
	lease_until INTEGER NOT NULL,
	PRIMARY KEY (grp, slot)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS ix_cc_node ON cc_slots (node);
`

const (
	qCCExpired = `DELETE FROM cc_slots WHERE grp = ? AND lease_until < ?`
	qCCUsed    = `SELECT slot FROM cc_slots WHERE grp = ? AND slot < ? ORDER BY slot`
	qCCInsert  = `INSERT INTO cc_slots (grp, slot, node, holder, fence, lease_until) VALUES (?, ?, ?, ?, ?, ?)`
	qCCRelease = `DELETE FROM cc_slots WHERE grp = ? AND slot = ? AND fence = ?`
	qCCRenew   = `UPDATE cc_slots SET lease_until = ? WHERE node = ? AND lease_until >= ?`
	qCCOfNode  = `DELETE FROM cc_slots WHERE node = ?`
	qCCList    = `SELECT grp, slot, node, holder, fence, lease_until FROM cc_slots ORDER BY grp, slot`
)

// TakeCCSlot takes the lowest free index of p.Group below p.Limit in one
// write transaction: it deletes the group's expired rows, then inserts the
// lowest index without a row (store.CCSlots.TakeCCSlot). Writes to the
// file are serialised, and the primary key refuses a second row of an
// index whatever happens.
func (s *Store) TakeCCSlot(ctx context.Context, p store.TakeCCSlotParams) (store.CCSlot, bool, error) {
	if err := p.Check(); err != nil {
		return store.CCSlot{}, false, err
	}
	slot := store.CCSlot{Group: p.Group, Slot: -1, Node: p.Node, Holder: p.Holder, Fence: p.Fence,
		LeaseUntil: store.FromUnixMS(store.UnixMS(p.LeaseUntil))}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, qCCExpired, p.Group, store.UnixMS(p.Now)); err != nil {
			return err
		}
		rs, err := tx.QueryContext(ctx, qCCUsed, p.Group, p.Limit)
		if err != nil {
			return err
		}
		free := 0
		for rs.Next() {
			var i int
			if err := rs.Scan(&i); err != nil {
				rs.Close()
				return err
			}
			if i == free {
				free++
			}
		}
		if err := errors.Join(rs.Err(), rs.Close()); err != nil {
			return err
		}
		if free >= p.Limit {
			return nil
		}
		if _, err := tx.ExecContext(ctx, qCCInsert, p.Group, free, p.Node, p.Holder, p.Fence, store.UnixMS(p.LeaseUntil)); err != nil {
			return err
		}
		slot.Slot = free
		return nil
	})
	if err != nil {
		return store.CCSlot{}, false, fmt.Errorf("take a slot of cc group %q: %w", p.Group, translate(err))
	}
	return slot, slot.Slot >= 0, nil
}

// ReleaseCCSlot deletes (group, slot) while it still has fence.
func (s *Store) ReleaseCCSlot(ctx context.Context, group string, slot int, fence int64) error {
	if _, err := s.w.ExecContext(ctx, qCCRelease, group, slot, fence); err != nil {
		return fmt.Errorf("release slot %d of cc group %q: %w", slot, group, translate(err))
	}
	return nil
}

// RenewCCSlots extends the unexpired slots of node to until.
func (s *Store) RenewCCSlots(ctx context.Context, node string, now, until time.Time) (int, error) {
	res, err := s.w.ExecContext(ctx, qCCRenew, store.UnixMS(until), node, store.UnixMS(now))
	if err != nil {
		return 0, fmt.Errorf("renew cc slots of %s: %w", node, translate(err))
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// ReleaseNodeCCSlots deletes every slot of node.
func (s *Store) ReleaseNodeCCSlots(ctx context.Context, node string) (int, error) {
	res, err := s.w.ExecContext(ctx, qCCOfNode, node)
	if err != nil {
		return 0, fmt.Errorf("release cc slots of %s: %w", node, translate(err))
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// ListCCSlots returns every slot row by group and index.
func (s *Store) ListCCSlots(ctx context.Context) ([]store.CCSlot, error) {
	rs, err := s.r.QueryContext(ctx, qCCList)
	if err != nil {
		return nil, fmt.Errorf("list cc slots: %w", translate(err))
	}
	defer rs.Close()
	var out []store.CCSlot
	for rs.Next() {
		var (
			c     store.CCSlot
			lease int64
		)
		if err := rs.Scan(&c.Group, &c.Slot, &c.Node, &c.Holder, &c.Fence, &lease); err != nil {
			return nil, fmt.Errorf("list cc slots: %w", err)
		}
		c.LeaseUntil = store.FromUnixMS(lease)
		out = append(out, c)
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("list cc slots: %w", err)
	}
	return out, nil
}
