package mongo

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"

	"cronsheet/store"
	"cronsheet/task"
)

// DumpFlows calls fn with every flow, in id order.
func (s *Store) DumpFlows(ctx context.Context, fn func(*task.Flow) error) error {
	return store.DumpFlowPages(ctx, s, fn)
}

// DumpExecutions calls fn with every execution, in id order.
func (s *Store) DumpExecutions(ctx context.Context, fn func(*task.Execution) error) error {
	return store.DumpExecutionPages(ctx, func(ctx context.Context, after string, limit int) ([]*task.Execution, error) {
		return s.findExecs(ctx, "dump executions", bson.D{{Key: "_id", Value: bson.D{{Key: "$gt", Value: after}}}},
			bson.D{{Key: "_id", Value: 1}}, limit)
	}, fn)
}

// RestoreFlow stores f as dumped unless its id is stored.
func (s *Store) RestoreFlow(ctx context.Context, f *task.Flow) (bool, error) {
	if f == nil || f.ID == "" {
		return false, fmt.Errorf("restore flow: %w", task.Invalid("id", "required"))
	}
	text, err := flowText(f)
	if err != nil {
		return false, fmt.Errorf("restore flow %s: %w", f.ID, err)
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	_, err = s.flows().InsertOne(ctx, flowDoc{ID: f.ID, Doc: text, Version: max(f.Version, 1),
		CreatedAt: store.UnixMS(f.CreatedAt), UpdatedAt: store.UnixMS(f.UpdatedAt)})
	return restored(err, "flow", f.ID)
}

// RestoreExecution stores e as dumped unless its id is stored.
func (s *Store) RestoreExecution(ctx context.Context, e *task.Execution) (bool, error) {
	if e == nil || e.ID == "" {
		return false, fmt.Errorf("restore execution: %w", task.Invalid("id", "required"))
	}
	d, err := execDocOf(e, max(e.Version, 1))
	if err != nil {
		return false, fmt.Errorf("restore execution %s: %w", e.ID, err)
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	_, err = s.executions().InsertOne(ctx, d)
	return restored(err, "execution", e.ID)
}

// restored reads an insert's error: a taken id is not an error, only not
// inserted.
func restored(err error, what, id string) (bool, error) {
	switch err = translate(err); {
	case err == nil:
		return true, nil
	case errors.Is(err, task.ErrConflict):
		return false, nil
	}
	return false, fmt.Errorf("restore %s %s: %w", what, id, err)
}

var _ store.FlowDumper = (*Store)(nil)
