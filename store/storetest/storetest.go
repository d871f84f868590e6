// Package storetest is the conformance suite every store driver runs:
// one Run call checks each method against the contract written in package
// store, plus two races (N claimers, N firers) that must never double-claim
// a task or double-fire a slot. RunControl does the same for store.Control
// (targets, task states, accepted runs and feedback, run queries and
// cleanup), RunJobs for store.Jobs (jobs, their keys and events);
// RunRowTable, RunAuditLog, RunUsers, RunFlows, RunCCSlots and
// RunRetention for the rest of store.Product.
//
// A driver's test calls it with a constructor of fresh, empty stores:
//
//	func TestStore(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) store.Product {
//			s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "test.db"))
//			if err != nil {
//				t.Fatal(err)
//			}
//			return s
//		})
//	}
//
// Times handed to the store are whole milliseconds in UTC, the precision
// every driver keeps. The suite uses only the standard library's testing
// package and imports only task and store.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// Option tunes Run.
type Option func(*config)

type config struct {
	skipConcurrency string
	rawDeleteRow    RawDeleteRow
}

// RawDeleteRow deletes a row straight in the driver's database (SQL on
// SQLite, the rows collection on mongo), as another tool would: no
// store method runs, so nothing retires the row's tasks.
type RawDeleteRow func(ctx context.Context, s store.Product, scenario, id string) error

// WithRawDeleteRow hands Run the driver's raw row delete, for the cases
// of tasks whose row is gone (Tasks.RetireRowless); without it they are
// skipped.
func WithRawDeleteRow(fn RawDeleteRow) Option {
	return func(c *config) { c.rawDeleteRow = fn }
}

// SkipConcurrency makes Run skip only the concurrency cases (concurrent
// claimers and firers), reporting reason. It is meant for backends that do
// not make single-document updates atomic under concurrency, such as
// FerretDB v1 (see docs/DESIGN.md, "Storage"); every other case runs.
func SkipConcurrency(reason string) Option {
	return func(c *config) { c.skipConcurrency = reason }
}

// Run runs the conformance suite. newStore must return a new, empty store
// for each call; Run closes it when the subtest ends (cleanups the driver
// registers in newStore run after that). The leaf subtests run in parallel.
func Run(t *testing.T, newStore func(t *testing.T) store.Product, opts ...Option) {
	t.Helper()
	cfg := configOf(opts)
	runGroups(t, newStore, []group{
		{"Rows", rowCases()},
		{"ApplySync", syncCases()},
		{"Tasks", taskCases()},
		{"Rowless", rowlessCases(cfg)},
		{"Ledger", ledgerCases()},
		{"Outbox", outboxCases()},
		{"Ownership", ownershipCases(cfg)},
		{"Concurrency", raceCases(cfg)},
	})
}

// configOf applies opts.
func configOf(opts []Option) config {
	var cfg config
	for _, o := range opts {
		o(&cfg)
	}
	return cfg
}

// group is a named list of cases: a subtest holding one subtest per case.
type group struct {
	name  string
	cases []testCase
}

// runGroups runs each case of groups as a parallel leaf subtest on a fresh
// store from newStore, closed when the subtest ends.
func runGroups(t *testing.T, newStore func(t *testing.T) store.Product, groups []group) {
	t.Helper()
	setup := func(t *testing.T) *bundle {
		t.Helper()
		t.Parallel()
		s := newStore(t)
		t.Cleanup(func() {
			if err := s.Close(); err != nil {
				t.Errorf("close store: %v", err)
			}
		})
		return &bundle{t: t, ctx: t.Context(), s: s}
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for _, c := range g.cases {
				t.Run(c.name, func(t *testing.T) {
					if c.skip != "" {
						t.Skipf("concurrency case skipped: %s", c.skip)
					}
					c.fn(setup(t))
				})
			}
		})
	}
}

// testCase is one leaf subtest.
type testCase struct {
	name string
	fn   func(b *bundle)
	skip string // when set, why the case is skipped
}

// bundle is what a case works with.
type bundle struct {
	t   *testing.T
	ctx context.Context
	s   store.Product
}

// at returns the suite's reference instant, 2026-03-01 08:00 UTC, plus d.
func at(d time.Duration) time.Time { return time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC).Add(d) }

const scenario = "memos"

// insertRow stores a new row with simple fields and returns it as read back.
func (b *bundle) insertRow(scenario, id string) *task.Row {
	b.t.Helper()
	r := &task.Row{Scenario: scenario, ID: id, IsActive: task.RowActive,
		Fields: map[string]any{"memo": "text of " + id, "n": 1.5, "ok": true}}
	if err := b.s.InsertRow(b.ctx, r); err != nil {
		b.t.Fatalf("InsertRow(%s/%s): %v", scenario, id, err)
	}
	return b.getRow(scenario, id)
}

func (b *bundle) getRow(scenario, id string) *task.Row {
	b.t.Helper()
	r, err := b.s.GetRow(b.ctx, scenario, id)
	if err != nil {
		b.t.Fatalf("GetRow(%s/%s): %v", scenario, id, err)
	}
	return r
}

func (b *bundle) getTask(id string) *task.Task {
	b.t.Helper()
	tk, err := b.s.GetTask(b.ctx, id)
	if err != nil {
		b.t.Fatalf("GetTask(%s): %v", id, err)
	}
	return tk
}

// newTask returns an enabled task for row rowID with every field set.
func newTask(id, rowID string) *task.Task {
	return &task.Task{
		TaskID:      id,
		Scenario:    scenario,
		RowID:       rowID,
		TaskType:    task.ChannelEmail,
		TaskPara:    "water the plants",
		Params:      map[string]string{task.ParamTo: "a@example.com", task.ParamTitle: "plants"},
		ExecuteType: task.Periodic,
		CronPara:    "daily 08:30",
		TZ:          "Asia/Shanghai",
		StartTime:   at(-24 * time.Hour),
		EndTime:     at(365 * 24 * time.Hour),
		TTL:         90 * time.Second,
		MaxRetries:  5,
		Misfire:     task.MisfireAll,
		Overlap:     task.OverlapQueue,
		Targets:     []string{"email", "outbox"},
		Alert:       &task.Alert{Targets: []string{"pager"}, To: "ops@example.com", After: 2, Every: time.Hour, Absent: time.Minute},
		State:       task.StateRunning,
		Anchor:      at(0),
		IsEnable:    1,
	}
}

// syncRow applies tk to row rowID at its current version.
func (b *bundle) syncRow(rowID string, tk *task.Task) error {
	b.t.Helper()
	r := b.getRow(scenario, rowID)
	return b.s.ApplySync(b.ctx, store.ApplySyncParams{
		Scenario: scenario, RowID: rowID, RowVersion: r.Version,
		Task: tk, IsActive: task.RowActive, Now: at(time.Minute),
	})
}

// addTask creates row rowID and syncs tk onto it; it returns the stored task.
func (b *bundle) addTask(tk *task.Task) *task.Task {
	b.t.Helper()
	b.insertRow(scenario, tk.RowID)
	if err := b.syncRow(tk.RowID, tk); err != nil {
		b.t.Fatalf("ApplySync(%s): %v", tk.TaskID, err)
	}
	return b.getTask(tk.TaskID)
}

// addTasks creates n enabled tasks named prefix-000….
func (b *bundle) addTasks(prefix string, n int) []string {
	b.t.Helper()
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("%s-%03d", prefix, i)
		b.addTask(newTask(ids[i], "row-"+ids[i]))
	}
	return ids
}

func (b *bundle) claim(owner string, limit int, lease time.Time) []*task.Task {
	b.t.Helper()
	got, err := b.s.ClaimTasks(b.ctx, store.ClaimParams{Owner: owner, LeaseUntil: lease, Limit: limit})
	if err != nil {
		b.t.Fatalf("ClaimTasks(%s): %v", owner, err)
	}
	return got
}

// wantErr fails unless err matches target.
func (b *bundle) wantErr(what string, err, target error) {
	b.t.Helper()
	if !errors.Is(err, target) {
		b.t.Errorf("%s: error %v, want %v", what, err, target)
	}
}

// noErr fails the test at once on err.
func (b *bundle) noErr(what string, err error) {
	b.t.Helper()
	if err != nil {
		b.t.Fatalf("%s: %v", what, err)
	}
}

// sameJSON reports whether a and b encode to the same JSON (so 1 and 1.0,
// or int and float64, compare equal).
func sameJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(x) == string(y)
}

// checkContent compares what the user's edit defines: every field except
// the claim, status, version and bookkeeping times.
func checkContent(t *testing.T, got, want *task.Task) {
	t.Helper()
	type field struct {
		name string
		ok   bool
	}
	fields := []field{
		{"TaskID", got.TaskID == want.TaskID},
		{"Scenario", got.Scenario == want.Scenario},
		{"RowID", got.RowID == want.RowID},
		{"TaskType", got.TaskType == want.TaskType},
		{"TaskPara", got.TaskPara == want.TaskPara},
		{"Params", maps.Equal(got.Params, want.Params)},
		{"ExecuteType", got.ExecuteType == want.ExecuteType},
		{"CronPara", got.CronPara == want.CronPara},
		{"TZ", got.TZ == want.TZ},
		{"StartTime", got.StartTime.Equal(want.StartTime)},
		{"EndTime", got.EndTime.Equal(want.EndTime)},
		{"TTL", got.TTL == want.TTL},
		{"MaxRetries", got.MaxRetries == want.MaxRetries},
		{"Misfire", got.Misfire == want.Misfire},
		{"Overlap", got.Overlap == want.Overlap},
		{"Targets", slices.Equal(got.Targets, want.Targets)},
		{"Alert", reflect.DeepEqual(got.Alert, want.Alert)},
		{"State", got.State == want.State},
		{"Anchor", got.Anchor.Equal(want.Anchor)},
		{"IsEnable", got.IsEnable == want.IsEnable},
	}
	for _, f := range fields {
		if !f.ok {
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			t.Errorf("task %s: %s differs\n got: %s\nwant: %s", want.TaskID, f.name, g, w)
		}
	}
}

// checkClaim compares a task's claim fields.
func checkClaim(t *testing.T, got *task.Task, claimed int, owner string) {
	t.Helper()
	if got.IsClaimed != claimed || got.ClaimedBy != owner {
		t.Errorf("task %s: is_claimed=%d claimed_by=%q, want %d %q",
			got.TaskID, got.IsClaimed, got.ClaimedBy, claimed, owner)
	}
}

// utc checks that a time read back is in UTC.
func utc(t *testing.T, what string, tm time.Time) {
	t.Helper()
	if !tm.IsZero() && tm.Location() != time.UTC {
		t.Errorf("%s: location %v, want UTC", what, tm.Location())
	}
}
