package mongo

import (
	"context"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
)

// rowlessBatch is how many row keys one lookup of RetireRowless asks for.
const rowlessBatch = 500

// RetireRowless retires owner's claimed tasks whose row is gone
// (store.Tasks.RetireRowless): it reads owner's claims of a row
// (ix_task_owner), looks their rows up by key in batches (the rows'
// unique (scenario, id) index), and retires each task whose row none
// returned, by one conditional update on its version that also needs it
// not deleted. There are no joins on FerretDB, hence the two steps; a
// row put back between them is synced again, and ApplySync revives a
// retired task.
func (s *Store) RetireRowless(ctx context.Context, owner string) ([]string, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	filter := append(ownedBy(owner), bson.E{Key: "row_id", Value: bson.D{{Key: "$ne", Value: ""}}},
		bson.E{Key: "deleted", Value: 0})
	proj := bson.D{{Key: "task_id", Value: 1}, {Key: "scenario", Value: 1}, {Key: "row_id", Value: 1}, {Key: "version", Value: 1}}
	cur, err := s.tasks.Find(ctx, filter, findOpts().SetProjection(proj))
	docs, err := findAll[taskDoc](ctx, cur, err)
	if err != nil {
		return nil, fmt.Errorf("list row tasks of %s: %w", owner, translate(err))
	}
	byScenario := map[string][]taskDoc{}
	for _, d := range docs {
		byScenario[d.Scenario] = append(byScenario[d.Scenario], d)
	}
	var out []string
	for scenario, ds := range byScenario {
		for start := 0; start < len(ds); start += rowlessBatch {
			chunk := ds[start:min(start+rowlessBatch, len(ds))]
			gone, err := s.missingRows(ctx, scenario, chunk)
			if err != nil {
				return out, fmt.Errorf("look up rows of %s's tasks: %w", owner, err)
			}
			for _, d := range gone {
				ok, err := s.retireRowless(ctx, d)
				if err != nil {
					return out, fmt.Errorf("retire rowless task %s: %w", d.TaskID, err)
				}
				if ok {
					out = append(out, d.TaskID)
				}
			}
		}
	}
	return out, nil
}

// missingRows returns the tasks of ds (all of scenario) whose row is gone.
func (s *Store) missingRows(ctx context.Context, scenario string, ds []taskDoc) ([]taskDoc, error) {
	ids := make([]string, len(ds))
	for i, d := range ds {
		ids[i] = d.RowID
	}
	filter := bson.D{{Key: "scenario", Value: scenario}, {Key: "id", Value: bson.D{{Key: "$in", Value: ids}}}}
	cur, err := s.rows.Find(ctx, filter, findOpts().SetProjection(bson.D{{Key: "id", Value: 1}}))
	rows, err := findAll[rowDoc](ctx, cur, err)
	if err != nil {
		return nil, translate(err)
	}
	present := make(map[string]bool, len(rows))
	for _, r := range rows {
		present[r.ID] = true
	}
	var gone []taskDoc
	for _, d := range ds {
		if !present[d.RowID] {
			gone = append(gone, d)
		}
	}
	return gone, nil
}

// retireRowless retires d at the version read; false when it changed.
func (s *Store) retireRowless(ctx context.Context, d taskDoc) (bool, error) {
	filter := bson.D{{Key: "task_id", Value: d.TaskID}, {Key: "version", Value: d.Version}, {Key: "deleted", Value: 0}}
	res, err := s.tasks.UpdateOne(ctx, filter, bson.D{
		{Key: "$set", Value: bson.D{{Key: "deleted", Value: 1}, {Key: "is_enable", Value: 0}, {Key: "updated_at", Value: s.nowMS()},
			{Key: "arm_at", Value: int64(0)}}},
		{Key: "$inc", Value: bson.D{{Key: "version", Value: 1}}},
	})
	if err != nil {
		return false, translate(err)
	}
	return res.ModifiedCount == 1, nil
}
