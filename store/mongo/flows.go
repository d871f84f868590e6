package mongo

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"cronsheet/store"
	"cronsheet/task"
)

// Flows (store.Flows) live in the flows collection (_id the flow id) and
// executions in flow_executions (_id the execution id). Each keeps the
// domain value as JSON text in doc, beside the fields queried (flow_id,
// state, started_at) and the version, which is compared and set, never
// $inc'ed (FerretDB v1 does not make $inc atomic). Step tasks are tasks
// without a row, inserted like jobs.

const (
	collFlows      = "flows"
	collExecutions = "flow_executions"
)

type flowDoc struct {
	ID        string `bson:"_id"`
	Doc       string `bson:"doc"`
	Version   int64  `bson:"version"`
	CreatedAt int64  `bson:"created_at"`
	UpdatedAt int64  `bson:"updated_at"`
}

type execDoc struct {
	ID        string `bson:"_id"`
	FlowID    string `bson:"flow_id"`
	State     string `bson:"state"`
	StartedAt int64  `bson:"started_at"`
	Doc       string `bson:"doc"`
	Version   int64  `bson:"version"`
}

func (s *Store) flows() *collection      { return s.colls.get(collFlows) }
func (s *Store) executions() *collection { return s.colls.get(collExecutions) }

func flowText(f *task.Flow) (string, error) {
	d := *f
	d.ID, d.Version, d.CreatedAt, d.UpdatedAt = "", 0, time.Time{}, time.Time{}
	b, err := json.Marshal(&d)
	return string(b), err
}

func (d *flowDoc) flow() (*task.Flow, error) {
	var f task.Flow
	if err := json.Unmarshal([]byte(d.Doc), &f); err != nil {
		return nil, fmt.Errorf("decode flow %s: %w", d.ID, err)
	}
	f.ID, f.Version = d.ID, d.Version
	f.CreatedAt, f.UpdatedAt = store.FromUnixMS(d.CreatedAt), store.FromUnixMS(d.UpdatedAt)
	return &f, nil
}

// CreateFlow stores a new flow with version 1; a taken id is
// task.ErrConflict (the unique _id decides).
func (s *Store) CreateFlow(ctx context.Context, f *task.Flow) error {
	if f == nil || f.ID == "" {
		return fmt.Errorf("create flow: %w", task.Invalid("id", "required"))
	}
	text, err := flowText(f)
	if err != nil {
		return fmt.Errorf("create flow %s: %w", f.ID, err)
	}
	now := s.nowMS()
	ctx, cancel := s.call(ctx)
	defer cancel()
	if _, err := s.flows().InsertOne(ctx, flowDoc{ID: f.ID, Doc: text, Version: 1, CreatedAt: now, UpdatedAt: now}); err != nil {
		return fmt.Errorf("create flow %s: %w", f.ID, translate(err))
	}
	f.Version = 1
	f.CreatedAt, f.UpdatedAt = store.FromUnixMS(now), store.FromUnixMS(now)
	return nil
}

// GetFlow returns a flow or task.ErrNotFound.
func (s *Store) GetFlow(ctx context.Context, id string) (*task.Flow, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	var d flowDoc
	if err := s.flows().FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&d); err != nil {
		return nil, fmt.Errorf("get flow %s: %w", id, translate(err))
	}
	return d.flow()
}

// UpdateFlow replaces a flow's fields and bumps its version, compared and
// set: with ifVersion 0 the version read is used, read again when another
// update won in between.
func (s *Store) UpdateFlow(ctx context.Context, f *task.Flow, ifVersion int64) (*task.Flow, error) {
	text, err := flowText(f)
	if err != nil {
		return nil, fmt.Errorf("update flow %s: %w", f.ID, err)
	}
	for range maxVersionTries {
		cur, err := s.GetFlow(ctx, f.ID)
		if err != nil {
			return nil, fmt.Errorf("update flow %s: %w", f.ID, err)
		}
		if ifVersion > 0 && cur.Version != ifVersion {
			return nil, fmt.Errorf("update flow %s: %w: it is at version %d, not %d", f.ID, task.ErrConflict, cur.Version, ifVersion)
		}
		now := s.nowMS()
		cctx, cancel := s.call(ctx)
		res, err := s.flows().UpdateOne(cctx, bson.D{{Key: "_id", Value: f.ID}, {Key: "version", Value: cur.Version}},
			bson.D{{Key: "$set", Value: bson.D{{Key: "doc", Value: text}, {Key: "version", Value: cur.Version + 1},
				{Key: "updated_at", Value: now}}}})
		cancel()
		if err != nil {
			return nil, fmt.Errorf("update flow %s: %w", f.ID, translate(err))
		}
		if res.MatchedCount == 1 {
			return s.GetFlow(ctx, f.ID)
		}
		if ifVersion > 0 {
			return nil, fmt.Errorf("update flow %s: %w: another update came first", f.ID, task.ErrConflict)
		}
	}
	return nil, fmt.Errorf("update flow %s: %w: too many concurrent updates", f.ID, task.ErrConflict)
}

// DeleteFlow removes a flow; a missing one is task.ErrNotFound.
func (s *Store) DeleteFlow(ctx context.Context, id string) error {
	ctx, cancel := s.call(ctx)
	defer cancel()
	res, err := s.flows().DeleteOne(ctx, bson.D{{Key: "_id", Value: id}})
	if err != nil {
		return fmt.Errorf("delete flow %s: %w", id, translate(err))
	}
	if res.DeletedCount == 0 {
		return fmt.Errorf("delete flow %s: %w", id, task.ErrNotFound)
	}
	return nil
}

// ListFlows pages flows in id order after afterID.
func (s *Store) ListFlows(ctx context.Context, afterID string, limit int) ([]*task.Flow, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	cur, err := s.flows().Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$gt", Value: afterID}}}},
		findOpts().SetSort(bson.D{{Key: "_id", Value: 1}}).SetLimit(int64(limit)))
	if err != nil {
		return nil, fmt.Errorf("list flows: %w", translate(err))
	}
	var docs []flowDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("list flows: %w", translate(err))
	}
	out := make([]*task.Flow, 0, len(docs))
	for i := range docs {
		f, err := docs[i].flow()
		if err != nil {
			return nil, fmt.Errorf("list flows: %w", err)
		}
		out = append(out, f)
	}
	return out, nil
}

func execDocOf(e *task.Execution, version int64) (*execDoc, error) {
	d := *e
	d.Version = 0
	b, err := json.Marshal(&d)
	if err != nil {
		return nil, err
	}
	return &execDoc{ID: e.ID, FlowID: e.FlowID, State: string(e.State), StartedAt: store.UnixMS(e.StartedAt),
		Doc: string(b), Version: version}, nil
}

func (d *execDoc) execution() (*task.Execution, error) {
	var e task.Execution
	if err := json.Unmarshal([]byte(d.Doc), &e); err != nil {
		return nil, fmt.Errorf("decode execution %s: %w", d.ID, err)
	}
	e.Version = d.Version
	return &e, nil
}

// CreateExecution stores a new execution with version 1.
func (s *Store) CreateExecution(ctx context.Context, e *task.Execution) error {
	d, err := execDocOf(e, 1)
	if err != nil {
		return fmt.Errorf("create execution %s: %w", e.ID, err)
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	if _, err := s.executions().InsertOne(ctx, d); err != nil {
		return fmt.Errorf("create execution %s: %w", e.ID, translate(err))
	}
	e.Version = 1
	return nil
}

// GetExecution returns an execution or task.ErrNotFound.
func (s *Store) GetExecution(ctx context.Context, id string) (*task.Execution, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	var d execDoc
	if err := s.executions().FindOne(ctx, bson.D{{Key: "_id", Value: id}}).Decode(&d); err != nil {
		return nil, fmt.Errorf("get execution %s: %w", id, translate(err))
	}
	return d.execution()
}

// UpdateExecution replaces an execution while its version is e.Version:
// one conditional single-document write.
func (s *Store) UpdateExecution(ctx context.Context, e *task.Execution) error {
	d, err := execDocOf(e, e.Version+1)
	if err != nil {
		return fmt.Errorf("update execution %s: %w", e.ID, err)
	}
	cctx, cancel := s.call(ctx)
	defer cancel()
	res, err := s.executions().ReplaceOne(cctx, bson.D{{Key: "_id", Value: e.ID}, {Key: "version", Value: e.Version}}, d)
	if err != nil {
		return fmt.Errorf("update execution %s: %w", e.ID, translate(err))
	}
	if res.MatchedCount == 0 {
		if _, err := s.GetExecution(ctx, e.ID); err != nil {
			return fmt.Errorf("update execution %s: %w", e.ID, err)
		}
		return fmt.Errorf("update execution %s: %w: it moved past version %d", e.ID, task.ErrConflict, e.Version)
	}
	e.Version++
	return nil
}

// ListExecutions returns a flow's executions, newest first.
func (s *Store) ListExecutions(ctx context.Context, flowID string, limit int) ([]*task.Execution, error) {
	return s.findExecs(ctx, "list executions", bson.D{{Key: "flow_id", Value: flowID}},
		bson.D{{Key: "started_at", Value: -1}, {Key: "_id", Value: -1}}, limit)
}

// RunningExecutions returns running executions, oldest first.
func (s *Store) RunningExecutions(ctx context.Context, limit int) ([]*task.Execution, error) {
	return s.findExecs(ctx, "running executions", bson.D{{Key: "state", Value: string(task.ExecRunning)}},
		bson.D{{Key: "started_at", Value: 1}, {Key: "_id", Value: 1}}, limit)
}

func (s *Store) findExecs(ctx context.Context, what string, filter, sort bson.D, limit int) ([]*task.Execution, error) {
	ctx, cancel := s.call(ctx)
	defer cancel()
	cur, err := s.executions().Find(ctx, filter, findOpts().SetSort(sort).SetLimit(int64(limit)))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, translate(err))
	}
	var docs []execDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("%s: %w", what, translate(err))
	}
	out := make([]*task.Execution, 0, len(docs))
	for i := range docs {
		e, err := docs[i].execution()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		out = append(out, e)
	}
	return out, nil
}

// EnsureTask inserts t as a task without a row unless its id exists (the
// unique task_id index decides).
func (s *Store) EnsureTask(ctx context.Context, t *task.Task) error {
	if t == nil || t.TaskID == "" || t.RowID != "" {
		return fmt.Errorf("ensure task: %w", task.Invalid("task_id", "required, without a row"))
	}
	now := s.nowMS()
	ctx, cancel := s.call(ctx)
	defer cancel()
	err := s.insertJob(ctx, t, now)
	switch {
	case errors.Is(err, task.ErrConflict):
		return nil
	case err != nil:
		return fmt.Errorf("ensure task %s: %w", t.TaskID, err)
	}
	setCreated(t, now)
	return nil
}

var _ store.Flows = (*Store)(nil)
