package jobs

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"cronsheet/fire"
	"cronsheet/internal/testwait"
	"cronsheet/store"
	"cronsheet/task"
)

// recordingTrigger records the triggers a service asks for and fires
// nothing.
type recordingTrigger struct {
	mu    sync.Mutex
	calls []fire.TriggerParams
}

func (r *recordingTrigger) trigger(_ context.Context, p fire.TriggerParams) ([]*task.Run, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, p)
	return []*task.Run{{TaskID: p.TaskID}}, nil
}

func (r *recordingTrigger) slots() map[string]time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]time.Time{}
	for _, p := range r.calls {
		out[p.TaskID] = p.At
	}
	return out
}

// endRun stores job id's run of its due slot, ended in state st, fired
// firedAt.
func endRun(t *testing.T, st Store, v *View, state task.RunState, firedAt time.Time) {
	t.Helper()
	ok, err := st.InsertRun(t.Context(), &task.Run{TriggerID: fire.NewTriggerID(), TaskID: v.ID, Slot: v.DueAt,
		Target: task.JobTargetID, TriggerType: task.TriggerSchedule, State: state, FiredAt: firedAt, FinishedAt: firedAt,
		Error: string(state)})
	if err != nil || !ok {
		t.Fatalf("insert %s run of %s: %v, %v", state, v.ID, ok, err)
	}
}

// TestDeadListIsEveryDeadJob: the dead list (List with state dead, as the
// API's ?state=dead and dead.jsonl read it) and backfill by state dead
// take exactly the jobs whose state reads dead — their run ended dead,
// rejected, timeout or skipped — newest first, each once across pages;
// not a done, cancelled or pending job.
func TestDeadListIsEveryDeadJob(t *testing.T) {
	ctx := t.Context()
	st := testStore(t)
	rec := &recordingTrigger{}
	svc := New(Deps{Store: st, Trigger: rec.trigger, BackfillRate: 1000})
	defer svc.Close()
	base := time.Now().Add(-time.Hour).Truncate(time.Millisecond)
	var dead []string // newest first
	for i, state := range []task.RunState{task.RunDead, task.RunRejected, task.RunDone, task.RunTimeout,
		task.RunCancelled, task.RunSkipped, ""} {
		v, err := svc.Submit(ctx, jobRequest("http://127.0.0.1:9/d", ""))
		if err != nil {
			t.Fatalf("submit: %v", err)
		}
		if state == "" {
			continue // pending: no run
		}
		endRun(t, st, v, state, base.Add(time.Duration(i)*time.Second))
		if got, err := svc.Get(ctx, v.ID); err != nil || (got.State == task.JobDead) != (state != task.RunDone && state != task.RunCancelled) {
			t.Fatalf("job with a %s run reads %+v, %v", state, got, err)
		}
		if state != task.RunDone && state != task.RunCancelled {
			dead = append([]string{v.ID}, dead...)
		}
	}
	views, next, err := svc.List(ctx, ListQuery{State: task.JobDead})
	if got := ids(views); err != nil || !slices.Equal(got, dead) || next != (store.RunCursor{}) {
		t.Errorf("dead list = %v (next %+v), %v; want %v", got, next, err, dead)
	}
	var paged []string
	q := ListQuery{State: task.JobDead, Limit: 1}
	for range 10 {
		views, next, err := svc.List(ctx, q)
		if err != nil {
			t.Fatalf("List page: %v", err)
		}
		paged = append(paged, ids(views)...)
		if next == (store.RunCursor{}) {
			break
		}
		q.Cursor = next
	}
	if !slices.Equal(paged, dead) {
		t.Errorf("dead list a job a page = %v, want %v", paged, dead)
	}
	ans, err := svc.Backfill(ctx, BackfillRequest{State: task.JobDead})
	if err != nil || !slices.Equal(ans.Accepted, dead) {
		t.Fatalf("backfill of the dead: %+v, %v; want %v accepted", ans, err, dead)
	}
	testwait.For(t, 10*time.Second, "the dead jobs' backfills", func() bool { return len(rec.slots()) == len(dead) })
}

func ids(views []*View) []string {
	var out []string
	for _, v := range views {
		out = append(out, v.ID)
	}
	return out
}

// TestBackfillOnceAJob: one job's backfill is taken once — duplicate ids
// collapse, and a job queued by an earlier request is refused with a
// reason while it waits its turn — and two nodes backfilling the same job
// fire it at the same slot (a millisecond after its newest run's), which
// the ledger lets through once.
func TestBackfillOnceAJob(t *testing.T) {
	ctx := t.Context()
	st := testStore(t)
	recA, recB := &recordingTrigger{}, &recordingTrigger{}
	// A slow rate: the second job of a backfill waits its turn, queued.
	a := New(Deps{Store: st, Trigger: recA.trigger, BackfillRate: 0.01})
	defer a.Close()
	b := New(Deps{Store: st, Trigger: recB.trigger, BackfillRate: 0.01})
	defer b.Close()
	var jobs []*View
	for range 2 {
		v, err := a.Submit(ctx, jobRequest("http://127.0.0.1:9/b", ""))
		if err != nil {
			t.Fatalf("submit: %v", err)
		}
		if v, err = a.Cancel(ctx, v.ID); err != nil || v.Run == nil {
			t.Fatalf("cancel: %+v, %v", v, err)
		}
		jobs = append(jobs, v)
	}
	first, second := jobs[0], jobs[1]
	ans, err := a.Backfill(ctx, BackfillRequest{IDs: []string{first.ID, second.ID, second.ID, first.ID}})
	if err != nil || !slices.Equal(ans.Accepted, []string{first.ID, second.ID}) || len(ans.Refused) != 0 {
		t.Fatalf("backfill [J K K J]: %+v, %v; want each accepted once", ans, err)
	}
	// The second waits a hundred seconds for its turn: still queued.
	var wg sync.WaitGroup
	answers := make([]*BackfillAnswer, 20)
	for i := range answers {
		wg.Go(func() { answers[i], _ = a.Backfill(ctx, BackfillRequest{IDs: []string{second.ID}}) })
	}
	wg.Wait()
	for i, ans := range answers {
		if ans == nil || len(ans.Accepted) != 0 || ans.Refused[second.ID] != refusedQueued {
			t.Errorf("parallel backfill %d of the queued job: %+v, want it refused as queued", i, ans)
		}
	}
	// Another node takes the same job: the same slot.
	if ans, err := b.Backfill(ctx, BackfillRequest{IDs: []string{first.ID}}); err != nil || len(ans.Accepted) != 1 {
		t.Fatalf("backfill on the other node: %+v, %v", ans, err)
	}
	testwait.For(t, 10*time.Second, "both nodes' triggers of the first job", func() bool {
		return len(recA.slots()) == 1 && len(recB.slots()) == 1
	})
	want := first.Run.Slot.Add(time.Millisecond)
	if sa, sb := recA.slots()[first.ID], recB.slots()[first.ID]; !sa.Equal(want) || !sb.Equal(want) {
		t.Errorf("the nodes fired the first job at %s and %s, want both at %s", sa, sb, want)
	}
}

// TestOnRunEventMatchesState: the transition OnRun records for a run's end
// is the state the job then reads — cancelled for a run ended by hand, dead
// for one ended rejected.
func TestOnRunEventMatchesState(t *testing.T) {
	ctx := t.Context()
	st := testStore(t)
	svc := New(Deps{Store: st, Trigger: noTrigger})
	defer svc.Close()
	for _, state := range []task.RunState{task.RunCancelled, task.RunRejected} {
		v, err := svc.Submit(ctx, jobRequest("http://127.0.0.1:9/e", ""))
		if err != nil {
			t.Fatalf("submit: %v", err)
		}
		now := time.Now()
		run := task.Run{TriggerID: fire.NewTriggerID(), TaskID: v.ID, Slot: v.DueAt, Target: task.JobTargetID,
			TriggerType: task.TriggerSchedule, State: state, FiredAt: now, FinishedAt: now, Error: "ended"}
		if _, err := st.InsertRun(ctx, &run); err != nil {
			t.Fatalf("insert run: %v", err)
		}
		tk, err := st.GetTask(ctx, v.ID)
		if err != nil {
			t.Fatal(err)
		}
		svc.OnRun(tk, run)
		got, err := svc.Get(ctx, v.ID)
		if err != nil {
			t.Fatal(err)
		}
		testwait.For(t, 10*time.Second, "the run's transition to be stored", func() bool {
			evs, err := st.JobEvents(ctx, v.ID, 10)
			return err == nil && len(evs) == 2
		})
		evs, _ := st.JobEvents(ctx, v.ID, 10)
		if last := evs[len(evs)-1]; last.State != got.State {
			t.Errorf("a %s run: the last transition says %s, the job reads %s", state, last.State, got.State)
		}
	}
}

// TestBackfillRefusedWhileItsRunRuns: a cancelled cron job reads
// cancelled while its backfill runs; a second backfill then is refused
// (its run is in progress), not fired at the next slot.
func TestBackfillRefusedWhileItsRunRuns(t *testing.T) {
	ctx := t.Context()
	st := testStore(t)
	fired := make(chan struct{}, 1)
	// The trigger records the backfill's run as a fire would, and leaves it running.
	trigger := func(ctx context.Context, p fire.TriggerParams) ([]*task.Run, error) {
		r := &task.Run{TriggerID: fire.NewTriggerID(), TaskID: p.TaskID, Slot: p.At, Target: task.JobTargetID,
			TriggerType: p.Type, State: task.RunRunning, FiredAt: time.Now()}
		if _, err := st.InsertRun(ctx, r); err != nil {
			return nil, err
		}
		fired <- struct{}{}
		return []*task.Run{r}, nil
	}
	svc := New(Deps{Store: st, Trigger: trigger})
	defer svc.Close()
	v, err := svc.Submit(ctx, Request{Method: "POST", Name: "http://127.0.0.1:9/cron", Cron: "every 1h"})
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	if _, err := svc.Cancel(ctx, v.ID); err != nil {
		t.Fatalf("cancel: %v", err)
	}
	if ans, err := svc.Backfill(ctx, BackfillRequest{IDs: []string{v.ID}}); err != nil || len(ans.Accepted) != 1 {
		t.Fatalf("first backfill: %+v, %v", ans, err)
	}
	<-fired
	testwait.For(t, 10*time.Second, "the backfill to leave the queue", func() bool {
		svc.mu.Lock()
		defer svc.mu.Unlock()
		return len(svc.backfills) == 0
	})
	if got, err := svc.Get(ctx, v.ID); err != nil || got.State != task.JobCancelled || got.Run.State != task.RunRunning {
		t.Fatalf("job during its backfill: %+v, %v; want cancelled with its backfill run running", got, err)
	}
	ans, err := svc.Backfill(ctx, BackfillRequest{IDs: []string{v.ID}})
	if err != nil || len(ans.Accepted) != 0 || !strings.Contains(ans.Refused[v.ID], "in progress") {
		t.Errorf("backfill while its run runs: %+v, %v; want it refused", ans, err)
	}
}
