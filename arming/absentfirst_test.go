package arming

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"cronsheet/executors"
	"cronsheet/fire"
	"cronsheet/internal/testwait"
	"cronsheet/store/sqlite"
	"cronsheet/task"
)

// TestAbsenceAlertForFirstSlots: a task armed only after its very first
// slots passed (no node held it since it was activated) raises the
// absence alert for its first slot, the one after its anchor, counted at
// the pager hook. Before, arming alerted only when the ledger held an
// earlier slot of the task, so a task that never fired was never
// reported absent.
func TestAbsenceAlertForFirstSlots(t *testing.T) {
	var mu sync.Mutex
	alerts := map[string]string{} // trigger id → idempotency key
	pager := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		mu.Lock()
		alerts[r.Header.Get(executors.HeaderTriggerID)] = r.Header.Get(executors.HeaderIdempotencyKey)
		mu.Unlock()
	}))
	defer pager.Close()
	got := func() map[string]string {
		mu.Lock()
		defer mu.Unlock()
		out := map[string]string{}
		for k, v := range alerts {
			out[k] = v
		}
		return out
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
	execs.Register(task.ChannelSMS, executors.ExecutorFunc(func(context.Context, task.Delivery) (string, error) { return "", nil }))
	firer := fire.New(slog.New(slog.DiscardHandler), fire.Config{Node: "n"}, st, execs, nil)
	defer firer.Shutdown(context.Background())
	if err := st.CreateTarget(t.Context(), &task.Target{ID: "pager", Kind: task.ChannelHTTP, State: task.TargetRunning,
		HTTP: &task.HTTPTarget{Method: "POST", URL: pager.URL}}); err != nil {
		t.Fatal(err)
	}
	b := &armerTest{st: st, firer: firer}
	a := b.armer(t, st)

	// Activated 5m30s ago and never held: its slots at +1m … +5m were
	// missed, the first of them well past the 1m absence bound.
	anchor := time.Now().Add(-(5*time.Minute + 30*time.Second)).Truncate(time.Millisecond)
	claimed := b.claimedTasks(t, &task.Task{TaskID: "late", Scenario: "memos", TaskType: task.ChannelSMS,
		ExecuteType: task.Periodic, CronPara: "every 1m", TZ: "UTC", TTL: 30 * time.Second, Misfire: task.MisfireSkip,
		State: task.StateRunning, IsEnable: 1, Anchor: anchor,
		Alert: &task.Alert{Targets: []string{"pager"}, Absent: time.Minute}})
	if err := a.Arm(t.Context(), claimed[0]); err != nil {
		t.Fatal(err)
	}
	// `every` counts from the whole second at or after the anchor.
	from := claimed[0].Anchor.Truncate(time.Second)
	if from.Before(claimed[0].Anchor) {
		from = from.Add(time.Second)
	}
	first := from.Add(time.Minute)
	testwait.For(t, 10*time.Second, "an absence alert at the pager", func() bool { return len(got()) > 0 })
	all := got()
	if len(all) != 1 {
		t.Fatalf("the pager got %d alerts, want 1: %v", len(all), all)
	}
	for _, key := range all {
		// The idempotency key is task:slot_ms:absent:pager.
		want := "late:" + strconv.FormatInt(first.UnixMilli(), 10) + ":absent:pager"
		if key != want {
			t.Errorf("alert key %q, want %q (the first slot after the anchor %s)", key, want, anchor.Format(time.StampMilli))
		}
	}
}
