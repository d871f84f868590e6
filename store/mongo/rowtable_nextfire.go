package mongo

import (
	"context"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"cronsheet/store"
)

// nextFireRanges splits the rows filter keeps in the two ranges a next fire
// page reads one after the other: rows with a next fire (next_fire > 0) and
// rows without. Ascending, the scheduled rows come first; descending, the
// idle ones. The two ranges partition the rows (a missing or null
// next_fire is idle), so the pages neither overlap nor skip a row.
func nextFireRanges(filter bson.D, desc bool) [2]bson.D {
	has := bson.D{{Key: "$gt", Value: int64(0)}}
	scheduled, idle := withNextFire(filter, has), withNextFire(filter, bson.D{{Key: "$not", Value: has}})
	if desc {
		return [2]bson.D{idle, scheduled}
	}
	return [2]bson.D{scheduled, idle}
}

// withNextFire is filter with a condition on next_fire: beside its other
// keys (FerretDB v1 pushes a top-level scenario equality down to
// PostgreSQL, not one inside $and), or with $and when filter already has
// one (the due filter).
func withNextFire(filter, cond bson.D) bson.D {
	for _, e := range filter {
		if e.Key == "next_fire" {
			return bson.D{{Key: "$and", Value: bson.A{filter, bson.D{{Key: "next_fire", Value: cond}}}}}
		}
	}
	return append(slices.Clone(filter), bson.E{Key: "next_fire", Value: cond})
}

// nextFireDocs reads the page of a next fire sort: skip and limit over the
// first range, and, when the page runs past its end, the rest from the
// start of the second. Both ranges are walks of ix_rows_next_fire
// (scenario, next_fire, _id) in p.sort's order, which within the idle
// range is _id order. Only a page wholly past the first range counts it,
// and then no further than q.Offset.
func (s *Store) nextFireDocs(ctx context.Context, p *rowPlan, q store.RowQuery) ([]rowDoc, error) {
	ranges := nextFireRanges(p.filter, q.Sort.Desc)
	docs, err := s.findRange(ctx, p, ranges[0], int64(q.Offset), int64(q.Limit))
	if err != nil || len(docs) == q.Limit {
		return docs, err
	}
	// Fewer than a page: the first range ends inside it (it held exactly
	// Offset+len(docs) rows) or before it (count how many it held).
	skip := int64(0)
	if len(docs) == 0 && q.Offset > 0 {
		n, err := s.rows.CountDocuments(ctx, ranges[0], options.Count().SetLimit(int64(q.Offset)))
		if err != nil {
			return nil, err
		}
		skip = int64(q.Offset) - n
	}
	more, err := s.findRange(ctx, p, ranges[1], skip, int64(q.Limit-len(docs)))
	if err != nil {
		return nil, err
	}
	return append(docs, more...), nil
}

// findRange reads limit rows of one range after skipping skip, in p's order
// (with p's index hint when p has one).
func (s *Store) findRange(ctx context.Context, p *rowPlan, filter bson.D, skip, limit int64) ([]rowDoc, error) {
	opts := findOpts().SetSort(p.sort).SetSkip(skip).SetLimit(limit).SetProjection(rowProjection())
	if p.hinted {
		opts.SetHint(p.hint)
	}
	cur, err := s.rows.Find(ctx, filter, opts)
	return findAll[rowDoc](ctx, cur, err)
}
