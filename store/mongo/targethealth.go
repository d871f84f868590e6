package mongo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"cronsheet/store"
	"cronsheet/task"
)

var _ store.TargetHealthBook = (*Store)(nil)

// The targets' health (store.TargetHealthBook) lives in the target_health
// collection, keyed by _id alone, in documents that no two kinds of
// outcome share:
//
//	"<target>/<src>/ok"    {s}               written by successes only ($max)
//	"<target>/<src>/fail"  {f, e, c, b, v}   written by failures only (compare-and-set on v)
//	"<target>/probe/<slot>"                  a probe slot's claim (insert only)
//
// with src "d" (deliveries) or "p" (the probe). A success never rewrites
// the failure document, nor a failure the success document, so even on
// FerretDB v1, where two processes writing one document at once can lose
// one write, a failure cannot undo a reset: a reset is S passing F, and
// only successes write S. What several processes racing on FerretDB can
// lose is one of two concurrent failures (the count is then short by
// one, never below 0) or, of two concurrent successes, the later instant.
// Within one process the write gate (collection.go) serialises them. The
// probe claims are exact everywhere: the unique _id refuses a second
// claim of a slot.
const collTargetHealth = "target_health"

func (s *Store) targetHealth() *collection { return s.colls.get(collTargetHealth) }

// healthIDs are the _ids of a target's health documents for a source.
func healthIDs(target string, probe bool) (ok, fail string) {
	p := target + "/" + sourceOf(probe) + "/"
	return p + "ok", p + "fail"
}

func sourceOf(probe bool) string {
	if probe {
		return "p"
	}
	return "d"
}

type healthOKDoc struct {
	ID string `bson:"_id"`
	S  int64  `bson:"s"`
}

type healthFailDoc struct {
	ID string `bson:"_id"`
	F  int64  `bson:"f"`
	E  string `bson:"e"`
	C  int    `bson:"c"`
	B  int64  `bson:"b"`
	V  int64  `bson:"v"`
}

// maxHealthTries bounds the compare-and-set retries of one failure.
const maxHealthTries = 10

// RecordTargetOutcomes records each outcome: its success with $max on the
// success document, then its failure by compare-and-set of the failure
// document, computed by store.HealthParts.Apply from both as read.
func (s *Store) RecordTargetOutcomes(ctx context.Context, outcomes []store.TargetOutcome) error {
	os, err := store.CheckTargetOutcomes(outcomes)
	if err != nil {
		return fmt.Errorf("record target outcomes: %w", err)
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	for _, o := range os {
		if err := s.recordOutcome(ctx, o); err != nil {
			return fmt.Errorf("record outcome of target %s: %w", o.Target, err)
		}
	}
	return nil
}

func (s *Store) recordOutcome(ctx context.Context, o store.TargetOutcome) error {
	okID, failID := healthIDs(o.Target, o.Probe)
	c := s.targetHealth()
	if !o.Success.IsZero() {
		err := s.maxSuccess(ctx, c, okID, store.UnixMS(o.Success))
		if err != nil {
			return err
		}
	}
	if o.Failure.IsZero() {
		return nil
	}
	s.healthMu.Lock()
	defer s.healthMu.Unlock()
	for range maxHealthTries {
		var okd healthOKDoc
		if err := c.FindOne(ctx, bson.D{{Key: "_id", Value: okID}}).Decode(&okd); err != nil && !errors.Is(err, mongo.ErrNoDocuments) {
			return err
		}
		var fd healthFailDoc
		err := c.FindOne(ctx, bson.D{{Key: "_id", Value: failID}}).Decode(&fd)
		found := err == nil
		if err != nil && !errors.Is(err, mongo.ErrNoDocuments) {
			return err
		}
		h := store.HealthParts{S: okd.S, F: fd.F, E: fd.E, C: fd.C, B: fd.B}.Apply(o)
		next := healthFailDoc{ID: failID, F: h.F, E: h.E, C: h.C, B: h.B, V: fd.V + 1}
		if !found {
			_, err = c.InsertOne(ctx, next)
			if isDuplicate(err) {
				continue // another failure made it first
			}
			return err
		}
		res, err := c.UpdateOne(ctx, bson.D{{Key: "_id", Value: failID}, {Key: "v", Value: fd.V}},
			bson.D{{Key: "$set", Value: bson.D{{Key: "f", Value: next.F}, {Key: "e", Value: next.E},
				{Key: "c", Value: next.C}, {Key: "b", Value: next.B}, {Key: "v", Value: next.V}}}})
		if err != nil {
			return err
		}
		if res.MatchedCount == 1 {
			return nil
		}
	}
	return fmt.Errorf("%w: the failure record changed %d times while it was written", task.ErrConflict, maxHealthTries)
}

// maxSuccess raises the success document's instant to ms (an upsert; a
// concurrent first insert is retried once as an update).
func (s *Store) maxSuccess(ctx context.Context, c *collection, id string, ms int64) error {
	up := bson.D{{Key: "$max", Value: bson.D{{Key: "s", Value: ms}}}}
	_, err := c.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}}, up, options.UpdateOne().SetUpsert(true))
	if isDuplicate(err) {
		_, err = c.UpdateOne(ctx, bson.D{{Key: "_id", Value: id}}, up)
	}
	return err
}

// TargetHealth reads the health documents of ids.
func (s *Store) TargetHealth(ctx context.Context, ids []string) (map[string]task.TargetHealth, error) {
	out := map[string]task.TargetHealth{}
	if len(ids) == 0 {
		return out, nil
	}
	type key struct {
		target string
		probe  bool
	}
	want := map[string]key{}
	var all []string
	for _, id := range ids {
		for _, probe := range []bool{false, true} {
			ok, fail := healthIDs(id, probe)
			want[ok], want[fail] = key{id, probe}, key{id, probe}
			all = append(all, ok, fail)
		}
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	cur, err := s.targetHealth().Find(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: all}}}}, findOpts())
	docs, err := findAll[bson.M](ctx, cur, err)
	if err != nil {
		return nil, fmt.Errorf("read target health: %w", err)
	}
	parts := map[key]store.HealthParts{}
	for _, d := range docs {
		id, _ := d["_id"].(string)
		k := want[id]
		h := parts[k]
		if _, isOK := d["s"]; isOK {
			h.S = asInt64(d["s"])
		} else {
			h.F, h.B, h.C = asInt64(d["f"]), asInt64(d["b"]), int(asInt64(d["c"]))
			h.E, _ = d["e"].(string)
		}
		parts[k] = h
	}
	for k, h := range parts {
		th := out[k.target]
		rec := h.Record()
		if k.probe {
			th.Probe = &rec
		} else {
			th.HealthRecord = rec
		}
		out[k.target] = th
	}
	return out, nil
}

// probeClaimPrefix is the _id prefix of a target's probe claims; a
// claim's _id ends with its slot in Unix ms, zero-padded so that _ids
// sort as slots do.
func probeClaimPrefix(target string) string { return target + "/probe/" }

// ClaimTargetProbe inserts the claim of target's slot (the unique _id
// lets one caller win), refusing a slot not after one already claimed,
// and deletes the target's older claims.
func (s *Store) ClaimTargetProbe(ctx context.Context, target string, slot time.Time) (bool, error) {
	if target == "" {
		return false, fmt.Errorf("claim target probe: %w", task.Invalid("target", "required"))
	}
	ctx, cancel := s.call(ctx)
	defer cancel()
	c := s.targetHealth()
	prefix := probeClaimPrefix(target)
	id := fmt.Sprintf("%s%015d", prefix, store.UnixMS(slot))
	later := c.FindOne(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: id}, {Key: "$lt", Value: prefix + "~"}}}})
	if err := later.Err(); err == nil {
		return false, nil
	} else if !errors.Is(err, mongo.ErrNoDocuments) {
		return false, fmt.Errorf("claim probe of target %s: %w", target, err)
	}
	if _, err := c.InsertOne(ctx, bson.D{{Key: "_id", Value: id}}); err != nil {
		if isDuplicate(err) {
			return false, nil
		}
		return false, fmt.Errorf("claim probe of target %s: %w", target, err)
	}
	if _, err := c.DeleteMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: prefix}, {Key: "$lt", Value: id}}}}); err != nil {
		return true, fmt.Errorf("claim probe of target %s: delete older claims: %w", target, err)
	}
	return true, nil
}

// forgetHealth deletes a deleted target's health and probe claims.
func (s *Store) forgetHealth(ctx context.Context, id string) error {
	_, err := s.targetHealth().DeleteMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$gte", Value: id + "/"}, {Key: "$lt", Value: id + "0"}}}})
	return err
}
