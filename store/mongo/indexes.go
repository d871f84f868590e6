package mongo

import (
	"context"
	"errors"
	"fmt"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Index choices.
//
// Unique indexes are the arbiters of every race this driver has (they hold
// on FerretDB too, where single-document updates are not atomic under
// concurrency):
//
//   - rows ux_rows_key (scenario, id): one row per key; it also serves
//     GetRow and keyset ListRows.
//   - time_task ux_task_id (task_id): one task per id.
//   - runs ux_runs_key (task_id, slot, target): the fire ledger's gate; it
//     also serves ListRuns (newest slot first).
//   - runs ux_runs_trigger (trigger_id): GetRun, UpdateRun.
//   - outbox ux_outbox_tkey (tkey): one message per run. tkey is the run's
//     trigger id, or "id:<_id>" for a message without one, so the index
//     needs no partial filter (which FerretDB v1 does not support).
//   - job_keys and job_moves need only their _id (the key; the replaced
//     job's id), unique by nature: a key is held by one job at a time and
//     a job is replaced once (jobs.go). JobByKey is an _id lookup.
//
// Every patrol query has its own index:
//
//   - rows ix_rows_unfetched (is_fetched, updated_at): ListUnfetchedRows.
//   - time_task ix_task_claim (is_enable, is_claimed, is_done, arm_at, _id):
//     the claim, soonest arming instant first (then oldest), without a
//     sort. (It replaced ix_task_due, without arm_at; a database created
//     before keeps that one too, unused.)
//   - time_task ix_task_owner (claimed_by, is_claimed): RenewLeases,
//     ListClaimed, ReleaseTask.
//   - time_task ix_task_lease (is_claimed, lease_until): ReleaseExpired.
//     Unlike the SQLite driver's schema, lease_until is indexed: a renewal
//     rewrites one index entry per held task, which MongoDB absorbs, and
//     the reclaim patrol must not scan every claimed task on each pass.
//   - time_task ix_task_row (scenario, row_id): a row's task (ApplySync,
//     DeleteRow).
//   - time_task ix_task_deleted (deleted, is_claimed): PurgeDeleted.
//   - time_task ix_task_created (scenario, created_at, task_id): ListJobs,
//     the jobs API's list, newest first.
//   - runs ix_runs_sched (task_id, trigger_type, slot): LastSlot.
//   - runs ix_runs_unfinished (task_id, state, slot): UnfinishedRuns, and
//     a task's finished runs newest slot first (CleanupRuns' KeepPerTask).
//   - runs ix_runs_deadline (state, deadline): ExpireAccepted. A partial
//     index on state "accepted" would be smaller, but FerretDB v1 has no
//     partial indexes, so every run has an entry (deadline 0 when unset).
//   - runs ix_runs_finished (state, finished_at): CleanupRuns' OlderThan.
//
// The retention patrol (retention.go) walks each kind by (age, key), a
// range read with no sort: runs ix_runs_final_age (finished_at,
// trigger_id), outbox ix_outbox_created (created_at, _id), flow_executions
// ix_executions_started (started_at, _id), audit ix_audit_at (at, _id,
// made with the audit's other index) and jobs ix_task_created. Runs pay
// one index entry more at insert and at finish; the others are written
// at insert only.
//
// QueryRuns pages newest first by (fired_at, trigger_id), optionally for
// one task or one target:
//
//   - runs ix_runs_fired (fired_at, trigger_id): all runs.
//   - runs ix_runs_task_fired (task_id, fired_at, trigger_id): one task's.
//   - runs ix_runs_target_fired (target, fired_at, trigger_id): one
//     target's.
//
// job_events ix_job_events (job_id, at, _id): JobEvents, one job's
// transitions oldest first as an index range, no sort. _id (an ObjectID
// the driver makes in insertion order) orders events of the same
// millisecond, as no sequence can be counted atomically on FerretDB v1.
//
// A state filter alone walks ix_runs_fired and skips the other states (a
// fifth sort index on a collection every fire writes was not worth it).
// targets needs no index but its _id (the target id); nor does flows.
//
// cc_slots ux_cc_slot (group, slot): the gate of the cluster-wide
// concurrency groups (ccslots.go); ix_cc_node (node): a node's renewal
// and release.
//
// flow_executions ix_executions_flow (flow_id, started_at, _id):
// ListExecutions; ix_executions_state (state, started_at, _id):
// RunningExecutions (resumption).
type indexSpec struct {
	coll   *collection
	name   string
	keys   bson.D
	unique bool
}

// partialFilters are the partialFilterExpressions of the partial indexes,
// by name: only documents matching one are in its index.
var partialFilters = map[string]bson.D{"ix_task_absent": overdueFilter}

func (s *Store) indexSpecs() []indexSpec {
	k := func(names ...string) bson.D {
		d := make(bson.D, len(names))
		for i, n := range names {
			d[i] = bson.E{Key: n, Value: 1}
		}
		return d
	}
	return []indexSpec{
		{s.rows, "ux_rows_key", k("scenario", "id"), true},
		{s.rows, "ix_rows_unfetched", k("is_fetched", "updated_at"), false},

		{s.tasks, "ux_task_id", k("task_id"), true},
		{s.tasks, "ix_task_claim", k("is_enable", "is_claimed", "is_done", "arm_at", "_id"), false},
		{s.tasks, "ix_task_owner", k("claimed_by", "is_claimed"), false},
		{s.tasks, "ix_task_lease", k("is_claimed", "lease_until"), false},
		{s.tasks, "ix_task_row", k("scenario", "row_id"), false},
		{s.tasks, "ix_task_deleted", k("deleted", "is_claimed"), false},
		{s.tasks, "ix_task_created", k("scenario", "created_at", "task_id"), false},
		{s.tasks, "ix_task_absent", k("next_fire"), false},

		{s.runs, "ux_runs_key", k("task_id", "slot", "target"), true},
		{s.runs, "ux_runs_trigger", k("trigger_id"), true},
		{s.runs, "ix_runs_sched", k("task_id", "trigger_type", "slot"), false},
		{s.runs, "ix_runs_unfinished", k("task_id", "state", "slot"), false},
		{s.runs, "ix_runs_deadline", k("state", "deadline"), false},
		{s.runs, "ix_runs_finished", k("state", "finished_at"), false},
		{s.runs, "ix_runs_fired", k("fired_at", "trigger_id"), false},
		{s.runs, "ix_runs_task_fired", k("task_id", "fired_at", "trigger_id"), false},
		{s.runs, "ix_runs_target_fired", k("target", "fired_at", "trigger_id"), false},
		{s.runs, "ix_runs_final_age", k("finished_at", "trigger_id"), false},

		{s.outbox, "ux_outbox_tkey", k("tkey"), true},
		{s.outbox, "ix_outbox_created", k("created_at", "_id"), false},

		{s.jobEvents, "ix_job_events", k("job_id", "at", "_id"), false},

		{s.executions(), "ix_executions_flow", k("flow_id", "started_at", "_id"), false},
		{s.executions(), "ix_executions_state", k("state", "started_at", "_id"), false},
		{s.executions(), "ix_executions_started", k("started_at", "_id"), false},

		{s.ccSlots(), "ux_cc_slot", k("group", "slot"), true},
		{s.ccSlots(), "ix_cc_node", k("node"), false},
	}
}

// createIndexes creates every index that does not exist yet, by name. An
// index whose name exists is left as it is (FerretDB v1 panics when asked
// to create an index that exists, so existing ones are not sent again).
func (s *Store) createIndexes(ctx context.Context) error {
	// Tasks stored before arm_at existed get it (0: claimable), so that
	// the claim's arm_at bound, which a missing field never matches, and
	// its sort see every task.
	if _, err := s.tasks.UpdateMany(ctx, bson.D{{Key: "arm_at", Value: bson.D{{Key: "$exists", Value: false}}}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "arm_at", Value: int64(0)}}}}); err != nil {
		return fmt.Errorf("set arm_at on older tasks: %w", err)
	}
	return s.ensureIndexes(ctx, append(s.indexSpecs(), s.rowTableIndexes()...))
}

// ensureIndexes creates those of specs whose name does not exist yet.
func (s *Store) ensureIndexes(ctx context.Context, specs []indexSpec) error {
	byColl := map[*collection][]indexSpec{}
	var order []*collection
	for _, ix := range specs {
		if _, seen := byColl[ix.coll]; !seen {
			order = append(order, ix.coll)
		}
		byColl[ix.coll] = append(byColl[ix.coll], ix)
	}
	for _, c := range order {
		have, err := indexNames(ctx, c)
		if err != nil {
			return fmt.Errorf("list indexes of %s: %w", c.Name(), err)
		}
		models := func(partial bool) []mongo.IndexModel {
			var out []mongo.IndexModel
			for _, ix := range byColl[c] {
				if have[ix.name] {
					continue
				}
				opts := options.Index().SetName(ix.name)
				if ix.unique {
					opts.SetUnique(true)
				}
				if f, ok := partialFilters[ix.name]; ok && partial {
					opts.SetPartialFilterExpression(f)
				}
				out = append(out, mongo.IndexModel{Keys: ix.keys, Options: opts})
			}
			return out
		}
		if len(models(true)) == 0 {
			continue
		}
		_, err = c.Indexes().CreateMany(ctx, models(true))
		var ce mongo.CommandError
		if errors.As(err, &ce) && ce.Code == codeNotImplemented {
			// FerretDB v1 has no partial indexes: those are full there.
			_, err = c.Indexes().CreateMany(ctx, models(false))
		}
		if err != nil {
			return fmt.Errorf("create indexes of %s: %w", c.Name(), err)
		}
	}
	return nil
}

// codeNamespaceNotFound is MongoDB's error code for a missing collection.
const codeNamespaceNotFound = 26

// codeNotImplemented is the error code of an option the server lacks.
const codeNotImplemented = 238

// indexNames returns the names of c's indexes (none when c does not exist).
func indexNames(ctx context.Context, c *collection) (map[string]bool, error) {
	specs, err := c.Indexes().ListSpecifications(ctx)
	var ce mongo.CommandError
	if errors.As(err, &ce) && ce.Code == codeNamespaceNotFound {
		return map[string]bool{}, nil
	}
	if err != nil {
		return nil, err
	}
	names := make(map[string]bool, len(specs))
	for _, sp := range specs {
		names[sp.Name] = true
	}
	return names, nil
}
