package mongo

import (
	"context"
	"slices"

	"go.mongodb.org/mongo-driver/v2/bson"

	"cronsheet/store"
)

// ExplainRows asks the server to explain (queryPlanner verbosity) the
// commands QueryRows sends for q: "page" (the find), "total" (the count of
// the scenario), "tasks" (the find of the page's tasks, for two row ids)
// and, with a search, "filtered" (the count of its matches; counts are the
// aggregate CountDocuments sends).
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
		"total": countCommand(p.scope, s.countCap),
		"tasks": {{Key: "find", Value: collTasks}, {Key: "filter", Value: rowTasksFilter(q.Scenario, []string{"r00", "r01"})},
			{Key: "projection", Value: rowTasksProjection()}},
	}
	if q.Sort.Column == store.SortNextFire {
		// The page is two reads (nextFireDocs): each range on its own.
		for i, r := range nextFireRanges(p.filter, q.Sort.Desc) {
			cmd := slices.Clone(find)
			cmd[1].Value = r
			cmds[[]string{"page", "page, second range"}[i]] = cmd
		}
	}
	if q.Search != "" {
		cmds["filtered"] = countCommand(p.filter, s.countCap)
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

// countCommand is the aggregate that the driver's CountDocuments sends for
// filter with a limit.
func countCommand(filter bson.D, limit int64) bson.D {
	return bson.D{{Key: "aggregate", Value: collRows}, {Key: "pipeline", Value: bson.A{
		bson.D{{Key: "$match", Value: filter}},
		bson.D{{Key: "$limit", Value: limit}},
		bson.D{{Key: "$group", Value: bson.D{{Key: "_id", Value: 1}, {Key: "n", Value: bson.D{{Key: "$sum", Value: 1}}}}}},
	}}, {Key: "cursor", Value: bson.D{}}}
}

// IsFerretDB reports whether s is connected to FerretDB.
func IsFerretDB(s *Store) bool { return s.ferret }
