package mongo

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"cronsheet/store"
	"cronsheet/task"
)

// Export and import of the outbox (by id), the row audit trail and job
// transitions (store.Dumper).

// RestoreOutbox stores m as dumped unless its id or trigger id is stored.
func (s *Store) RestoreOutbox(ctx context.Context, m *task.OutboxMessage) (bool, error) {
	filter := bson.D{{Key: "_id", Value: m.ID}}
	if m.TriggerID != "" {
		filter = bson.D{{Key: "$or", Value: bson.A{filter, bson.D{{Key: "tkey", Value: m.TriggerID}}}}}
	}
	cctx, cancel := s.call(ctx)
	n, err := s.outbox.CountDocuments(cctx, filter)
	cancel()
	if err != nil {
		return false, fmt.Errorf("restore outbox message %d: %w", m.ID, err)
	}
	if n > 0 {
		return false, nil
	}
	if err := s.AddOutbox(ctx, m); err != nil {
		return false, fmt.Errorf("restore outbox message %d: %w", m.ID, err)
	}
	return true, nil
}

// DumpAudit calls fn with every audit record, in id order.
func (s *Store) DumpAudit(ctx context.Context, fn func(*store.AuditRecord) error) error {
	err := each(ctx, s.colls.get(collAudit), bson.D{{Key: "_id", Value: 1}}, func(d *auditDoc) error {
		return fn(&store.AuditRecord{ID: d.ID, Scenario: d.Scenario, RowID: d.RowID, Action: d.Action,
			Who: d.Who, At: store.FromUnixMS(d.At), Old: plainFields(d.Old), New: plainFields(d.New)})
	})
	if err != nil {
		return fmt.Errorf("dump audit: %w", err)
	}
	return nil
}

// RestoreAudit stores rec as dumped, its id kept, unless the id is stored.
func (s *Store) RestoreAudit(ctx context.Context, rec *store.AuditRecord) (bool, error) {
	if rec == nil || rec.ID < 1 {
		return false, fmt.Errorf("restore audit: %w", task.Invalid("id", "must be positive"))
	}
	if err := s.prepareAudit(ctx); err != nil {
		return false, fmt.Errorf("restore audit %d: %w", rec.ID, err)
	}
	d := auditDoc{ID: rec.ID, Scenario: rec.Scenario, RowID: rec.RowID, Action: rec.Action, Who: rec.Who,
		At: store.UnixMS(rec.At), Old: rec.Old, New: rec.New}
	ok, err := s.insertUnlessStored(ctx, s.colls.get(collAudit), d)
	if err != nil {
		return false, fmt.Errorf("restore audit %d: %w", rec.ID, err)
	}
	return ok, nil
}

// DumpJobEvents calls fn with every job transition, by job, oldest first.
func (s *Store) DumpJobEvents(ctx context.Context, fn func(store.JobEvent) error) error {
	sort := bson.D{{Key: "job_id", Value: 1}, {Key: "at", Value: 1}, {Key: "_id", Value: 1}}
	err := each(ctx, s.jobEvents, sort, func(d *jobEventDoc) error {
		return fn(store.JobEvent{JobID: d.JobID, At: store.FromUnixMS(d.At), State: d.State,
			TriggerID: d.TriggerID, Attempt: d.Attempt, Reason: d.Reason})
	})
	if err != nil {
		return fmt.Errorf("dump job events: %w", err)
	}
	return nil
}

// RestoreJobEvents stores one job's transitions unless it has some.
func (s *Store) RestoreJobEvents(ctx context.Context, jobID string, evs []store.JobEvent) (bool, error) {
	for i, ev := range evs {
		if jobID == "" || ev.JobID != jobID {
			return false, fmt.Errorf("restore job events: %w",
				task.Invalid("job_id", "event %d names job %q, not %q", i, task.Truncate(ev.JobID, 70), task.Truncate(jobID, 70)))
		}
	}
	cctx, cancel := s.call(ctx)
	var d jobEventDoc
	err := s.jobEvents.FindOne(cctx, bson.D{{Key: "job_id", Value: jobID}}).Decode(&d)
	cancel()
	switch {
	case err == nil || len(evs) == 0:
		return false, nil
	case !errors.Is(err, mongo.ErrNoDocuments):
		return false, fmt.Errorf("restore events of job %s: %w", jobID, err)
	}
	for len(evs) > 0 {
		k := min(len(evs), store.MaxStatusBatch)
		if err := s.AddJobEvents(ctx, evs[:k]); err != nil {
			return false, fmt.Errorf("restore events of job %s: %w", jobID, err)
		}
		evs = evs[k:]
	}
	return true, nil
}
