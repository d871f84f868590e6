package jobs

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"cronsheet/fire"
	"cronsheet/task"
)

// readCountingStore counts ListRuns calls: reading a job (an answer, or a
// final job read back for the OnFinal subscribers) lists its runs.
type readCountingStore struct {
	Store
	mu    sync.Mutex
	lists int
}

func (r *readCountingStore) ListRuns(ctx context.Context, taskID string, before time.Time, limit int) ([]*task.Run, error) {
	r.mu.Lock()
	r.lists++
	r.mu.Unlock()
	return r.Store.ListRuns(ctx, taskID, before, limit)
}

// TestOnFinalWants: a job that becomes final is read back and handed to a
// subscriber only when the subscriber's wants says so; a job nobody wants
// is not read at all.
func TestOnFinalWants(t *testing.T) {
	ctx := t.Context()
	st := &readCountingStore{Store: testStore(t)}
	svc := New(Deps{Store: st, Trigger: func(context.Context, fire.TriggerParams) ([]*task.Run, error) {
		return nil, errors.New("no trigger in this test")
	}})
	var (
		mu       sync.Mutex
		asked    []string
		received []string
	)
	got := make(chan struct{}, 2)
	wanted := map[string]bool{}
	svc.OnFinal(func(id string) bool {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, id)
		return wanted[id]
	}, func(v *View) {
		mu.Lock()
		defer mu.Unlock()
		received = append(received, v.ID)
		got <- struct{}{}
	})

	finish := func(name string, want bool) string {
		t.Helper()
		v, err := svc.Submit(ctx, jobRequest(name, ""))
		if err != nil {
			t.Fatalf("submit: %v", err)
		}
		mu.Lock()
		wanted[v.ID] = want
		mu.Unlock()
		if _, err := svc.Cancel(ctx, v.ID); err != nil { // final: cancelled
			t.Fatalf("cancel: %v", err)
		}
		return v.ID
	}
	unwanted := finish("http://127.0.0.1:9/a", false)
	want := finish("http://127.0.0.1:9/b", true)
	select {
	case <-got:
	case <-time.After(10 * time.Second):
		t.Fatal("the wanted final job was not handed to the subscriber")
	}
	svc.Close() // waits for any other read an announcement started

	mu.Lock()
	defer mu.Unlock()
	if len(asked) != 2 || asked[0] != unwanted || asked[1] != want {
		t.Errorf("wants was asked about %v, want [%s %s]", asked, unwanted, want)
	}
	if len(received) != 1 || received[0] != want {
		t.Errorf("the subscriber received %v, want only %s", received, want)
	}
	// Each Cancel reads its answer (2), and only the wanted job is read
	// again for its announcement.
	if st.lists != 3 {
		t.Errorf("%d reads of a job's runs, want 3: two cancels' answers and one announcement", st.lists)
	}
}

// TestDeferArming: with an arming window, a delayed job due more than two
// windows ahead is stored to be claimed a window before its instant (and
// shows that instant as its next fire); one due sooner, and a cron job,
// are claimable at once. Read back from the store. Only the claimable
// ones wake the patrols, alone or in a batch.
func TestDeferArming(t *testing.T) {
	ctx := t.Context()
	st := testStore(t)
	now := time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC)
	wakes := 0
	svc := New(Deps{Store: st, ArmWindow: 2 * time.Minute, Now: func() time.Time { return now }, Wake: func() { wakes++ },
		Trigger: func(context.Context, fire.TriggerParams) ([]*task.Run, error) {
			return nil, errors.New("no trigger in this test")
		}})
	defer svc.Close()
	submit := func(r Request) *task.Task {
		t.Helper()
		v, err := svc.Submit(ctx, r)
		if err != nil {
			t.Fatalf("submit %+v: %v", r, err)
		}
		got, err := st.GetTask(ctx, v.ID)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	secs := func(d time.Duration) *float64 { f := d.Seconds(); return &f }
	wantWakes := func(what string, n int) {
		t.Helper()
		if wakes != n {
			t.Errorf("after %s: %d wakes, want %d", what, wakes, n)
		}
	}
	far := submit(Request{Method: "POST", Name: "http://127.0.0.1:9/far", Delay: secs(time.Hour)})
	wantWakes("a job due in 1 h", 0)
	if want := now.Add(time.Hour - 2*time.Minute); !far.ArmAt.Equal(want) || !far.NextFire.Equal(now.Add(time.Hour)) {
		t.Errorf("job due in 1 h: arm_at %v, next_fire %v; want %v and %v", far.ArmAt, far.NextFire, want, now.Add(time.Hour))
	}
	near := submit(Request{Method: "POST", Name: "http://127.0.0.1:9/near", Delay: secs(3 * time.Minute)})
	if !near.ArmAt.IsZero() {
		t.Errorf("job due in 3 min (within two windows): arm_at %v, want none", near.ArmAt)
	}
	wantWakes("a job due in 3 min", 1)
	batch := func(rs ...Request) {
		t.Helper()
		res, err := svc.SubmitBatch(ctx, rs)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range res {
			if r.Err != nil {
				t.Fatalf("batch job %d: %v", i, r.Err)
			}
		}
	}
	batch(Request{Method: "POST", Name: "http://127.0.0.1:9/far2", Delay: secs(time.Hour)},
		Request{Method: "POST", Name: "http://127.0.0.1:9/far3", Delay: secs(2 * time.Hour)})
	wantWakes("a batch of jobs due in hours", 1)
	batch(Request{Method: "POST", Name: "http://127.0.0.1:9/far4", Delay: secs(time.Hour)},
		Request{Method: "POST", Name: "http://127.0.0.1:9/soon", Delay: secs(time.Second)})
	wantWakes("a batch with a job due in 1 s", 2)
	cron := submit(Request{Method: "POST", Name: "http://127.0.0.1:9/cron", Cron: "every 2h"})
	if !cron.ArmAt.IsZero() {
		t.Errorf("cron job: arm_at %v, want none", cron.ArmAt)
	}
}
