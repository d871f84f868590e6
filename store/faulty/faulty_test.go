package faulty_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"cronsheet/internal/apitest"
	"cronsheet/store"
	"cronsheet/store/faulty"
	"cronsheet/task"
)

// run is a run of task t-1 at slot n (seconds after a fixed instant).
func run(n int) *task.Run {
	at := time.Date(2026, 12, 1, 0, 0, n, 0, time.UTC)
	return &task.Run{TriggerID: fmt.Sprintf("tr-%d", n), TaskID: "t-1", Slot: at, Target: "outbox",
		TriggerType: task.TriggerSchedule, State: task.RunRunning, Attempt: 1, Node: "n1", FiredAt: at}
}

// stored reports whether run n is in st.
func stored(t *testing.T, st store.Product, n int) bool {
	t.Helper()
	_, err := st.GetRun(context.Background(), fmt.Sprintf("tr-%d", n))
	if err != nil && !errors.Is(err, task.ErrNotFound) {
		t.Fatal(err)
	}
	return err == nil
}

// TestModes: each mode does to a write what it says, on the test driver
// (CRONSHEET_TEST_DRIVER): Before stores nothing, After stores and fails,
// Timeout waits for the context and stores nothing, Slow waits and
// stores; every failure wraps ErrInjected and is counted.
func TestModes(t *testing.T) {
	inner := apitest.OpenStore(t)
	f := faulty.Wrap(inner, 1)
	st := f.AsProduct()
	ctx := context.Background()
	cases := []struct {
		mode             faulty.Mode
		wantErr, wantRun bool
	}{
		{faulty.Before, true, false},
		{faulty.After, true, true},
		{faulty.Timeout, true, false},
		{faulty.Slow, false, true},
	}
	for i, c := range cases {
		f.Set(faulty.Rule{Mode: c.mode, Methods: []string{"InsertRun"}, Delay: 20 * time.Millisecond})
		ok, err := st.InsertRun(ctx, run(i))
		if (err != nil) != c.wantErr || err != nil && !errors.Is(err, faulty.ErrInjected) {
			t.Errorf("%v: InsertRun = %v, %v; want an injected error: %v", c.mode, ok, err, c.wantErr)
		}
		if c.mode == faulty.Timeout && !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("timeout: %v does not say the deadline passed", err)
		}
		if got := stored(t, inner, i); got != c.wantRun {
			t.Errorf("%v: run stored %v, want %v", c.mode, got, c.wantRun)
		}
	}
	s := f.Stats()
	if s.Total() != 4 || s.Injected[faulty.After] != 1 || s.ByMethod["InsertRun"] != 4 || s.Calls["InsertRun"] != 4 {
		t.Errorf("stats %+v, want 4 faults on InsertRun, one of each mode", s)
	}
}

// TestSelectors: a rule hits only its methods, every Kth call, inside
// its window; a chance draws the same calls from the same seed; with no
// rule every call passes.
func TestSelectors(t *testing.T) {
	ctx := context.Background()
	inner := apitest.OpenStore(t)
	f := faulty.Wrap(inner, 7)
	st := f.AsProduct()
	f.Set(faulty.Rule{Mode: faulty.Before, Methods: []string{"InsertRun"}, Every: 3})
	var failed []int
	for i := range 9 {
		if _, err := st.InsertRun(ctx, run(i)); err != nil {
			failed = append(failed, i)
		}
	}
	if fmt.Sprint(failed) != "[2 5 8]" {
		t.Errorf("every 3rd call: failed %v, want [2 5 8]", failed)
	}
	if err := st.UpdateRun(ctx, run(0)); err != nil {
		t.Errorf("UpdateRun, not named by the rule, failed: %v", err)
	}

	f.Blip(time.Hour, faulty.Before)
	if err := st.UpdateRun(ctx, run(0)); !errors.Is(err, faulty.ErrInjected) {
		t.Errorf("in a blip of every write, UpdateRun = %v", err)
	}
	f.Set(faulty.Rule{Mode: faulty.Before, Until: time.Now().Add(-time.Second)})
	if err := st.UpdateRun(ctx, run(0)); err != nil {
		t.Errorf("after the window, UpdateRun failed: %v", err)
	}
	if _, err := st.GetRun(ctx, "tr-0"); err != nil {
		t.Errorf("reads pass through: %v", err)
	}

	draw := func(seed uint64) []bool {
		g := faulty.Wrap(inner, seed)
		g.Set(faulty.Rule{Mode: faulty.Before, Methods: []string{"SetTaskStatus"}, Chance: 0.5})
		var out []bool
		for range 32 {
			err := g.AsProduct().SetTaskStatus(ctx, store.TaskStatusParams{TaskID: "none"})
			out = append(out, errors.Is(err, faulty.ErrInjected))
		}
		return out
	}
	a, b := draw(3), draw(3)
	if fmt.Sprint(a) != fmt.Sprint(b) {
		t.Errorf("the same seed drew %v then %v", a, b)
	}
	if fmt.Sprint(a) == fmt.Sprint(draw(4)) {
		t.Errorf("seeds 3 and 4 drew the same 32 calls at chance 1/2")
	}
}

// TestOptionalParts: the wrapped store offers FinishRuns, WriteRuns and
// ServerTime exactly when the driver does, and they are under the rules.
func TestOptionalParts(t *testing.T) {
	inner := apitest.OpenStore(t)
	f := faulty.Wrap(inner, 1)
	st := f.AsProduct()
	for name, has := range map[string][2]bool{
		"RunFinisher": {is[store.RunFinisher](inner), is[store.RunFinisher](st)},
		"RunWriter":   {is[store.RunWriter](inner), is[store.RunWriter](st)},
		"Clock":       {is[store.Clock](inner), is[store.Clock](st)},
	} {
		if has[0] != has[1] {
			t.Errorf("%s: driver has it %v, the faulty store %v", name, has[0], has[1])
		}
	}
	rw, ok := st.(store.RunWriter)
	if !ok {
		t.Fatal("both drivers are RunWriters")
	}
	f.Set(faulty.Rule{Mode: faulty.After, Methods: []string{"WriteRuns"}})
	if _, err := rw.WriteRuns(context.Background(), store.RunBatch{}); !errors.Is(err, faulty.ErrInjected) {
		t.Errorf("WriteRuns under an After rule: %v", err)
	}
}

func is[T any](v any) bool {
	_, ok := v.(T)
	return ok
}
