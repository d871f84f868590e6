package arming

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"cronsheet/executors"
	"cronsheet/fire"
	"cronsheet/internal/testwait"
	"cronsheet/store/sqlite"
	"cronsheet/task"
)

// TestMisfireAllDeliversEveryMissedSlot: a task with misfire all armed
// after downtime delivers each missed slot to its target, one after
// another, under the default overlap policy (skip): the first is held at
// the hook while the others fire, and none of them is skipped.
func TestMisfireAllDeliversEveryMissedSlot(t *testing.T) {
	var mu sync.Mutex
	var keys []string
	release := make(chan struct{})
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		keys = append(keys, r.Header.Get(executors.HeaderIdempotencyKey))
		mu.Unlock()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer hook.Close()
	calls := func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(keys)
	}

	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	httpExec, err := executors.NewHTTP(nil, executors.HTTPConfig{Allow: []string{"127.0.0.0/8"}})
	if err != nil {
		t.Fatal(err)
	}
	defer httpExec.Close()
	execs := executors.NewRegistry()
	execs.Register(task.ChannelHTTP, httpExec)
	firer := fire.New(slog.New(slog.DiscardHandler), fire.Config{Node: "n"}, st, execs, nil)
	defer firer.Shutdown(context.Background())
	if err := st.CreateTarget(t.Context(), &task.Target{ID: "hook", Kind: task.ChannelHTTP, State: task.TargetRunning,
		HTTP: &task.HTTPTarget{Method: "POST", URL: hook.URL}}); err != nil {
		t.Fatal(err)
	}
	b := &armerTest{st: st, firer: firer}
	a := b.armer(t, st) // its scheduler not started: only the missed slots fire

	const missed = 5
	// Down since the task's anchor: missed slots at +1m … +5m, the next at +6m.
	anchor := time.Now().Add(-(missed*time.Minute + 30*time.Second)).Truncate(time.Millisecond)
	claimed := b.claimedTasks(t, &task.Task{TaskID: "catchup", Scenario: "memos", TaskType: task.ChannelSMS,
		ExecuteType: task.Periodic, CronPara: "every 1m", TZ: "UTC", TTL: 30 * time.Second, Misfire: task.MisfireAll,
		State: task.StateRunning, IsEnable: 1, Anchor: anchor, Targets: []string{"hook"}})
	if err := a.Arm(t.Context(), claimed[0]); err != nil {
		t.Fatal(err)
	}
	// Arm returns once the missed slots are in the ledger; the first is
	// still held at the hook.
	testwait.For(t, 30*time.Second, "the first missed slot to reach the hook", func() bool { return len(calls()) == 1 })
	close(release)
	testwait.For(t, 30*time.Second, "every run to end", func() bool {
		runs, err := st.ListRuns(t.Context(), "catchup", time.Time{}, 100)
		return err == nil && len(runs) == missed &&
			!slices.ContainsFunc(runs, func(r *task.Run) bool { return !r.State.Final() })
	})
	runs, err := st.ListRuns(t.Context(), "catchup", time.Time{}, 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if r.State != task.RunDone || r.TriggerType != task.TriggerMisfire {
			t.Errorf("run of slot %s = %s %s (%s), want a done misfire run", r.Slot.Format(time.TimeOnly), r.TriggerType, r.State, r.Error)
		}
	}
	got := calls()
	slices.Sort(got)
	if len(got) != missed || len(slices.Compact(got)) != missed {
		t.Errorf("the hook got %d calls (%d slots), want one for each of the %d missed slots: %v",
			len(calls()), len(got), missed, calls())
	}
}
