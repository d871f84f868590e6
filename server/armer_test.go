package server

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-co-op/gocron/v2"

	"cronsheet/executors"
	"cronsheet/fire"
	"cronsheet/store"
	"cronsheet/store/sqlite"
	"cronsheet/task"
)

// flakyStatus is the real store whose SetTaskStatus fails while fail is set.
type flakyStatus struct {
	*sqlite.Store
	fail atomic.Bool
}

func (f *flakyStatus) SetTaskStatus(ctx context.Context, p store.TaskStatusParams) error {
	if f.fail.Load() {
		return errors.New("store unavailable")
	}
	return f.Store.SetTaskStatus(ctx, p)
}

// TestArmFailureLeavesTaskUnarmed: when arming fails half way, the task
// must not look armed (reconcile would never release it and it would never
// fire); arming again works.
func TestArmFailureLeavesTaskUnarmed(t *testing.T) {
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	logger := slog.New(slog.DiscardHandler)
	firer := fire.New(logger, fire.Config{Node: "n"}, st, executors.NewRegistry(), nil)
	defer firer.Shutdown(context.Background())
	sched, err := gocron.NewScheduler()
	if err != nil {
		t.Fatal(err)
	}
	defer sched.Shutdown()
	flaky := &flakyStatus{Store: st}
	a := newArmer(t.Context(), logger, sched, firer, flaky)
	job := &task.Task{TaskID: "j", Scenario: task.JobScenario, TaskType: task.ChannelHTTP, ExecuteType: task.Once,
		TTL: time.Second, Misfire: task.MisfireOnce, State: task.StateRunning, IsEnable: 1,
		Job: &task.Job{Method: task.JobPOST, Name: "http://127.0.0.1:9/", DueAt: time.Now().Add(time.Hour)}}
	if err := st.CreateJob(t.Context(), job); err != nil {
		t.Fatal(err)
	}
	flaky.fail.Store(true)
	if err := a.Arm(t.Context(), job); err == nil {
		t.Fatal("Arm succeeded with a failing store")
	}
	if slices.Contains(a.Armed(), "j") {
		t.Fatal("a task whose arming failed looks armed")
	}
	flaky.fail.Store(false)
	if err := a.Arm(t.Context(), job); err != nil || !slices.Contains(a.Armed(), "j") {
		t.Fatalf("Arm again = %v, armed %v", err, a.Armed())
	}
}
