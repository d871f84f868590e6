package mongo

import (
	"context"

	"go.mongodb.org/mongo-driver/v2/bson"

	"cronsheet/store"
)

// ExplainRows asks the server to explain (queryPlanner verbosity) the
// commands QueryRows sends for q: "page" (the find), "total" (the count of
// the scenario) and, with a search, "filtered" (the count of its matches).
func ExplainRows(ctx context.Context, s *Store, q store.RowQuery) (map[string]bson.M, error) {
	p, err := s.planRows(ctx, q)
	if err != nil {
		return nil, err
	}
	find := bson.D{{Key: "find", Value: collRows}, {Key: "filter", Value: p.filter}, {Key: "sort", Value: p.sort},
		{Key: "skip", Value: int64(q.Offset)}, {Key: "limit", Value: int64(q.Limit)}, {Key: "projection", Value: rowProjection()}}
	if q.Search == "" && !s.ferret {
		find = append(find, bson.E{Key: "hint", Value: p.hint})
	}
	cmds := map[string]bson.D{
		"page":  find,
		"total": {{Key: "count", Value: collRows}, {Key: "query", Value: p.scope}, {Key: "limit", Value: s.countCap}},
	}
	if q.Search != "" {
		cmds["filtered"] = bson.D{{Key: "count", Value: collRows}, {Key: "query", Value: p.filter}, {Key: "limit", Value: s.countCap}}
	}
	out := map[string]bson.M{}
	for name, cmd := range cmds {
		var res bson.M
		err := s.db.RunCommand(ctx, bson.D{{Key: "explain", Value: cmd}, {Key: "verbosity", Value: "queryPlanner"}}).Decode(&res)
		if err != nil {
			return nil, err
		}
		out[name] = res
	}
	return out, nil
}

// IsFerretDB reports whether s is connected to FerretDB.
func IsFerretDB(s *Store) bool { return s.ferret }
