package arming

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"cronsheet/executors"
	"cronsheet/fire"
	"cronsheet/patrol"
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

func (f *flakyStatus) SetTaskStatuses(ctx context.Context, ps []store.TaskStatusParams) error {
	if f.fail.Load() {
		return errors.New("store unavailable")
	}
	return f.Store.SetTaskStatuses(ctx, ps)
}

// refusingStatus is the real store refusing the status writes of one
// task, counting the batch writes.
type refusingStatus struct {
	*sqlite.Store
	refuse  string
	batches atomic.Int32
}

func (r *refusingStatus) SetTaskStatus(ctx context.Context, p store.TaskStatusParams) error {
	if p.TaskID == r.refuse {
		return errors.New("refused")
	}
	return r.Store.SetTaskStatus(ctx, p)
}

func (r *refusingStatus) SetTaskStatuses(ctx context.Context, ps []store.TaskStatusParams) error {
	r.batches.Add(1)
	for _, p := range ps {
		if p.TaskID == r.refuse {
			return fmt.Errorf("task %s: %w", p.TaskID, task.ErrNotFound)
		}
	}
	return r.Store.SetTaskStatuses(ctx, ps)
}

// TestArmBatch: a claimed batch is armed with one status transaction; a
// task whose status cannot be stored is left unarmed (and reported) while
// the others of its batch still arm.
func TestArmBatch(t *testing.T) {
	b := newArmerTest(t, fire.Config{}, nil, false)
	periodic := func(id string) *task.Task {
		return &task.Task{TaskID: id, Scenario: "memos", TaskType: task.ChannelSMS, ExecuteType: task.Periodic,
			CronPara: "every 1h", TZ: "UTC", TTL: time.Second, Misfire: task.MisfireOnce, State: task.StateRunning,
			IsEnable: 1, Anchor: time.Now()}
	}
	var tasks []*task.Task
	for i := range 5 {
		tasks = append(tasks, periodic("t"+strconv.Itoa(i)))
	}
	claimed := b.claimedTasks(t, tasks...)
	st := &refusingStatus{Store: b.st}
	a := b.armer(t, st)

	for i, err := range a.ArmBatch(t.Context(), claimed[:2]) {
		if err != nil {
			t.Errorf("ArmBatch task %d: %v", i, err)
		}
	}
	if n := st.batches.Load(); n != 1 {
		t.Errorf("statuses written in %d batches for 2 tasks, want 1", n)
	}

	st.refuse = claimed[3].TaskID
	errs := a.ArmBatch(t.Context(), claimed[2:])
	for i, err := range errs {
		id := claimed[2+i].TaskID
		if (err != nil) != (id == st.refuse) {
			t.Errorf("ArmBatch %s: error %v, want one only for %s", id, err, st.refuse)
		}
	}
	armed := a.Armed()
	for _, tk := range claimed {
		if got, want := slices.Contains(armed, tk.TaskID), tk.TaskID != st.refuse; got != want {
			t.Errorf("%s armed = %v, want %v", tk.TaskID, got, want)
		}
	}
	for _, tk := range claimed {
		got, err := b.st.GetTask(t.Context(), tk.TaskID)
		if err != nil {
			t.Fatal(err)
		}
		if hasNext := !got.NextFire.IsZero(); hasNext != (tk.TaskID != st.refuse) {
			t.Errorf("%s next fire %v: want one only for the armed tasks", tk.TaskID, got.NextFire)
		}
	}
}

// armerTest is what the armer tests run on: a fresh SQLite store, a
// Firer of node "n" over fs (the store itself when nil) with an SMS
// executor that always succeeds, and armers whose scheduler is started
// when start; all closed when the test ends.
type armerTest struct {
	st        *sqlite.Store
	firer     *fire.Firer
	start     bool
	delivered chan task.Delivery // what the SMS executor was given (when there is room)
}

func newArmerTest(t *testing.T, cfg fire.Config, fs func(*sqlite.Store) fire.Store, start bool) *armerTest {
	t.Helper()
	st, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	delivered := make(chan task.Delivery, 1000)
	execs := executors.NewRegistry()
	execs.Register(task.ChannelSMS, executors.ExecutorFunc(func(_ context.Context, d task.Delivery) (string, error) {
		select {
		case delivered <- d:
		default:
		}
		return "", nil
	}))
	var fst fire.Store = st
	if fs != nil {
		fst = fs(st)
	}
	cfg.Node = "n"
	firer := fire.New(slog.New(slog.DiscardHandler), cfg, fst, execs, nil)
	t.Cleanup(func() { firer.Shutdown(context.Background()) })
	return &armerTest{st: st, firer: firer, start: start, delivered: delivered}
}

// armer returns an armer over the bundle with st as its store, its
// scheduler started when the bundle's start is set.
func (b *armerTest) armer(t *testing.T, st Store) *Armer {
	t.Helper()
	a, err := New(t.Context(), slog.New(slog.DiscardHandler), Config{}, b.firer, st)
	if err != nil {
		t.Fatal(err)
	}
	if b.start {
		a.sched.Start()
	}
	t.Cleanup(func() { a.Shutdown() })
	return a
}

// claimedTasks stores each task as a memos row's task and returns them
// claimed by node "n".
func (b *armerTest) claimedTasks(t *testing.T, tasks ...*task.Task) []*task.Task {
	t.Helper()
	for _, tk := range tasks {
		row := &task.Row{Scenario: "memos", ID: tk.TaskID, Fields: map[string]any{"x": 1}, IsActive: 1}
		if err := b.st.InsertRow(t.Context(), row); err != nil {
			t.Fatal(err)
		}
		if err := b.st.ApplySync(t.Context(), store.ApplySyncParams{Scenario: "memos", RowID: tk.TaskID,
			RowVersion: row.Version, Task: tk, IsActive: 1}); err != nil {
			t.Fatal(err)
		}
	}
	claimed, err := b.st.ClaimTasks(t.Context(), store.ClaimParams{Owner: "n", LeaseUntil: time.Now().Add(time.Hour), Limit: len(tasks)})
	if err != nil || len(claimed) != len(tasks) {
		t.Fatalf("ClaimTasks = %d tasks, %v; want %d", len(claimed), err, len(tasks))
	}
	return claimed
}

// TestArmFailureLeavesTaskUnarmed: when arming fails half way, the task
// must not look armed (reconcile would never release it and it would never
// fire); arming again works.
func TestArmFailureLeavesTaskUnarmed(t *testing.T) {
	b := newArmerTest(t, fire.Config{}, nil, false)
	st := b.st
	flaky := &flakyStatus{Store: st}
	a := b.armer(t, flaky)
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

// downLedger is the real store whose RecordFires (and WriteRuns with
// records) fails while down is set:
// a store outage at fire time.
type downLedger struct {
	*sqlite.Store
	down atomic.Bool
}

func (d *downLedger) RecordFires(ctx context.Context, recs []store.FireRecord) ([]store.FireResult, error) {
	if d.down.Load() {
		return nil, errors.New("store unavailable")
	}
	return d.Store.RecordFires(ctx, recs)
}

func (d *downLedger) WriteRuns(ctx context.Context, b store.RunBatch) (store.RunWrites, error) {
	if d.down.Load() && len(b.Fires) > 0 {
		return store.RunWrites{}, errors.New("store unavailable")
	}
	return d.Store.WriteRuns(ctx, b)
}

// TestFireDuringOutageIsNotDropped: slots that fall in a store outage are
// not lost: the task is disarmed (reconcile releases it, publish arms it
// again), and arming again fires the missed slots by the misfire policy.
func TestFireDuringOutageIsNotDropped(t *testing.T) {
	var ledger *downLedger
	b := newArmerTest(t, fire.Config{StoreTimeout: 100 * time.Millisecond},
		func(st *sqlite.Store) fire.Store { ledger = &downLedger{Store: st}; return ledger }, true)
	st := b.st
	a := b.armer(t, st)
	claimed := b.claimedTasks(t, &task.Task{TaskID: "tick", Scenario: "memos", TaskType: task.ChannelSMS, ExecuteType: task.Periodic,
		CronPara: "every 1s", TZ: "UTC", TTL: time.Second, Misfire: task.MisfireOnce, State: task.StateRunning,
		IsEnable: 1, Anchor: time.Now().Truncate(time.Millisecond)})
	ledger.down.Store(true)
	if err := a.Arm(t.Context(), claimed[0]); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for slices.Contains(a.Armed(), "tick") {
		if time.Now().After(deadline) {
			t.Fatal("a task whose fire failed stays armed: its next slots would be dropped the same way")
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(1500 * time.Millisecond) // more slots pass during the outage
	ledger.down.Store(false)
	// What publish does once reconcile released the claim.
	if err := a.Arm(t.Context(), claimed[0]); err != nil {
		t.Fatal(err)
	}
	for {
		runs, err := st.ListRuns(t.Context(), "tick", time.Time{}, 10)
		if err != nil {
			t.Fatal(err)
		}
		if slices.ContainsFunc(runs, func(r *task.Run) bool { return r.TriggerType == task.TriggerMisfire }) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no misfire run for the slots of the outage; runs: %d", len(runs))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestOneJobPerInstant: tasks due at the same instant share one gocron
// job; disarming some leaves the others due; every task still armed fires
// once at that instant, and each goes on to its own next slot.
func TestOneJobPerInstant(t *testing.T) {
	b := newArmerTest(t, fire.Config{}, nil, true)
	st := b.st
	a := b.armer(t, st)

	const n = 40
	// The first slot (anchor + 2 s) is 2 to 3 s away, so the disarms below
	// come before it on any machine that is not stalled for seconds.
	anchor := time.Now().Truncate(time.Second).Add(time.Second)
	tasks := make([]*task.Task, n)
	for i := range n {
		tasks[i] = &task.Task{TaskID: "t" + strconv.Itoa(i), Scenario: "memos", TaskType: task.ChannelSMS, ExecuteType: task.Periodic,
			CronPara: "every 2s", TZ: "UTC", TTL: time.Second, Misfire: task.MisfireSkip, State: task.StateRunning,
			IsEnable: 1, Anchor: anchor}
	}
	claimed := b.claimedTasks(t, tasks...)
	// One batch, as the publish patrol arms them: 40 Arm calls one by
	// one could straddle the instant on a loaded machine.
	for i, err := range a.ArmBatch(t.Context(), claimed) {
		if err != nil {
			t.Fatalf("arm %s: %v", claimed[i].TaskID, err)
		}
	}
	if jobs := a.Scheduled(); jobs != 1 {
		t.Fatalf("gocron holds %d jobs for %d tasks due at one instant, want 1", jobs, n)
	}
	a.Disarm("t0")
	a.Disarm("t1")
	disarmed := time.Now()
	deadline := time.Now().Add(20 * time.Second)
	for {
		fired := 0
		for i := 2; i < n; i++ {
			runs, err := st.ListRuns(t.Context(), "t"+strconv.Itoa(i), time.Time{}, 10)
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) >= 2 {
				fired++
			}
		}
		if fired == n-2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d armed tasks fired two slots in time", fired, n-2)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// A disarmed task fires no slot after its disarm returned (one due
	// before it, on a machine stalled past the first slot, is not the
	// disarm's to stop).
	for _, id := range []string{"t0", "t1"} {
		runs, _ := st.ListRuns(t.Context(), id, time.Time{}, 10)
		for _, r := range runs {
			if r.Slot.After(disarmed) {
				t.Errorf("disarmed task %s fired slot %v, after its disarm at %v", id, r.Slot, disarmed)
			}
		}
	}
	runs, _ := st.ListRuns(t.Context(), "t2", time.Time{}, 10)
	if len(runs) >= 2 && runs[0].Slot.Sub(runs[1].Slot) != 2*time.Second {
		t.Errorf("slots %v and %v, want 2s apart", runs[1].Slot, runs[0].Slot)
	}
}

// TestBucketFireChecksEachTask: a bucket's fire reads only the heads of
// its tasks and uses the armed copy's content while the version is the
// armed one — yet a task edited since it was armed is delivered with its
// new content, a deleted one and one whose claim was lost are not
// delivered at all, and an untouched one is.
func TestBucketFireChecksEachTask(t *testing.T) {
	b := newArmerTest(t, fire.Config{}, nil, true)
	st := b.st
	a := b.armer(t, st)
	ctx := t.Context()

	anchor := time.Now().Truncate(time.Second).Add(-2 * time.Second) // next slot in 2–3 s
	tasks := make([]*task.Task, 4)
	for i := range tasks {
		tasks[i] = &task.Task{TaskID: "t" + strconv.Itoa(i), Scenario: "memos", TaskType: task.ChannelSMS,
			ExecuteType: task.Periodic, CronPara: "every 5s", TZ: "UTC", TTL: time.Second, Misfire: task.MisfireSkip,
			State: task.StateRunning, IsEnable: 1, Anchor: anchor, TaskPara: "v1"}
	}
	claimed := b.claimedTasks(t, tasks...)
	for i, err := range a.ArmBatch(ctx, claimed) {
		if err != nil {
			t.Fatalf("arm %s: %v", claimed[i].TaskID, err)
		}
	}
	// t1: edited, same schedule (its fire must read it whole).
	row, err := st.GetRow(ctx, "memos", "t1")
	if err != nil {
		t.Fatal(err)
	}
	edited := *tasks[1]
	edited.TaskPara = "v2"
	if err := st.ApplySync(ctx, store.ApplySyncParams{Scenario: "memos", RowID: "t1", RowVersion: row.Version,
		Task: &edited, IsActive: 1}); err != nil {
		t.Fatal(err)
	}
	if err := st.DeleteRow(ctx, "memos", "t2"); err != nil { // t2: deleted
		t.Fatal(err)
	}
	if err := st.ReleaseTask(ctx, "t3", "n"); err != nil { // t3: no longer this node's
		t.Fatal(err)
	}

	got := map[string]string{}
	deadline := time.After(15 * time.Second)
	for len(got) < 2 {
		select {
		case d := <-b.delivered:
			if prev, ok := got[d.TaskID]; ok && prev != d.Body {
				t.Errorf("%s delivered with %q and %q", d.TaskID, prev, d.Body)
			}
			got[d.TaskID] = d.Body
		case <-deadline:
			t.Fatalf("delivered %v in time, want t0 and t1", got)
		}
	}
	// Anything else of the same slot arrives within the grace below.
	grace := time.After(500 * time.Millisecond)
	for done := false; !done; {
		select {
		case d := <-b.delivered:
			got[d.TaskID] = d.Body
		case <-grace:
			done = true
		}
	}
	if got["t0"] != "v1" || got["t1"] != "v2" {
		t.Errorf("t0 delivered %q, t1 %q; want v1 (untouched) and v2 (edited after arming)", got["t0"], got["t1"])
	}
	for _, id := range []string{"t2", "t3"} {
		if body, ok := got[id]; ok {
			t.Errorf("%s was delivered (%q) though it was deleted or its claim released after it was armed", id, body)
		}
	}
}

// armBucket arms n tasks on a that share every slot (every 20 s, one
// bucket each): the next slot in 5–6 s, or, should arming take longer (the
// race detector on a busy machine), the one after, 20 s later.
func armBucket(t *testing.T, b *armerTest, a *Armer, n int) []*task.Task {
	t.Helper()
	anchor := time.Now().Truncate(time.Second).Add(-15 * time.Second)
	tasks := make([]*task.Task, n)
	for i := range tasks {
		tasks[i] = &task.Task{TaskID: fmt.Sprintf("t%04d", i), Scenario: "memos", TaskType: task.ChannelSMS,
			ExecuteType: task.Periodic, CronPara: "every 20s", TZ: "UTC", TTL: time.Second, Misfire: task.MisfireSkip,
			State: task.StateRunning, IsEnable: 1, Anchor: anchor}
	}
	for i, err := range a.ArmBatch(t.Context(), b.claimedTasks(t, tasks...)) {
		if err != nil {
			t.Fatalf("arm %s: %v", tasks[i].TaskID, err)
		}
	}
	return tasks
}

// TestBucketGroupsDeliverOnce: a bucket larger than a few fire groups
// (fireGroup) delivers its slot to every task exactly once, counted at the
// executor: none left out between groups, none twice.
func TestBucketGroupsDeliverOnce(t *testing.T) {
	b := newArmerTest(t, fire.Config{}, nil, true)
	a := b.armer(t, b.st)
	n := 3*fireGroup + fireGroup/2
	tasks := armBucket(t, b, a, n)
	type key struct {
		id   string
		slot time.Time
	}
	got := map[key]int{}
	var first time.Time
	deadline := time.After(45 * time.Second)
	for len(got) < n {
		select {
		case d := <-b.delivered:
			if first.IsZero() {
				first = d.Slot
			}
			got[key{d.TaskID, d.Slot}]++
		case <-deadline:
			t.Fatalf("%d of %d tasks delivered in time", len(got), n)
		}
	}
	grace := time.After(500 * time.Millisecond) // a second delivery of the slot arrives within it
	for done := false; !done; {
		select {
		case d := <-b.delivered:
			got[key{d.TaskID, d.Slot}]++
		case <-grace:
			done = true
		}
	}
	for _, tk := range tasks {
		if c := got[key{tk.TaskID, first}]; c != 1 {
			t.Errorf("%s: slot %s delivered %d times, want once", tk.TaskID, first.Format(time.RFC3339), c)
		}
	}
	for k := range got {
		if !k.slot.Equal(first) {
			t.Errorf("%s delivered slot %s besides %s (all share one instant)", k.id, k.slot.Format(time.RFC3339), first.Format(time.RFC3339))
		}
	}
}

// TestUnschedulableHeldOnce: a task whose schedule can never be armed is
// held without a schedule and flagged on the task, not refused (refused,
// every patrol pass would claim, fail and release it again).
func TestUnschedulableHeldOnce(t *testing.T) {
	b := newArmerTest(t, fire.Config{}, nil, false)
	st := b.st
	a := b.armer(t, st)
	job := &task.Task{TaskID: "nodue", Scenario: task.JobScenario, TaskType: task.ChannelHTTP, ExecuteType: task.Once,
		TTL: time.Second, Misfire: task.MisfireOnce, State: task.StateRunning, IsEnable: 1,
		Job: &task.Job{Method: task.JobPOST, Name: "http://127.0.0.1:9/"}}
	if err := st.CreateJob(t.Context(), job); err != nil {
		t.Fatal(err)
	}
	if err := a.Arm(t.Context(), job); err != nil {
		t.Fatalf("Arm of an unschedulable task = %v, want it held", err)
	}
	if !slices.Contains(a.Armed(), "nodue") || a.Scheduled() != 0 {
		t.Errorf("armed %v, gocron jobs %d; want it held without a job", a.Armed(), a.Scheduled())
	}
	if got, err := st.GetTask(t.Context(), "nodue"); err != nil || got.LastStatus != "unschedulable" {
		t.Errorf("task = %+v, %v; want last_status unschedulable", got, err)
	}
}

// TestArmWindowParksAndPromotes: a task due beyond the arming window is
// parked (no gocron job, no task held in memory), promoted as its slot
// enters the window and fired at its exact slot, then parked again; a
// parked task edited meanwhile is disarmed at promotion (publish arms it
// afresh) instead of firing its old schedule.
func TestArmWindowParksAndPromotes(t *testing.T) {
	b := newArmerTest(t, fire.Config{}, nil, true)
	st := b.st
	a := b.armer(t, st)
	a.window = 5 * time.Second

	anchor := time.Now().Truncate(time.Second)
	mk := func(id, every string) *task.Task { return periodicSMS(id, every, anchor) }
	claimed := b.claimedTasks(t, mk("near", "every 2s"), mk("far", "every 7s"), mk("edited", "every 7s"))
	for _, tk := range claimed {
		if err := a.Arm(t.Context(), tk); err != nil {
			t.Fatal(err)
		}
	}
	parked := func() []string {
		a.mu.Lock()
		defer a.mu.Unlock()
		var ids []string
		for _, e := range a.parked {
			if e.task != nil {
				t.Errorf("parked task %s still holds its task", e.id)
			}
			ids = append(ids, e.id)
		}
		slices.Sort(ids)
		return ids
	}
	if got := parked(); !slices.Equal(got, []string{"edited", "far"}) {
		t.Fatalf("parked after arming: %v, want [edited far]", got)
	}
	if jobs := a.Scheduled(); jobs != 1 {
		t.Fatalf("gocron holds %d jobs, want 1 (the near task's bucket; parked tasks have none)", jobs)
	}
	// Edit "edited" in the store: its version moves on.
	var edited *task.Task
	for _, tk := range claimed {
		if tk.TaskID == "edited" {
			c := *tk
			c.TaskPara = "v2"
			edited = &c
		}
	}
	if err := st.ApplySync(t.Context(), store.ApplySyncParams{Scenario: "memos", RowID: "edited", RowVersion: 1, Task: edited, IsActive: 1}); err != nil {
		t.Fatal(err)
	}

	farSlot := anchor.Add(7 * time.Second)
	deadline := farSlot.Add(15 * time.Second)
	for {
		if _, err := a.Promote(t.Context()); err != nil {
			t.Fatal(err)
		}
		runs, err := st.ListRuns(t.Context(), "far", time.Time{}, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) > 0 {
			if !runs[len(runs)-1].Slot.Equal(farSlot) {
				t.Errorf("the promoted task fired slot %s, want %s", runs[len(runs)-1].Slot, farSlot)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the parked task did not fire its slot %s", farSlot)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if got := parked(); !slices.Equal(got, []string{"far"}) {
		t.Errorf("parked after the fire: %v, want [far] (its next slot is beyond the window again)", got)
	}
	if slices.Contains(a.Armed(), "edited") {
		t.Error("the task edited while parked is still armed")
	}
	if runs, _ := st.ListRuns(t.Context(), "edited", time.Time{}, 10); len(runs) != 0 {
		t.Errorf("the task edited while parked fired %d runs of its old arming", len(runs))
	}
}

// TestArmWindowShedsFarTasks: a task parked far beyond the arming window
// is handed back to the store (no node holds it), left there by publish
// until a window before its slot, then claimed, armed and fired at its
// exact slot, delivered once; a task due just beyond the window stays
// parked here; a handed-back task that is edited is claimable at once.
func TestArmWindowShedsFarTasks(t *testing.T) {
	b := newArmerTest(t, fire.Config{}, nil, true)
	st := b.st
	a := b.armer(t, st)
	a.window, a.node = 2*time.Second, "n"

	anchor := time.Now().Truncate(time.Second)
	mk := func(id, every string) *task.Task { return periodicSMS(id, every, anchor) }
	// far and edited are due in 9–10 s (beyond window+window), mid in 2–3 s
	// (beyond the window only).
	claimed := b.claimedTasks(t, mk("far", "every 10s"), mk("mid", "every 3s"), mk("edited", "every 10s"))
	for i, err := range a.ArmBatch(t.Context(), claimed) {
		if err != nil {
			t.Fatalf("arm %s: %v", claimed[i].TaskID, err)
		}
	}
	farSlot, midSlot := anchor.Add(10*time.Second), anchor.Add(3*time.Second)
	n, err := a.Shed(t.Context())
	if err != nil || n != 2 {
		t.Fatalf("Shed = %d, %v; want 2 (far and edited)", n, err)
	}
	armed := a.Armed()
	slices.Sort(armed)
	if !slices.Equal(armed, []string{"mid"}) {
		t.Errorf("armed after Shed: %v, want [mid] (far and edited handed back)", armed)
	}
	for _, id := range []string{"far", "edited"} {
		if got, err := st.GetTask(t.Context(), id); err != nil || got.IsClaimed != 0 {
			t.Fatalf("%s after Shed: %+v, %v; want it held by no node", id, got, err)
		}
	}
	edited := *claimed[2]
	edited.TaskPara = "v2"
	if err := st.ApplySync(t.Context(), store.ApplySyncParams{Scenario: "memos", RowID: "edited", RowVersion: 1, Task: &edited, IsActive: 1}); err != nil {
		t.Fatal(err)
	}

	pub := patrol.NewPublish(slog.New(slog.DiscardHandler), st, a, "n", time.Minute, 100, time.Now)
	claimedAt := map[string]time.Time{}
	deliveries := map[string][]string{}
	drain := func() { // takes what the executor has been given so far
		for {
			select {
			case d := <-b.delivered:
				deliveries[d.TaskID] = append(deliveries[d.TaskID], d.Body)
			default:
				return
			}
		}
	}
	deadline := farSlot.Add(10 * time.Second)
	for len(deliveries["far"]) == 0 || len(deliveries["mid"]) == 0 {
		if _, err := pub.RunOnce(t.Context()); err != nil {
			t.Fatal(err)
		}
		if _, err := a.Promote(t.Context()); err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"far", "edited"} {
			got, err := st.GetTask(t.Context(), id)
			if err != nil {
				t.Fatal(err)
			}
			if _, seen := claimedAt[id]; !seen && got.IsClaimed == 1 {
				claimedAt[id] = time.Now()
			}
		}
		drain()
		if time.Now().After(deadline) {
			t.Fatalf("deliveries %v by %s, want far's and mid's", deliveries, deadline)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if at, ok := claimedAt["far"]; !ok || at.Before(farSlot.Add(-a.window)) {
		t.Errorf("far claimed again at %v, want not before %v (a window before its slot)", at, farSlot.Add(-a.window))
	}
	if at, ok := claimedAt["edited"]; !ok || !at.Before(farSlot.Add(-a.window)) {
		t.Errorf("edited claimed again at %v (seen: %v), want at once after its edit, before %v", at, ok, farSlot.Add(-a.window))
	}
	// Anything else of far's slot would arrive within this grace.
	time.Sleep(500 * time.Millisecond)
	drain()
	if got := deliveries["far"]; len(got) != 1 {
		t.Errorf("far delivered %d times (%v), want once", len(got), got)
	}
	for id, slot := range map[string]time.Time{"far": farSlot, "mid": midSlot} {
		runs, err := st.ListRuns(t.Context(), id, time.Time{}, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) == 0 || !runs[len(runs)-1].Slot.Equal(slot) {
			t.Errorf("%s fired %v, want its first run at %s", id, runs, slot)
		}
	}
}

// countingFires counts the ledger's group-commit transactions.
type countingFires struct {
	*sqlite.Store
	calls atomic.Int64
}

func (c *countingFires) RecordFires(ctx context.Context, recs []store.FireRecord) ([]store.FireResult, error) {
	c.calls.Add(1)
	return c.Store.RecordFires(ctx, recs)
}

func (c *countingFires) WriteRuns(ctx context.Context, b store.RunBatch) (store.RunWrites, error) {
	if len(b.Fires) > 0 {
		c.calls.Add(1)
	}
	return c.Store.WriteRuns(ctx, b)
}

// TestArmBatchFiresMissedTogether: a batch of jobs armed after their time
// fires each one's slot, and the fires share the ledger's transactions
// (fired one after another, each would take a transaction of its own and
// the patrol pass would fall behind the jobs it claims next).
func TestArmBatchFiresMissedTogether(t *testing.T) {
	var counting *countingFires
	b := newArmerTest(t, fire.Config{}, func(st *sqlite.Store) fire.Store {
		counting = &countingFires{Store: st}
		return counting
	}, false)
	a := b.armer(t, b.st)
	const n = 200
	for i := range n {
		job := &task.Task{TaskID: fmt.Sprintf("late-%03d", i), Scenario: task.JobScenario, TaskType: task.ChannelHTTP,
			ExecuteType: task.Once, TTL: time.Second, Misfire: task.MisfireOnce, State: task.StateRunning, IsEnable: 1,
			Targets: []string{task.JobTargetID},
			Job:     &task.Job{Method: task.JobPOST, Name: "http://127.0.0.1:9/", DueAt: time.Now().Add(-time.Second).Truncate(time.Millisecond)}}
		if err := b.st.CreateJob(t.Context(), job); err != nil {
			t.Fatal(err)
		}
	}
	claimed, err := b.st.ClaimTasks(t.Context(), store.ClaimParams{Owner: "n", LeaseUntil: time.Now().Add(time.Hour), Limit: n})
	if err != nil || len(claimed) != n {
		t.Fatalf("claimed %d, %v; want %d", len(claimed), err, n)
	}
	for i, err := range a.ArmBatch(t.Context(), claimed) {
		if err != nil {
			t.Fatalf("arm %s: %v", claimed[i].TaskID, err)
		}
	}
	for _, tk := range claimed {
		runs, err := b.st.ListRuns(t.Context(), tk.TaskID, time.Time{}, 10)
		if err != nil || len(runs) != 1 || !runs[0].Slot.Equal(tk.Job.DueAt) {
			t.Fatalf("%s: runs %v, %v; want its one slot %s fired", tk.TaskID, runs, err, tk.Job.DueAt)
		}
	}
	if calls := counting.calls.Load(); calls > n/4 {
		t.Errorf("the %d late fires took %d ledger transactions, want them shared (at most %d)", n, calls, n/4)
	}
}

// periodicSMS is a memos SMS task firing every `every` from anchor
// (misfire skip), content "v1", for the arming window tests.
func periodicSMS(id, every string, anchor time.Time) *task.Task {
	return &task.Task{TaskID: id, Scenario: "memos", TaskType: task.ChannelSMS, ExecuteType: task.Periodic,
		CronPara: every, TZ: "UTC", TTL: time.Second, Misfire: task.MisfireSkip, State: task.StateRunning,
		IsEnable: 1, Anchor: anchor, TaskPara: "v1"}
}

// TestRunPromotesAndSweeps: Run starts the scheduler and, on its own,
// promotes a parked task as its slot enters the window (it fires at its
// exact slot) and removes the spent one-time job; once ctx ends, Run
// returns.
func TestRunPromotesAndSweeps(t *testing.T) {
	b := newArmerTest(t, fire.Config{}, nil, false)
	a := b.armer(t, b.st)
	a.window = 5 * time.Second

	anchor := time.Now().Truncate(time.Second)
	claimed := b.claimedTasks(t, periodicSMS("far", "every 7s", anchor))
	if err := a.Arm(t.Context(), claimed[0]); err != nil {
		t.Fatal(err)
	}
	if n := a.Scheduled(); n != 0 {
		t.Fatalf("gocron holds %d jobs for a parked task, want 0", n)
	}
	ctx, cancel := context.WithCancel(t.Context())
	ran := make(chan struct{})
	go func() { defer close(ran); a.Run(ctx) }()

	farSlot := anchor.Add(7 * time.Second)
	deadline := farSlot.Add(15 * time.Second)
	for {
		runs, err := b.st.ListRuns(t.Context(), "far", time.Time{}, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) > 0 {
			if !runs[len(runs)-1].Slot.Equal(farSlot) {
				t.Errorf("the promoted task fired slot %s, want %s", runs[len(runs)-1].Slot, farSlot)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the parked task did not fire its slot %s", farSlot)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// Its next slot is beyond the window again: parked, and the spent job
	// is swept within a pass or two.
	for a.Scheduled() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("gocron still holds %d jobs after the fire", a.Scheduled())
		}
		time.Sleep(200 * time.Millisecond)
	}
	cancel()
	<-ran
}
