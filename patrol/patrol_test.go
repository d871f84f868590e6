package patrol_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"cronsheet/mapping"
	"cronsheet/patrol"
	"cronsheet/store"
	"cronsheet/store/sqlite"
	"cronsheet/task"
)

const (
	nodeA    = "node-a"
	nodeB    = "node-b"
	lease    = time.Minute
	scenario = "memos"
)

// start is the fake clock's first reading; its half second shows that
// anchors are rounded up to whole seconds.
var start = time.Date(2026, 12, 1, 9, 30, 0, 500_000_000, time.UTC)

// recordingArmer is an Armer that records what the patrols ask of it instead
// of scheduling anything.
type recordingArmer struct {
	mu       sync.Mutex
	armed    map[string]*task.Task
	arms     []string // task ids, one per successful Arm call
	disarms  []string // task ids, one per Disarm call
	failWith map[string]error
}

var _ patrol.Armer = (*recordingArmer)(nil)

func newRecordingArmer() *recordingArmer {
	return &recordingArmer{armed: map[string]*task.Task{}, failWith: map[string]error{}}
}

func (a *recordingArmer) Arm(_ context.Context, t *task.Task) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.failWith[t.TaskID]; err != nil {
		return err
	}
	a.armed[t.TaskID] = t
	a.arms = append(a.arms, t.TaskID)
	return nil
}

func (a *recordingArmer) Disarm(taskID string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.armed, taskID)
	a.disarms = append(a.disarms, taskID)
}

func (a *recordingArmer) Armed() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	ids := make([]string, 0, len(a.armed))
	for id := range a.armed {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// failArm makes Arm of taskID fail with err; a nil err heals it.
func (a *recordingArmer) failArm(taskID string, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.failWith[taskID] = err
}

func (a *recordingArmer) armCalls() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.arms)
}

func (a *recordingArmer) disarmCalls() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.disarms)
}

// testBundle is one node's patrols over a fresh SQLite store.
type testBundle struct {
	logger    *slog.Logger
	store     *sqlite.Store
	clock     *clockwork.FakeClock
	mappers   map[string]patrol.Mapper
	armer     *recordingArmer
	sync      *patrol.Sync
	publish   *patrol.Publish
	reconcile *patrol.Reconcile
	renew     *patrol.Renew
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Errorf("close store: %v", err)
		}
	})
	memos, err := mapping.New(mapping.MemosConfig())
	if err != nil {
		t.Fatalf("memos scenario: %v", err)
	}
	b := &testBundle{
		logger:  slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug})),
		store:   st,
		clock:   clockwork.NewFakeClockAt(start),
		mappers: map[string]patrol.Mapper{scenario: memos},
		armer:   newRecordingArmer(),
	}
	b.sync = b.newSync(0)
	b.publish = b.newPublish(nodeA, b.armer, 0)
	b.reconcile = b.newReconcile(nodeA, b.armer)
	b.renew = patrol.NewRenew(st, nodeA, lease, b.clock.Now)
	return b
}

func (b *testBundle) newSync(batch int) *patrol.Sync {
	return patrol.NewSync(b.logger, b.store, b.mappers, batch, b.clock.Now)
}

func (b *testBundle) newPublish(node string, armer patrol.Armer, batch int) *patrol.Publish {
	return patrol.NewPublish(b.logger, b.store, armer, node, lease, batch, b.clock.Now)
}

func (b *testBundle) newReconcile(node string, armer patrol.Armer) *patrol.Reconcile {
	return patrol.NewReconcile(b.logger, b.store, armer, node, b.clock.Now)
}

// memo returns the fields of a valid memos row whose task id is memoID.
func memo(memoID string) map[string]any {
	return map[string]any{
		"memo_id": memoID,
		"title":   "Stand-up",
		"content": "Stand-up in 5 minutes.",
		"when":    "daily 08:30",
		"channel": "email",
		"to":      "team@example.com",
		"active":  1,
	}
}

func (b *testBundle) insertRow(t *testing.T, scen, id string, fields map[string]any) {
	t.Helper()
	if err := b.store.InsertRow(t.Context(), &task.Row{Scenario: scen, ID: id, Fields: fields, IsActive: 1}); err != nil {
		t.Fatalf("insert row %s/%s: %v", scen, id, err)
	}
}

// editRow saves new fields for a memos row, as an edit in the table does.
func (b *testBundle) editRow(t *testing.T, id string, fields map[string]any) *task.Row {
	t.Helper()
	row, err := b.store.UpdateRowFields(t.Context(), store.UpdateRowParams{Scenario: scenario, ID: id, Fields: fields})
	if err != nil {
		t.Fatalf("edit row %s: %v", id, err)
	}
	return row
}

func (b *testBundle) row(t *testing.T, scen, id string) *task.Row {
	t.Helper()
	row, err := b.store.GetRow(t.Context(), scen, id)
	if err != nil {
		t.Fatalf("get row %s/%s: %v", scen, id, err)
	}
	return row
}

func (b *testBundle) task(t *testing.T, taskID string) *task.Task {
	t.Helper()
	tk, err := b.store.GetTask(t.Context(), taskID)
	if err != nil {
		t.Fatalf("get task %s: %v", taskID, err)
	}
	return tk
}

func (b *testBundle) noTask(t *testing.T, taskID string) {
	t.Helper()
	tk, err := b.store.GetTask(t.Context(), taskID)
	if !errors.Is(err, task.ErrNotFound) {
		t.Fatalf("get task %s = %+v, %v; want task.ErrNotFound", taskID, tk, err)
	}
}

func (b *testBundle) runSync(t *testing.T, s *patrol.Sync) patrol.SyncResult {
	t.Helper()
	res, err := s.RunOnce(t.Context())
	if err != nil {
		t.Fatalf("sync: %v", err)
	}
	return res
}

func (b *testBundle) runPublish(t *testing.T, p *patrol.Publish) patrol.PublishResult {
	t.Helper()
	res, err := p.RunOnce(t.Context())
	if err != nil {
		t.Fatalf("publish: %v", err)
	}
	return res
}

func (b *testBundle) runReconcile(t *testing.T, r *patrol.Reconcile) patrol.ReconcileResult {
	t.Helper()
	res, err := r.RunOnce(t.Context())
	if err != nil {
		t.Fatalf("reconcile: %v", err)
	}
	return res
}

// seed inserts a valid row r<i> with task m<i> for each i in 1..n and syncs
// them; it returns the task ids.
func (b *testBundle) seed(t *testing.T, n int) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range n {
		ids[i] = fmt.Sprintf("m%d", i+1)
		b.insertRow(t, scenario, fmt.Sprintf("r%d", i+1), memo(ids[i]))
	}
	if res := b.runSync(t, b.sync); res.Synced != n {
		t.Fatalf("seed: sync = %+v, want %d synced", res, n)
	}
	return ids
}

func checkRowState(t *testing.T, row *task.Row, fetched, active int) {
	t.Helper()
	if row.IsFetched != fetched || row.IsActive != active {
		t.Errorf("row %s: is_fetched=%d is_active=%d (error %q), want is_fetched=%d is_active=%d",
			row.ID, row.IsFetched, row.IsActive, row.Error, fetched, active)
	}
}
