package mongo_test

import (
	"fmt"
	"slices"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"cronsheet/store"
	"cronsheet/store/mongo"
	"cronsheet/store/storetest"
	"cronsheet/task"
)

func TestRowTableConformance(t *testing.T) {
	uri := testURI(t)
	storetest.RunRowTable(t, func(t *testing.T) storetest.RowTableStore { return keepOpen{openTemp(t, uri)} })
}

// ferretPlanReason is why TestRowTablePlans cannot check index use on
// FerretDB (docs/FERRETDB.md).
const ferretPlanReason = "FerretDB v1 answers explain with PostgreSQL's plan of its own SQL: " +
	"a page's scenario filter is pushed down as a JSONB containment (_jsonb->'scenario' @> ...), " +
	"which PostgreSQL serves with a Seq Scan, not the index; counts are not pushed down, and " +
	"sorts, skips and limits run in FerretDB (sortPushdown, limitPushdown false). " +
	"The indexes exist there but are not used; no-scan is checked on MongoDB only (docs/FERRETDB.md)"

// TestRowTablePlans explains every command a table page sends and checks
// that none reads the collection: each is an index scan, and a page without
// a search takes its order from the index (no SORT stage).
func TestRowTablePlans(t *testing.T) {
	s := openTemp(t, testURI(t))
	ctx := t.Context()
	for i := range 50 {
		row := &task.Row{Scenario: "memos", ID: fmt.Sprintf("r%02d", i), IsActive: 1,
			Fields: map[string]any{"title": fmt.Sprintf("提醒 title %d", i), "n": i}}
		if err := s.InsertRow(ctx, row); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PrepareRowTable(ctx, "memos", []string{"title", "n"}); err != nil {
		t.Fatal(err)
	}
	queries := []store.RowQuery{
		{Scenario: "memos", Limit: 10},
		{Scenario: "memos", Limit: 10, Offset: 40, Sort: store.RowSort{Desc: true}},
		{Scenario: "memos", Limit: 10, Sort: store.RowSort{Field: "title"}},
		{Scenario: "memos", Limit: 10, Offset: 20, Sort: store.RowSort{Field: "n", Desc: true}},
		{Scenario: "memos", Limit: 10, Sort: store.RowSort{Column: store.SortIsActive}},
		{Scenario: "memos", Limit: 10, Sort: store.RowSort{Column: store.SortNextFire, Desc: true}},
		{Scenario: "memos", Limit: 10, Sort: store.RowSort{Column: store.SortLastFire}},
		{Scenario: "memos", Limit: 10, Search: "title 4"},
		{Scenario: "memos", Limit: 10, Search: "提醒 t", Sort: store.RowSort{Field: "title", Desc: true}},
	}
	if mongo.IsFerretDB(s) {
		plans, err := mongo.ExplainRows(ctx, s, queries[0])
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("FerretDB explains the first page as %v", plans["page"])
		t.Skip(ferretPlanReason)
	}
	for _, q := range queries {
		plans, err := mongo.ExplainRows(ctx, s, q)
		if err != nil {
			t.Fatalf("explain %+v: %v", q, err)
		}
		for name, res := range plans {
			var stages []string
			for _, wp := range winningPlans(res) {
				stages = append(stages, planStages(wp)...)
			}
			if len(stages) == 0 {
				t.Fatalf("%+v %s: no winning plan in %v", q, name, res)
			}
			if slices.Contains(stages, "COLLSCAN") {
				t.Errorf("%+v %s: plan %v reads the collection", q, name, stages)
			}
			if !slices.Contains(stages, "IXSCAN") && !slices.Contains(stages, "COUNT_SCAN") &&
				!slices.Contains(stages, "DISTINCT_SCAN") {
				t.Errorf("%+v %s: plan %v uses no index", q, name, stages)
			}
			if name == "page" && q.Search == "" && slices.Contains(stages, "SORT") {
				t.Errorf("%+v: plan %v sorts in memory", q, stages)
			}
		}
	}
}

// winningPlans finds every winningPlan in an explain answer, wherever the
// server nests it (find: queryPlanner; aggregate: queryPlanner at the top,
// or per stage under $cursor).
func winningPlans(node any) []any {
	var out []any
	switch n := node.(type) {
	case bson.M:
		for k, v := range n {
			if k == "winningPlan" {
				out = append(out, v)
				continue
			}
			out = append(out, winningPlans(v)...)
		}
	case bson.A:
		for _, v := range n {
			out = append(out, winningPlans(v)...)
		}
	}
	return out
}

// planStages lists the stage names of a plan tree (MongoDB's explain:
// stage, inputStage, inputStages; newer servers nest queryPlan).
func planStages(node any) []string {
	m, ok := node.(bson.M)
	if !ok {
		return nil
	}
	var out []string
	if st, ok := m["stage"].(string); ok {
		out = append(out, st)
	}
	for _, k := range []string{"queryPlan", "inputStage"} {
		out = append(out, planStages(m[k])...)
	}
	if in, ok := m["inputStages"].(bson.A); ok {
		for _, n := range in {
			out = append(out, planStages(n)...)
		}
	}
	return out
}

// TestPrepareRowTableBackfillsSearchKeys: a row written without search keys
// (by a version of the driver before them) becomes searchable once the
// table is prepared.
func TestPrepareRowTableBackfillsSearchKeys(t *testing.T) {
	s := openTemp(t, testURI(t))
	ctx := t.Context()
	_, err := mongo.Collection(s, "rows").InsertOne(ctx, bson.D{{Key: "scenario", Value: "memos"}, {Key: "id", Value: "old"},
		{Key: "fields", Value: bson.D{{Key: "title", Value: "每天早上提醒我"}}}, {Key: "is_active", Value: 1},
		{Key: "error", Value: ""}, {Key: "version", Value: 1}})
	if err != nil {
		t.Fatal(err)
	}
	q := store.RowQuery{Scenario: "memos", Search: "提醒我", Limit: 10}
	if p, err := s.QueryRows(ctx, q); err != nil || p.Filtered != 0 {
		t.Fatalf("search before prepare = %+v, %v; want no match (no keys yet)", p, err)
	}
	if err := s.PrepareRowTable(ctx, "memos", nil); err != nil {
		t.Fatal(err)
	}
	p, err := s.QueryRows(ctx, q)
	if err != nil || p.Filtered != 1 || len(p.Rows) != 1 || p.Rows[0].ID != "old" {
		t.Errorf("search after prepare = %+v, %v; want the old row", p, err)
	}
}

// TestPlanStagesReadsMongoDBExplain checks the explain reading of
// TestRowTablePlans on answers in MongoDB's documented shapes (a find; an
// aggregate with a $cursor stage; a slot-based plan under queryPlan), so
// that the check runs, and can fail, where no MongoDB is at hand.
func TestPlanStagesReadsMongoDBExplain(t *testing.T) {
	t.Parallel()
	ixscan := bson.M{"stage": "IXSCAN", "indexName": "ux_rows_key"}
	tests := []struct {
		name    string
		explain bson.M
		want    []string
	}{
		{"Find", bson.M{"queryPlanner": bson.M{"winningPlan": bson.M{"stage": "LIMIT",
			"inputStage": bson.M{"stage": "FETCH", "inputStage": ixscan}}, "rejectedPlans": bson.A{}}},
			[]string{"LIMIT", "FETCH", "IXSCAN"}},
		{"AggregateCursor", bson.M{"stages": bson.A{
			bson.M{"$cursor": bson.M{"queryPlanner": bson.M{"winningPlan": bson.M{"stage": "PROJECTION_COVERED", "inputStage": ixscan}}}},
			bson.M{"$group": bson.M{}}}},
			[]string{"PROJECTION_COVERED", "IXSCAN"}},
		{"SlotBased", bson.M{"queryPlanner": bson.M{"winningPlan": bson.M{"queryPlan": bson.M{"stage": "GROUP",
			"inputStage": bson.M{"stage": "COLLSCAN"}}, "slotBasedPlan": bson.M{"stages": "..."}}}},
			[]string{"GROUP", "COLLSCAN"}},
		{"OrBranches", bson.M{"queryPlanner": bson.M{"winningPlan": bson.M{"stage": "SORT", "inputStage": bson.M{
			"stage": "OR", "inputStages": bson.A{bson.M{"stage": "FETCH", "inputStage": ixscan}, bson.M{"stage": "COLLSCAN"}}}}}},
			[]string{"SORT", "OR", "FETCH", "IXSCAN", "COLLSCAN"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			for _, wp := range winningPlans(tt.explain) {
				got = append(got, planStages(wp)...)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("stages = %v, want %v", got, tt.want)
			}
		})
	}
}
