package mongo

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"cronsheet/store"
)

var _ store.CCSlots = (*Store)(nil)

// collCCSlots holds the cluster-wide concurrency-group slots
// (store.CCSlots). Its unique index ux_cc_slot (group, slot) is the gate;
// _id is an ObjectID of each holding, not the key, so that a write aimed
// at a holding that was reclaimed meanwhile (FerretDB applies a filtered
// write to the documents it read before) cannot touch its successor,
// which has another _id. ix_cc_node (node) serves renewals and a node's
// release.
const collCCSlots = "cc_slots"

// ccSlotDoc is one document of collCCSlots.
type ccSlotDoc struct {
	ID         bson.ObjectID `bson:"_id"`
	Group      string        `bson:"group"`
	Slot       int           `bson:"slot"`
	Node       string        `bson:"node"`
	Holder     string        `bson:"holder"`
	Fence      int64         `bson:"fence"`
	LeaseUntil int64         `bson:"lease_until"`
}

func (d ccSlotDoc) slot() store.CCSlot {
	return store.CCSlot{Group: d.Group, Slot: d.Slot, Node: d.Node, Holder: d.Holder, Fence: d.Fence,
		LeaseUntil: store.FromUnixMS(d.LeaseUntil)}
}

func (s *Store) ccSlots() *collection { return s.colls.get(collCCSlots) }

// TakeCCSlot takes the lowest free index of p.Group below p.Limit
// (store.CCSlots.TakeCCSlot). It reads the group's rows, then for each
// index in turn: an expired row is deleted (by its _id and fence, still
// expired), and an index without a live row is inserted. The insert is
// the gate: a duplicate key means someone else took that index first,
// and the next one is tried. No exclusion rests on a conditional update,
// which FerretDB does not make atomic across processes.
func (s *Store) TakeCCSlot(ctx context.Context, p store.TakeCCSlotParams) (store.CCSlot, bool, error) {
	if err := p.Check(); err != nil {
		return store.CCSlot{}, false, err
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	c := s.ccSlots()
	cur, err := c.Find(ctx, bson.D{{Key: "group", Value: p.Group}, {Key: "slot", Value: bson.D{{Key: "$lt", Value: p.Limit}}}}, findOpts())
	rows, err := findAll[ccSlotDoc](ctx, cur, err)
	if err != nil {
		return store.CCSlot{}, false, fmt.Errorf("take a slot of cc group %q: %w", p.Group, translate(err))
	}
	byIndex := make(map[int]ccSlotDoc, len(rows))
	for _, r := range rows {
		byIndex[r.Slot] = r
	}
	now := store.UnixMS(p.Now)
	for i := range p.Limit {
		if r, held := byIndex[i]; held {
			if r.LeaseUntil >= now {
				continue
			}
			// Reclaim: drop the expired holding, then race for the index.
			if _, err := c.DeleteOne(ctx, bson.D{{Key: "_id", Value: r.ID}, {Key: "fence", Value: r.Fence},
				{Key: "lease_until", Value: bson.D{{Key: "$lt", Value: now}}}}); err != nil {
				return store.CCSlot{}, false, fmt.Errorf("reclaim slot %d of cc group %q: %w", i, p.Group, translate(err))
			}
		}
		d := ccSlotDoc{ID: bson.NewObjectID(), Group: p.Group, Slot: i, Node: p.Node, Holder: p.Holder,
			Fence: p.Fence, LeaseUntil: store.UnixMS(p.LeaseUntil)}
		_, err := c.InsertOne(ctx, d)
		if isDuplicate(err) {
			continue
		}
		if err != nil {
			return store.CCSlot{}, false, fmt.Errorf("take slot %d of cc group %q: %w", i, p.Group, translate(err))
		}
		return d.slot(), true, nil
	}
	return store.CCSlot{}, false, nil
}

// ReleaseCCSlot deletes (group, slot) while it still has fence.
func (s *Store) ReleaseCCSlot(ctx context.Context, group string, slot int, fence int64) error {
	ctx, cancel := s.call(ctx)
	defer cancel()
	if _, err := s.ccSlots().DeleteOne(ctx, bson.D{{Key: "group", Value: group}, {Key: "slot", Value: slot},
		{Key: "fence", Value: fence}}); err != nil {
		return fmt.Errorf("release slot %d of cc group %q: %w", slot, group, translate(err))
	}
	return nil
}

// RenewCCSlots extends the unexpired slots of node to until.
func (s *Store) RenewCCSlots(ctx context.Context, node string, now, until time.Time) (int, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	res, err := s.ccSlots().UpdateMany(ctx,
		bson.D{{Key: "node", Value: node}, {Key: "lease_until", Value: bson.D{{Key: "$gte", Value: store.UnixMS(now)}}}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "lease_until", Value: store.UnixMS(until)}}}})
	if err != nil {
		return 0, fmt.Errorf("renew cc slots of %s: %w", node, translate(err))
	}
	return int(res.MatchedCount), nil
}

// ReleaseNodeCCSlots deletes every slot of node.
func (s *Store) ReleaseNodeCCSlots(ctx context.Context, node string) (int, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	res, err := s.ccSlots().DeleteMany(ctx, bson.D{{Key: "node", Value: node}})
	if err != nil {
		return 0, fmt.Errorf("release cc slots of %s: %w", node, translate(err))
	}
	return int(res.DeletedCount), nil
}

// ListCCSlots returns every slot document by group and index.
func (s *Store) ListCCSlots(ctx context.Context) ([]store.CCSlot, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	cur, err := s.ccSlots().Find(ctx, bson.D{}, findOpts().SetSort(bson.D{{Key: "group", Value: 1}, {Key: "slot", Value: 1}}))
	docs, err := findAll[ccSlotDoc](ctx, cur, err)
	if err != nil {
		return nil, fmt.Errorf("list cc slots: %w", translate(err))
	}
	out := make([]store.CCSlot, len(docs))
	for i, d := range docs {
		out[i] = d.slot()
	}
	return out, nil
}
