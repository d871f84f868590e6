package arming

import (
	"context"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"cronsheet/executors"
	"cronsheet/fire"
	"cronsheet/patrol"
	"cronsheet/store"
	"cronsheet/store/sqlite"
	"cronsheet/task"
)

// errorCounter is a slog handler that counts the records at level error.
type errorCounter struct {
	mu   sync.Mutex
	msgs []string
}

func (c *errorCounter) Enabled(context.Context, slog.Level) bool { return true }
func (c *errorCounter) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError {
		c.mu.Lock()
		c.msgs = append(c.msgs, r.Message)
		c.mu.Unlock()
	}
	return nil
}
func (c *errorCounter) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *errorCounter) WithGroup(string) slog.Handler      { return c }

func (c *errorCounter) errors() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.msgs)
}

// TestTriggeredOnlyTaskArmsQuietly: a stopped task without a schedule (a
// flow's step task, fired only by triggers) is armed and held without a
// schedule on the first publish pass, logging no error; later passes
// claim nothing more.
func TestTriggeredOnlyTaskArmsQuietly(t *testing.T) {
	b := newArmerTest(t, fire.Config{}, nil, false)
	st := b.st
	a := b.armer(t, st)
	step := &task.Task{TaskID: "flow.f.v1.a", Scenario: "flows", TaskType: task.ChannelHTTP, ExecuteType: task.Once,
		TTL: time.Second, MaxRetries: 1, Misfire: task.MisfireOnce, Targets: []string{"hook"},
		State: task.StateStopped, IsEnable: 1}
	if err := st.EnsureTask(t.Context(), step); err != nil {
		t.Fatal(err)
	}
	logs := &errorCounter{}
	pub := patrol.NewPublish(slog.New(logs), st, a, "n", time.Minute, 100, time.Now)
	for pass := range 3 {
		res, err := pub.RunOnce(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if pass == 0 && (res.Claimed != 1 || res.Armed != 1 || res.Failed != 0) {
			t.Errorf("first pass: %+v; want the step task claimed and armed", res)
		}
		if pass > 0 && res.Claimed != 0 {
			t.Errorf("pass %d claimed %d tasks; want the step task held since the first", pass, res.Claimed)
		}
	}
	if errs := logs.errors(); len(errs) > 0 {
		t.Errorf("publish logged %d errors, want none: %q", len(errs), errs)
	}
	if !slices.Contains(a.Armed(), step.TaskID) || a.Scheduled() != 0 {
		t.Errorf("armed %v, gocron jobs %d; want the step task held without a job", a.Armed(), a.Scheduled())
	}
}

// TestStoppedTriggeredOnlyTaskEndsItsQueue: a task without a schedule
// that is stopped while a slot of it waits queued here (overlap: queue)
// behind the run in progress, and armed again under its new state (the
// state change released its claim), ends that slot cancelled at once, as
// a stopped task with a schedule does (prepare), instead of holding it
// until the run in progress ends.
func TestStoppedTriggeredOnlyTaskEndsItsQueue(t *testing.T) {
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	started, release := make(chan string, 4), make(chan struct{})
	execs := executors.NewRegistry()
	execs.Register(task.ChannelSMS, executors.ExecutorFunc(func(ctx context.Context, d task.Delivery) (string, error) {
		started <- d.TriggerID
		select {
		case <-release:
		case <-ctx.Done():
		}
		return "", nil
	}))
	firer := fire.New(slog.New(slog.DiscardHandler), fire.Config{Node: "n"}, st, execs, nil)
	t.Cleanup(func() { firer.Shutdown(context.Background()) })
	b := &armerTest{st: st, firer: firer}
	a := b.armer(t, st)

	step := &task.Task{TaskID: "flow.f.v1.q", Scenario: "flows", TaskType: task.ChannelSMS, ExecuteType: task.Once,
		Params: map[string]string{task.ParamTo: "+15551234567"}, TTL: time.Minute, MaxRetries: 1,
		Misfire: task.MisfireOnce, Overlap: task.OverlapQueue, State: task.StateRunning, IsEnable: 1}
	if err := st.EnsureTask(t.Context(), step); err != nil {
		t.Fatal(err)
	}
	claim := func() *task.Task {
		t.Helper()
		got, err := st.ClaimTasks(t.Context(), store.ClaimParams{Owner: "n", LeaseUntil: time.Now().Add(time.Hour), Limit: 1})
		if err != nil || len(got) != 1 {
			t.Fatalf("ClaimTasks = %d tasks, %v; want 1", len(got), err)
		}
		return got[0]
	}
	armed := claim()
	at := time.Now().Truncate(time.Second)
	for k, s := range []time.Time{at, at.Add(time.Second)} {
		if out, _, err := firer.Fire(t.Context(), fire.Params{Armed: armed, Slot: s, Trigger: task.TriggerSchedule}); err != nil || out != fire.Fired {
			t.Fatalf("Fire slot %d = %v, %v", k+1, out, err)
		}
		if k == 0 {
			<-started
		}
	}
	if _, err := st.SetTaskState(t.Context(), store.TaskStateParams{TaskID: step.TaskID, State: task.StateStopped, Now: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := a.Arm(t.Context(), claim()); err != nil {
		t.Fatalf("Arm the stopped task: %v", err)
	}
	runs, err := st.ListRuns(t.Context(), step.TaskID, time.Time{}, 10)
	if err != nil || len(runs) != 2 {
		t.Fatalf("ListRuns = %d runs, %v; want 2", len(runs), err)
	}
	if q := runs[0]; q.State != task.RunCancelled || !strings.Contains(q.Error, "stopped") {
		t.Errorf("queued run once its task is stopped and armed again = %s (%q), want cancelled: the task was stopped", q.State, q.Error)
	}
	if r := runs[1]; r.State != task.RunRunning {
		t.Errorf("run in progress = %s, want still running", r.State)
	}
	close(release)
	if err := firer.Shutdown(t.Context()); err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-started:
		t.Errorf("queued run %s delivered after its task was stopped", id)
	default:
	}
}
