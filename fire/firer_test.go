package fire_test

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"cronsheet/executors"
	"cronsheet/fire"
	"cronsheet/store"
	"cronsheet/store/mongo"
	"cronsheet/store/mongo/mongotest"
	"cronsheet/store/sqlite"
	"cronsheet/task"
)

const (
	node     = "node-a"
	scenario = "memos"
)

// fireAnchor is the anchor of the test tasks; their slots are anchor+k*10s.
var fireAnchor = time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC)

// slot returns the k-th slot of an "every 10s" test task.
func slot(k int) time.Time { return fireAnchor.Add(time.Duration(k) * 10 * time.Second) }

// call is one Execute call seen by a scriptExec.
type call struct {
	d          task.Delivery
	start, end time.Time
	ctxErr     error // ctx.Err() when the script returned
}

// scriptExec is the tests' stand-in for the outside world: it records every
// delivery attempt and answers with fn (success "ok" when fn is nil).
type scriptExec struct {
	mu    sync.Mutex
	fn    func(ctx context.Context, n int, d task.Delivery) (string, error)
	calls []call
}

func (e *scriptExec) execute(ctx context.Context, d task.Delivery) (string, error) {
	e.mu.Lock()
	n := len(e.calls) + 1
	e.calls = append(e.calls, call{d: d, start: time.Now()})
	fn := e.fn
	e.mu.Unlock()
	out, err := "ok", error(nil)
	if fn != nil {
		out, err = fn(ctx, n, d)
	}
	e.mu.Lock()
	e.calls[n-1].end, e.calls[n-1].ctxErr = time.Now(), ctx.Err()
	e.mu.Unlock()
	return out, err
}

func (e *scriptExec) set(fn func(ctx context.Context, n int, d task.Delivery) (string, error)) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.fn = fn
}

func (e *scriptExec) seen() []call {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]call(nil), e.calls...)
}

// testBundle holds what a firer test works with.
type testBundle struct {
	store  store.Product
	execs  *executors.Registry
	exec   *scriptExec       // behind task.ChannelSMS
	outbox *executors.Outbox // the real outbox, behind task.ChannelOutbox
	firer  *fire.Firer
}

// setup opens a fresh SQLite store and a Firer for node over it. The SMS
// channel goes to a scriptExec, the outbox channel to the real outbox.
func setup(t *testing.T) *testBundle {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return setupOn(t, st)
}

// setupDriver is setup on the driver CRONSHEET_TEST_DRIVER names: mongo
// opens a fresh database on CRONSHEET_TEST_MONGO_URI's server (dropped at
// the end; skipped without the variable), anything else SQLite. The
// tests that use it hold on both drivers.
func setupDriver(t *testing.T) *testBundle {
	t.Helper()
	if os.Getenv("CRONSHEET_TEST_DRIVER") != "mongo" {
		return setup(t)
	}
	uri := mongotest.URI(t, "the fire tests on the mongo driver")
	st, err := mongo.Open(t.Context(), mongo.Config{URI: uri, Database: mongotest.TempDatabase(t, uri, "cronsheet_fire_")})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return setupOn(t, st)
}

// setupOn is setup over st.
func setupOn(t *testing.T, st store.Product) *testBundle {
	t.Helper()
	logger := slog.New(slog.DiscardHandler)
	b := &testBundle{
		store:  st,
		execs:  executors.NewRegistry(),
		exec:   &scriptExec{},
		outbox: executors.NewOutbox(logger, st),
	}
	b.execs.Register(task.ChannelSMS, executors.ExecutorFunc(b.exec.execute))
	b.execs.Register(task.ChannelOutbox, b.outbox)
	b.firer = b.newFirer(t)
	return b
}

// newFirer returns another Firer of node over the bundle's store and
// executors, shut down (cancelling its deliveries) at the end of the test.
func (b *testBundle) newFirer(t *testing.T) *fire.Firer {
	t.Helper()
	f := fire.New(slog.New(slog.DiscardHandler), fire.Config{
		Node: node, BackoffBase: time.Millisecond, BackoffMax: 5 * time.Millisecond,
	}, b.store, b.execs, nil)
	t.Cleanup(func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_ = f.Shutdown(ctx)
	})
	return f
}

// newTask returns an enabled periodic "every 10s" SMS task.
func newTask(id string) *task.Task {
	return &task.Task{
		TaskID: id, Scenario: scenario, TaskType: task.ChannelSMS, TaskPara: "water the plants",
		Params:      map[string]string{task.ParamTo: "+15551234567", task.ParamTitle: "plants"},
		ExecuteType: task.Periodic, CronPara: "every 10s", TZ: "UTC", TTL: 10 * time.Second,
		MaxRetries: 2, Misfire: task.MisfireOnce, State: task.StateRunning, IsEnable: 1, Anchor: fireAnchor,
	}
}

// add stores tk the way the sync patrol does (a row, then ApplySync), has
// owner claim it, and returns the stored task.
func (b *testBundle) add(t *testing.T, tk *task.Task, owner string) *task.Task {
	t.Helper()
	ctx := t.Context()
	row := &task.Row{Scenario: scenario, ID: tk.TaskID, Fields: map[string]any{"text": tk.TaskPara}, IsActive: 1}
	if err := b.store.InsertRow(ctx, row); err != nil {
		t.Fatalf("InsertRow: %v", err)
	}
	if err := b.store.ApplySync(ctx, store.ApplySyncParams{
		Scenario: scenario, RowID: row.ID, RowVersion: row.Version, Task: tk, IsActive: 1,
	}); err != nil {
		t.Fatalf("ApplySync: %v", err)
	}
	b.claim(t, owner)
	return b.task(t, tk.TaskID)
}

// edit saves tk as a new edit of its row (UpdateRowFields, then ApplySync)
// and returns the stored task.
func (b *testBundle) edit(t *testing.T, tk *task.Task) *task.Task {
	t.Helper()
	ctx := t.Context()
	row, err := b.store.UpdateRowFields(ctx, store.UpdateRowParams{
		Scenario: scenario, ID: tk.TaskID, Fields: map[string]any{"text": tk.TaskPara},
	})
	if err != nil {
		t.Fatalf("UpdateRowFields: %v", err)
	}
	if err := b.store.ApplySync(ctx, store.ApplySyncParams{
		Scenario: scenario, RowID: row.ID, RowVersion: row.Version, Task: tk, IsActive: 1,
	}); err != nil {
		t.Fatalf("ApplySync: %v", err)
	}
	return b.task(t, tk.TaskID)
}

// setState sets a task's state as the API does and returns the stored task.
func (b *testBundle) setState(t *testing.T, id string, state task.State) *task.Task {
	t.Helper()
	tk, err := b.store.SetTaskState(t.Context(), store.TaskStateParams{TaskID: id, State: state, Anchor: fireAnchor, Now: fireAnchor})
	if err != nil {
		t.Fatalf("SetTaskState(%s, %s): %v", id, state, err)
	}
	if tk.State != state {
		t.Fatalf("task %s state = %s after SetTaskState, want %s", id, tk.State, state)
	}
	return tk
}

// claim has owner claim every claimable task.
func (b *testBundle) claim(t *testing.T, owner string) {
	t.Helper()
	if _, err := b.store.ClaimTasks(t.Context(), store.ClaimParams{
		Owner: owner, LeaseUntil: time.Now().Add(time.Hour), Limit: 100,
	}); err != nil {
		t.Fatalf("ClaimTasks: %v", err)
	}
}

func (b *testBundle) task(t *testing.T, id string) *task.Task {
	t.Helper()
	tk, err := b.store.GetTask(t.Context(), id)
	if err != nil {
		t.Fatalf("GetTask: %v", err)
	}
	return tk
}

func (b *testBundle) row(t *testing.T, id string) *task.Row {
	t.Helper()
	row, err := b.store.GetRow(t.Context(), scenario, id)
	if err != nil {
		t.Fatalf("GetRow: %v", err)
	}
	return row
}

// runs returns a task's runs, newest slot first.
func (b *testBundle) runs(t *testing.T, id string) []*task.Run {
	t.Helper()
	runs, err := b.store.ListRuns(t.Context(), id, time.Time{}, 100)
	if err != nil {
		t.Fatalf("ListRuns: %v", err)
	}
	return runs
}

// run returns the run of a task's slot (nil when there is none).
func (b *testBundle) run(t *testing.T, id string, slot time.Time) *task.Run {
	t.Helper()
	for _, r := range b.runs(t, id) {
		if r.Slot.Equal(slot) {
			return r
		}
	}
	return nil
}

// waitRun waits until the run of a task's slot satisfies ok, and returns it.
func (b *testBundle) waitRun(t *testing.T, id string, slot time.Time, what string, ok func(*task.Run) bool) *task.Run {
	t.Helper()
	var r *task.Run
	eventually(t, "run of "+id+" "+what, func() bool {
		r = b.run(t, id, slot)
		return r != nil && ok(r)
	})
	return r
}

// finalRun waits until the run of a task's slot is final and returns it.
func (b *testBundle) finalRun(t *testing.T, id string, slot time.Time) *task.Run {
	t.Helper()
	return b.waitRun(t, id, slot, "final", func(r *task.Run) bool { return r.State.Final() })
}

// fire fires slot of armed and fails the test on an error.
func (b *testBundle) fire(t *testing.T, f *fire.Firer, armed *task.Task, slot time.Time) (fire.Outcome, *task.Task) {
	t.Helper()
	return b.fireAs(t, f, armed, slot, task.TriggerSchedule)
}

// fireMissed fires slot of armed as a missed slot replayed at arming
// (misfire): under overlap queue it queues behind any number of slots.
func (b *testBundle) fireMissed(t *testing.T, f *fire.Firer, armed *task.Task, slot time.Time) {
	t.Helper()
	b.fireAs(t, f, armed, slot, task.TriggerMisfire)
}

// fireAs fires slot of armed as trigger and fails the test on an error.
func (b *testBundle) fireAs(t *testing.T, f *fire.Firer, armed *task.Task, slot time.Time, trigger task.TriggerType) (fire.Outcome, *task.Task) {
	t.Helper()
	out, tk, err := f.Fire(t.Context(), fire.Params{
		Armed: armed, Slot: slot, Trigger: trigger, NextFire: slot.Add(10 * time.Second),
	})
	if err != nil {
		t.Fatalf("Fire(%s): %v", fmtTime(slot), err)
	}
	return out, tk
}

// eventually polls cond until it holds, failing the test after a generous
// deadline. It synchronises with background deliveries; it never asserts on
// how long they take.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// gate is an executor script that reports each call on started and then
// blocks until release is closed or its ctx ends.
type gate struct {
	started chan int
	release chan struct{}
}

func newGate() *gate {
	return &gate{started: make(chan int, 16), release: make(chan struct{})}
}

func (g *gate) wait(ctx context.Context, n int) error {
	g.started <- n
	select {
	case <-g.release:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// awaitStart waits for the gate's next call.
func (g *gate) awaitStart(t *testing.T) int {
	t.Helper()
	select {
	case n := <-g.started:
		return n
	case <-time.After(30 * time.Second):
		t.Fatal("gave up waiting for the executor to start")
		return 0
	}
}

// shutdown shuts f down, waiting for its deliveries to finish.
func shutdown(t *testing.T, f *fire.Firer) {
	t.Helper()
	if err := f.Shutdown(t.Context()); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
}

func TestFire(t *testing.T) {
	t.Parallel()

	t.Run("Fired", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		armed := b.add(t, newTask("fired"), node)
		g := newGate()
		b.exec.set(func(ctx context.Context, n int, d task.Delivery) (string, error) {
			if err := g.wait(ctx, n); err != nil {
				return "", err
			}
			return b.outbox.Execute(ctx, d) // the real outbox path
		})

		out, tk, err := b.firer.Fire(t.Context(), fire.Params{
			Armed: armed, Slot: slot(1), Trigger: task.TriggerSchedule, NextFire: slot(2),
		})
		if err != nil || out != fire.Fired {
			t.Fatalf("Fire = %v, %v; want Fired", out, err)
		}
		if tk == nil || tk.Version != armed.Version {
			t.Errorf("Fire returned task %+v, want version %d", tk, armed.Version)
		}
		g.awaitStart(t)

		// While the executor runs: the ledger says running, the task and
		// its row say so too.
		r := b.run(t, "fired", slot(1))
		if r == nil || r.State != task.RunRunning || r.Attempt != 1 || r.Node != node ||
			r.TriggerType != task.TriggerSchedule || r.Target != string(task.ChannelSMS) {
			t.Fatalf("run while delivering = %+v, want running attempt 1 on %s", r, node)
		}
		checkStatus(t, b, "fired", slot(1), slot(2), task.RunRunning, 0)

		close(g.release)
		r = b.finalRun(t, "fired", slot(1))
		if r.State != task.RunDone || r.Attempt != 1 || r.Error != "" || r.FinishedAt.IsZero() {
			t.Errorf("run = %+v, want done at attempt 1 without error", r)
		}
		shutdown(t, b.firer) // the task status is written after the run
		checkStatus(t, b, "fired", slot(1), slot(2), task.RunDone, 0)

		msgs, err := b.store.ListOutbox(t.Context(), 0, 10)
		if err != nil {
			t.Fatalf("ListOutbox: %v", err)
		}
		want := task.OutboxMessage{TaskID: "fired", TriggerID: r.TriggerID, Channel: task.ChannelSMS,
			To: "+15551234567", Subject: "plants", Body: "water the plants"}
		if len(msgs) != 1 {
			t.Fatalf("outbox holds %d messages, want 1", len(msgs))
		}
		got := *msgs[0]
		got.ID, got.CreatedAt = 0, time.Time{}
		if got != want {
			t.Errorf("outbox message = %+v\nwant %+v", got, want)
		}
		if r.Output != "outbox id 1" {
			t.Errorf("run output = %q, want %q", r.Output, "outbox id 1")
		}
		calls := b.exec.seen()
		if len(calls) != 1 {
			t.Fatalf("executor called %d times, want 1", len(calls))
		}
		d := calls[0].d
		if d.TriggerID != r.TriggerID || !d.Slot.Equal(slot(1)) || d.Attempt != 1 || d.Channel != task.ChannelSMS ||
			d.To != "+15551234567" || d.Subject != "plants" || d.Body != "water the plants" {
			t.Errorf("delivery = %+v", d)
		}
	})

	t.Run("OutboxChannel", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		tk := newTask("outbox")
		tk.TaskType = task.ChannelOutbox
		armed := b.add(t, tk, node)

		if out, _ := b.fire(t, b.firer, armed, slot(1)); out != fire.Fired {
			t.Fatalf("Fire = %v, want Fired", out)
		}
		shutdown(t, b.firer)
		r := b.run(t, "outbox", slot(1))
		if r == nil || r.State != task.RunDone || r.Target != string(task.ChannelOutbox) {
			t.Fatalf("run = %+v, want done on target outbox", r)
		}
		msgs, err := b.store.ListOutbox(t.Context(), 0, 10)
		if err != nil {
			t.Fatalf("ListOutbox: %v", err)
		}
		if len(msgs) != 1 || msgs[0].TriggerID != r.TriggerID || msgs[0].Channel != task.ChannelOutbox {
			t.Errorf("outbox = %+v, want one outbox message of trigger %s", msgs, r.TriggerID)
		}
	})

	t.Run("Duplicate", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		armed := b.add(t, newTask("dup"), node)

		if out, _ := b.fire(t, b.firer, armed, slot(1)); out != fire.Fired {
			t.Fatalf("first Fire = %v, want Fired", out)
		}
		if out, _ := b.fire(t, b.firer, armed, slot(1)); out != fire.Duplicate {
			t.Errorf("second Fire = %v, want Duplicate", out)
		}
		// Another firer of the same node (a restarted process) is gated too.
		if out, _ := b.fire(t, b.newFirer(t), armed, slot(1)); out != fire.Duplicate {
			t.Errorf("Fire by another firer = %v, want Duplicate", out)
		}
		shutdown(t, b.firer)
		if n := len(b.exec.seen()); n != 1 {
			t.Errorf("executor ran %d times, want 1", n)
		}
		if runs := b.runs(t, "dup"); len(runs) != 1 || runs[0].State != task.RunDone {
			t.Errorf("ledger = %+v, want one done run", runs)
		}
	})

	t.Run("Stale", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		ctx := t.Context()
		tests := []struct {
			name string
			// prepare stores the task in the state under test and returns
			// the task as the firer armed it.
			prepare func(t *testing.T, id string) *task.Task
		}{
			{"Missing", func(t *testing.T, id string) *task.Task { return newTask(id) }},
			{"Disabled", func(t *testing.T, id string) *task.Task {
				armed := b.add(t, newTask(id), node)
				off := newTask(id)
				off.IsEnable = 0
				if got := b.edit(t, off); got.IsEnable != 0 || got.ClaimedBy != node {
					t.Fatalf("disabled task = %+v, want is_enable 0 still claimed by %s", got, node)
				}
				return armed
			}},
			{"Done", func(t *testing.T, id string) *task.Task {
				armed := b.add(t, newTask(id), node)
				if err := b.store.SetTaskStatus(ctx, store.TaskStatusParams{TaskID: id, Done: true}); err != nil {
					t.Fatalf("SetTaskStatus: %v", err)
				}
				return armed
			}},
			{"ClaimedByAnotherNode", func(t *testing.T, id string) *task.Task {
				return b.add(t, newTask(id), "node-b")
			}},
			{"NotRunning", func(t *testing.T, id string) *task.Task {
				armed := b.add(t, newTask(id), node)
				b.setState(t, id, task.StateStopped)
				b.claim(t, node) // claimed here again: only the state differs
				if got := b.task(t, id); got.State != task.StateStopped || got.ClaimedBy != node {
					t.Fatalf("stopped task = %+v, want stopped, claimed by %s", got, node)
				}
				return armed
			}},
			{"NewScheduleVersion", func(t *testing.T, id string) *task.Task {
				armed := b.add(t, newTask(id), node)
				moved := newTask(id)
				moved.CronPara = "every 20s"
				b.edit(t, moved)
				b.claim(t, node) // claimed here again: only the schedule differs
				if got := b.task(t, id); got.ClaimedBy != node || got.Version == armed.Version {
					t.Fatalf("rescheduled task = %+v, want a new version claimed by %s", got, node)
				}
				return armed
			}},
		}
		// Sequential: every case claims with the same store.
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				id := "stale-" + strings.ToLower(tt.name)
				armed := tt.prepare(t, id)
				out, _, err := b.firer.Fire(ctx, fire.Params{Armed: armed, Slot: slot(1), Trigger: task.TriggerSchedule})
				if err != nil || out != fire.Stale {
					t.Errorf("Fire = %v, %v; want Stale", out, err)
				}
				if runs := b.runs(t, id); len(runs) != 0 {
					t.Errorf("ledger holds %+v, want nothing", runs)
				}
			})
		}
		shutdown(t, b.firer)
		if n := len(b.exec.seen()); n != 0 {
			t.Errorf("executor ran %d times, want 0", n)
		}
	})

	t.Run("ContentEditFiresNewContent", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		armed := b.add(t, newTask("edited"), node)
		changed := newTask("edited")
		changed.TaskPara = "water the ferns"
		changed.Params = map[string]string{task.ParamTo: "+15557654321", task.ParamTitle: "ferns"}
		edited := b.edit(t, changed)
		if edited.Version == armed.Version || edited.ClaimedBy != node {
			t.Fatalf("edited task = %+v, want a new version still claimed by %s", edited, node)
		}

		out, tk := b.fire(t, b.firer, armed, slot(1))
		if out != fire.Fired || tk.Version != edited.Version {
			t.Fatalf("Fire = %v with version %d, want Fired with version %d", out, tk.Version, edited.Version)
		}
		shutdown(t, b.firer)
		calls := b.exec.seen()
		if len(calls) != 1 {
			t.Fatalf("executor ran %d times, want 1", len(calls))
		}
		if d := calls[0].d; d.Body != "water the ferns" || d.To != "+15557654321" || d.Subject != "ferns" {
			t.Errorf("delivery = %+v, want the edited content", d)
		}
	})
}

// checkStatus checks a task's fire feedback and its mirror on the row.
func checkStatus(t *testing.T, b *testBundle, id string, last, next time.Time, status task.RunState, done int) {
	t.Helper()
	tk := b.task(t, id)
	if !tk.LastFire.Equal(last) || !tk.NextFire.Equal(next) || tk.LastStatus != string(status) || tk.IsDone != done {
		t.Errorf("task last_fire %s next_fire %s last_status %q is_done %d; want %s %s %q %d",
			fmtTime(tk.LastFire), fmtTime(tk.NextFire), tk.LastStatus, tk.IsDone,
			fmtTime(last), fmtTime(next), status, done)
	}
	row := b.row(t, id)
	if !row.LastFire.Equal(last) || !row.NextFire.Equal(next) || row.LastStatus != string(status) {
		t.Errorf("row last_fire %s next_fire %s last_status %q; want %s %s %q",
			fmtTime(row.LastFire), fmtTime(row.NextFire), row.LastStatus, fmtTime(last), fmtTime(next), status)
	}
}

func TestRetries(t *testing.T) {
	t.Parallel()

	t.Run("SucceedsOnThirdAttempt", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		armed := b.add(t, newTask("third"), node)
		b.exec.set(func(_ context.Context, n int, _ task.Delivery) (string, error) {
			if n < 3 {
				return "", errors.New("smtp 451 try later")
			}
			return "sent", nil
		})

		b.fire(t, b.firer, armed, slot(1))
		r := b.finalRun(t, "third", slot(1))
		if r.State != task.RunDone || r.Attempt != 3 || r.Output != "sent" {
			t.Errorf("run = %+v, want done at attempt 3 with output sent", r)
		}
		checkAttempts(t, b.exec.seen(), 3)
	})

	t.Run("DeadAfterMaxRetries", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		armed := b.add(t, newTask("dead"), node) // max_retries 2
		b.exec.set(func(_ context.Context, n int, _ task.Delivery) (string, error) {
			return "", errors.New("smtp 451 mailbox busy")
		})

		b.fire(t, b.firer, armed, slot(1))
		r := b.finalRun(t, "dead", slot(1))
		if r.State != task.RunDead || r.Attempt != 3 || !strings.Contains(r.Error, "smtp 451 mailbox busy") {
			t.Errorf("run = %+v, want dead at attempt 3 keeping the error", r)
		}
		checkAttempts(t, b.exec.seen(), 3)
		shutdown(t, b.firer)
		checkStatus(t, b, "dead", slot(1), slot(2), task.RunDead, 0)
	})

	t.Run("PermanentErrorIsDeadAtOnce", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		armed := b.add(t, newTask("permanent"), node)
		b.exec.set(func(context.Context, int, task.Delivery) (string, error) {
			return "", task.Permanent(errors.New("twilio 21211 invalid number"))
		})

		b.fire(t, b.firer, armed, slot(1))
		r := b.finalRun(t, "permanent", slot(1))
		if r.State != task.RunDead || r.Attempt != 1 || !strings.Contains(r.Error, "invalid number") {
			t.Errorf("run = %+v, want dead at attempt 1 keeping the error", r)
		}
		checkAttempts(t, b.exec.seen(), 1)
	})

	t.Run("RetryAfterDelaysTheRetry", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		armed := b.add(t, newTask("retry-after"), node)
		const delay = 50 * time.Millisecond // far above BackoffMax
		b.exec.set(func(_ context.Context, n int, _ task.Delivery) (string, error) {
			if n == 1 {
				return "", task.RetryAfter(errors.New("http 429"), delay)
			}
			return "ok", nil
		})

		b.fire(t, b.firer, armed, slot(1))
		r := b.finalRun(t, "retry-after", slot(1))
		if r.State != task.RunDone || r.Attempt != 2 {
			t.Errorf("run = %+v, want done at attempt 2", r)
		}
		calls := b.exec.seen()
		checkAttempts(t, calls, 2)
		if gap := calls[1].start.Sub(calls[0].end); gap < delay {
			t.Errorf("retry came %v after the 429, want at least %v", gap, delay)
		}
	})

	t.Run("RetryAfterIsRecorded", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		armed := b.add(t, newTask("retry-after-hour"), node)
		b.exec.set(func(context.Context, int, task.Delivery) (string, error) {
			return "", task.RetryAfter(errors.New("http 429"), time.Hour)
		})

		b.fire(t, b.firer, armed, slot(1))
		r := b.waitRun(t, "retry-after-hour", slot(1), "failed", func(r *task.Run) bool { return r.State == task.RunFailed })
		failedAt := b.exec.seen()[0].end
		if r.Attempt != 1 || !strings.Contains(r.Error, "http 429") ||
			r.NextAttempt.Before(failedAt.Truncate(time.Millisecond).Add(time.Hour)) {
			t.Errorf("run = %+v, want failed at attempt 1 with next_attempt ≥ %s",
				r, fmtTime(failedAt.Add(time.Hour)))
		}
		// Shutting down cancels the wait; the run stays failed for Resume.
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if err := b.firer.Shutdown(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("Shutdown = %v, want context.Canceled", err)
		}
		if r := b.run(t, "retry-after-hour", slot(1)); r.State != task.RunFailed {
			t.Errorf("run after shutdown = %+v, want still failed", r)
		}
		checkAttempts(t, b.exec.seen(), 1)
	})

	t.Run("TTL", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		tk := newTask("ttl")
		tk.TTL = 50 * time.Millisecond
		tk.MaxRetries = 1
		armed := b.add(t, tk, node)
		b.exec.set(func(ctx context.Context, _ int, _ task.Delivery) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		})

		b.fire(t, b.firer, armed, slot(1))
		r := b.finalRun(t, "ttl", slot(1))
		if r.State != task.RunDead || r.Attempt != 2 || !strings.Contains(r.Error, "ttl") {
			t.Errorf("run = %+v, want dead at attempt 2 with an error about the ttl", r)
		}
		calls := b.exec.seen()
		checkAttempts(t, calls, 2)
		for i, c := range calls {
			if !errors.Is(c.ctxErr, context.DeadlineExceeded) {
				t.Errorf("attempt %d ended with ctx error %v, want its deadline", i+1, c.ctxErr)
			}
		}
	})

	t.Run("OnceTaskIsDoneAfterItsRun", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		tk := newTask("once")
		tk.ExecuteType, tk.CronPara = task.Once, "in 30s"
		armed := b.add(t, tk, node)
		g := newGate()
		b.exec.set(func(ctx context.Context, n int, _ task.Delivery) (string, error) {
			return "", g.wait(ctx, n)
		})

		out, _, err := b.firer.Fire(t.Context(), fire.Params{Armed: armed, Slot: fireAnchor.Add(30 * time.Second), Trigger: task.TriggerSchedule})
		if err != nil || out != fire.Fired {
			t.Fatalf("Fire = %v, %v; want Fired", out, err)
		}
		g.awaitStart(t)
		if tk := b.task(t, "once"); tk.IsDone != 0 {
			t.Errorf("is_done = %d while the run is delivered, want 0", tk.IsDone)
		}
		close(g.release)
		shutdown(t, b.firer)
		checkStatus(t, b, "once", fireAnchor.Add(30*time.Second), time.Time{}, task.RunDone, 1)
	})

	t.Run("OnceTaskIsDoneAfterADeadRun", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		tk := newTask("once-dead")
		tk.ExecuteType = task.Once
		armed := b.add(t, tk, node)
		b.exec.set(func(context.Context, int, task.Delivery) (string, error) {
			return "", task.Permanent(errors.New("bad number"))
		})

		b.fire(t, b.firer, armed, slot(1))
		shutdown(t, b.firer)
		checkStatus(t, b, "once-dead", slot(1), time.Time{}, task.RunDead, 1)
	})

	t.Run("RunUntilSuccess", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		tk := newTask("until")
		tk.ExecuteType = task.UntilSuccess
		armed := b.add(t, tk, node)
		b.exec.set(func(_ context.Context, n int, _ task.Delivery) (string, error) {
			if n == 1 {
				return "", task.Permanent(errors.New("rejected"))
			}
			return "ok", nil
		})

		b.fire(t, b.firer, armed, slot(1))
		if r := b.finalRun(t, "until", slot(1)); r.State != task.RunDead {
			t.Fatalf("first run = %+v, want dead", r)
		}
		eventually(t, "last_status dead", func() bool { return b.task(t, "until").LastStatus == string(task.RunDead) })
		if tk := b.task(t, "until"); tk.IsDone != 0 || !tk.NextFire.Equal(slot(2)) {
			t.Errorf("after a dead run: is_done %d next_fire %s, want 0 and %s", tk.IsDone, fmtTime(tk.NextFire), fmtTime(slot(2)))
		}

		if out, _ := b.fire(t, b.firer, armed, slot(2)); out != fire.Fired {
			t.Fatalf("second Fire = %v, want Fired", out)
		}
		shutdown(t, b.firer)
		checkStatus(t, b, "until", slot(2), time.Time{}, task.RunDone, 1)
	})
}

// checkAttempts checks that calls are the attempts 1..n of one run.
func checkAttempts(t *testing.T, calls []call, n int) {
	t.Helper()
	if len(calls) != n {
		t.Fatalf("executor called %d times, want %d", len(calls), n)
	}
	for i, c := range calls {
		if c.d.Attempt != i+1 || c.d.TriggerID != calls[0].d.TriggerID {
			t.Errorf("call %d: attempt %d of trigger %s, want attempt %d of %s",
				i+1, c.d.Attempt, c.d.TriggerID, i+1, calls[0].d.TriggerID)
		}
	}
}

// insertRun writes a run into the ledger as another node left it.
func (b *testBundle) insertRun(t *testing.T, r *task.Run) {
	t.Helper()
	ok, err := b.store.InsertRun(t.Context(), r)
	if err != nil || !ok {
		t.Fatalf("InsertRun = %v, %v", ok, err)
	}
}

func TestResume(t *testing.T) {
	t.Parallel()

	t.Run("CrashedMidDelivery", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		tk := b.add(t, newTask("crashed"), node)
		tk.TaskType = task.ChannelOutbox // the real outbox path
		b.insertRun(t, &task.Run{TriggerID: "tr_crashed", TaskID: "crashed", Slot: slot(1), Target: string(task.ChannelSMS),
			TriggerType: task.TriggerSchedule, State: task.RunRunning, Attempt: 1, Node: "node-dead", FiredAt: slot(1)})

		n, err := b.firer.Resume(t.Context(), tk)
		if err != nil || n != 1 {
			t.Fatalf("Resume = %d, %v; want 1", n, err)
		}
		r := b.finalRun(t, "crashed", slot(1))
		if r.State != task.RunDone || r.Attempt != 2 || r.Node != node {
			t.Errorf("run = %+v, want done at attempt 2 by %s", r, node)
		}
		shutdown(t, b.firer)
		if n, err := b.newFirer(t).Resume(t.Context(), tk); err != nil || n != 0 {
			t.Errorf("Resume of a finished run = %d, %v; want 0", n, err)
		}
		msgs, err := b.store.ListOutbox(t.Context(), 0, 10)
		if err != nil || len(msgs) != 1 || msgs[0].TriggerID != "tr_crashed" {
			t.Errorf("outbox = %+v, %v; want one message of tr_crashed", msgs, err)
		}
	})

	t.Run("NotWhileDeliveredHere", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		armed := b.add(t, newTask("inflight"), node)
		g := newGate()
		b.exec.set(func(ctx context.Context, n int, _ task.Delivery) (string, error) {
			return "", g.wait(ctx, n)
		})

		b.fire(t, b.firer, armed, slot(1))
		g.awaitStart(t)
		// One run unfinished (Resume's answer), left to its delivery.
		if n, err := b.firer.Resume(t.Context(), armed); err != nil || n != 1 {
			t.Errorf("Resume during delivery = %d, %v; want 1 unfinished", n, err)
		}
		close(g.release)
		shutdown(t, b.firer)
		if n := len(b.exec.seen()); n != 1 {
			t.Errorf("executor ran %d times, want 1", n)
		}
		if r := b.run(t, "inflight", slot(1)); r.State != task.RunDone || r.Attempt != 1 {
			t.Errorf("run = %+v, want done at attempt 1", r)
		}
	})

	t.Run("FailedRunTakesNextAttempt", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		tk := newTask("failed")
		tk.MaxRetries = 1
		tk = b.add(t, tk, node)
		// Attempt 1 failed on a node that died while waiting to retry.
		next := time.Now().Add(100 * time.Millisecond).Truncate(time.Millisecond)
		b.insertRun(t, &task.Run{TriggerID: "tr_failed", TaskID: "failed", Slot: slot(1), Target: string(task.ChannelSMS),
			TriggerType: task.TriggerSchedule, State: task.RunFailed, Attempt: 1, Node: "node-dead", FiredAt: slot(1),
			NextAttempt: next, Error: "smtp 451"})

		if n, err := b.firer.Resume(t.Context(), tk); err != nil || n != 1 {
			t.Fatalf("Resume = %d, %v; want 1", n, err)
		}
		shutdown(t, b.firer)
		calls := b.exec.seen()
		if len(calls) != 1 || calls[0].d.Attempt != 2 {
			t.Fatalf("calls = %+v, want one call with attempt 2", calls)
		}
		if calls[0].start.Before(next) {
			t.Errorf("retried at %s, before next_attempt %s", fmtTime(calls[0].start), fmtTime(next))
		}
		if r := b.run(t, "failed", slot(1)); r.State != task.RunDone || r.Attempt != 2 {
			t.Errorf("run = %+v, want done at attempt 2", r)
		}
	})

	t.Run("ExhaustedRunIsDead", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		tk := newTask("exhausted")
		tk.MaxRetries = 0
		tk = b.add(t, tk, node)
		b.insertRun(t, &task.Run{TriggerID: "tr_exhausted", TaskID: "exhausted", Slot: slot(1), Target: string(task.ChannelSMS),
			TriggerType: task.TriggerSchedule, State: task.RunRunning, Attempt: 1, Node: "node-dead", FiredAt: slot(1)})

		if n, err := b.firer.Resume(t.Context(), tk); err != nil || n != 1 {
			t.Fatalf("Resume = %d, %v; want 1", n, err)
		}
		shutdown(t, b.firer)
		if n := len(b.exec.seen()); n != 0 {
			t.Errorf("executor ran %d times, want 0: the only attempt was cut short", n)
		}
		if r := b.run(t, "exhausted", slot(1)); r.State != task.RunDead {
			t.Errorf("run = %+v, want dead", r)
		}
	})
}

func TestShutdown(t *testing.T) {
	t.Parallel()

	t.Run("WaitsForRunningDelivery", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		armed := b.add(t, newTask("wait"), node)
		g := newGate()
		b.exec.set(func(ctx context.Context, n int, _ task.Delivery) (string, error) {
			return "sent", g.wait(ctx, n)
		})

		b.fire(t, b.firer, armed, slot(1))
		g.awaitStart(t)
		done := make(chan error, 1)
		go func() { done <- b.firer.Shutdown(context.Background()) }()
		select {
		case err := <-done:
			t.Fatalf("Shutdown returned %v while a delivery runs", err)
		default:
		}
		close(g.release)
		if err := <-done; err != nil {
			t.Fatalf("Shutdown = %v, want nil", err)
		}
		calls := b.exec.seen()
		if len(calls) != 1 || calls[0].ctxErr != nil {
			t.Errorf("calls = %+v, want one uncancelled call", calls)
		}
		if r := b.run(t, "wait", slot(1)); r.State != task.RunDone {
			t.Errorf("run = %+v, want done when Shutdown returns", r)
		}
		if err := b.firer.Shutdown(context.Background()); err != nil {
			t.Errorf("second Shutdown = %v, want nil", err)
		}
	})

	t.Run("ExpiredContextCancelsDelivery", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		armed := b.add(t, newTask("cut"), node)
		g := newGate()
		b.exec.set(func(ctx context.Context, n int, _ task.Delivery) (string, error) {
			if n == 1 {
				return "", g.wait(ctx, n) // blocks until cancelled
			}
			return "sent", nil
		})

		b.fire(t, b.firer, armed, slot(1))
		g.awaitStart(t)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if err := b.firer.Shutdown(ctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("Shutdown = %v, want context.Canceled", err)
		}
		if calls := b.exec.seen(); len(calls) != 1 || !errors.Is(calls[0].ctxErr, context.Canceled) {
			t.Fatalf("calls = %+v, want one cancelled call", calls)
		}
		r := b.run(t, "cut", slot(1))
		if r.State != task.RunRunning || r.Attempt != 1 {
			t.Fatalf("run = %+v, want left running at attempt 1", r)
		}
		if err := b.firer.Shutdown(context.Background()); err != nil {
			t.Errorf("second Shutdown = %v, want nil", err)
		}

		// The next node to arm the task resumes the run, once.
		next := b.newFirer(t)
		if n, err := next.Resume(t.Context(), armed); err != nil || n != 1 {
			t.Fatalf("Resume = %d, %v; want 1", n, err)
		}
		shutdown(t, next)
		calls := b.exec.seen()
		if len(calls) != 2 || calls[1].d.Attempt != 2 || calls[1].d.TriggerID != r.TriggerID {
			t.Errorf("calls = %+v, want a second call with attempt 2 of %s", calls, r.TriggerID)
		}
		if r := b.run(t, "cut", slot(1)); r.State != task.RunDone || r.Attempt != 2 {
			t.Errorf("resumed run = %+v, want done at attempt 2", r)
		}
	})

	t.Run("SuccessDuringShutdownIsKept", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		armed := b.add(t, newTask("sent"), node)
		g := newGate()
		// The send completes just as the shutdown cancels it.
		b.exec.set(func(ctx context.Context, n int, _ task.Delivery) (string, error) {
			_ = g.wait(ctx, n)
			return "sent", nil
		})

		b.fire(t, b.firer, armed, slot(1))
		g.awaitStart(t)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if err := b.firer.Shutdown(ctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("Shutdown = %v, want context.Canceled", err)
		}
		if r := b.run(t, "sent", slot(1)); r.State != task.RunDone || r.Output != "sent" {
			t.Errorf("run = %+v, want done: a resume would send it again", r)
		}
	})

	t.Run("BeforeAnyFire", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		for range 2 {
			if err := b.firer.Shutdown(context.Background()); err != nil {
				t.Errorf("Shutdown = %v, want nil", err)
			}
		}
	})

	t.Run("FireAfterShutdown", func(t *testing.T) {
		t.Parallel()
		b := setup(t)
		armed := b.add(t, newTask("late"), node)
		shutdown(t, b.firer)

		out, _, err := b.firer.Fire(t.Context(), fire.Params{Armed: armed, Slot: slot(1), Trigger: task.TriggerSchedule})
		if err == nil {
			t.Errorf("Fire after Shutdown = %v, nil; want an error", out)
		}
		shutdown(t, b.firer)
		if n := len(b.exec.seen()); n != 0 {
			t.Errorf("executor ran %d times, want 0", n)
		}
		if runs := b.runs(t, "late"); len(runs) != 0 {
			t.Errorf("ledger = %+v, want nothing: the slot was not fired", runs)
		}
		if n, err := b.firer.Resume(t.Context(), armed); err != nil || n != 0 {
			t.Errorf("Resume after Shutdown = %d, %v; want 0", n, err)
		}
	})
}

// TestFireAll: FireAll answers each slot as Fire would, in order — fired,
// claimed by another node (stale), gone from the preread (stale), fired
// already (duplicate), fired — and the executor, counting at the
// receiver, sees exactly one delivery for each slot that fired.
func TestFireAll(t *testing.T) {
	t.Parallel()
	b := setup(t)
	other := b.add(t, newTask("theirs"), "node-b")
	mine := map[string]*task.Task{}
	for _, id := range []string{"first", "gone", "again", "last"} {
		mine[id] = b.add(t, newTask(id), node)
	}
	if out, _ := b.fire(t, b.firer, mine["again"], slot(1)); out != fire.Fired {
		t.Fatalf("the first fire of again = %v, want Fired", out)
	}
	p := func(armed *task.Task) fire.Params {
		return fire.Params{Armed: armed, Slot: slot(1), Trigger: task.TriggerSchedule, NextFire: slot(2)}
	}
	gone := p(mine["gone"])
	gone.Preread = true // read as deleted
	got := b.firer.FireAll(t.Context(), []fire.Params{p(mine["first"]), p(other), gone, p(mine["again"]), p(mine["last"])})
	want := []fire.Outcome{fire.Fired, fire.Stale, fire.Stale, fire.Duplicate, fire.Fired}
	if len(got) != len(want) {
		t.Fatalf("FireAll gave %d answers for %d slots", len(got), len(want))
	}
	for i, w := range want {
		if got[i].Err != nil || got[i].Outcome != w {
			t.Errorf("FireAll answer %d = %v, %v; want %v", i, got[i].Outcome, got[i].Err, w)
		}
	}
	if got[0].Task == nil || got[0].Task.TaskID != "first" || got[1].Task == nil || got[1].Task.ClaimedBy != "node-b" {
		t.Errorf("FireAll returned tasks %+v and %+v, want first's and theirs as read", got[0].Task, got[1].Task)
	}
	shutdown(t, b.firer) // every delivery has ended
	calls := map[string]int{}
	for _, c := range b.exec.seen() {
		calls[c.d.TaskID]++
	}
	if wantCalls := map[string]int{"first": 1, "again": 1, "last": 1}; !maps.Equal(calls, wantCalls) {
		t.Errorf("deliveries by task = %v, want %v", calls, wantCalls)
	}
	for _, id := range []string{"theirs", "gone"} {
		if runs := b.runs(t, id); len(runs) != 0 {
			t.Errorf("%s has runs %+v after a stale fire", id, runs)
		}
	}
}
