package storetest

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// RunJobs is the conformance suite of store.Jobs: jobs (tasks without a
// row, carrying Task.Job) through every task read, their keys, replacing a
// job by key, job events, and a job's task going through claims, fires,
// feedback and states without a row. Like Run, newStore must return a new, empty store for each
// call; RunJobs closes it, and its leaf subtests run in parallel.
// SkipConcurrency skips only its concurrency cases.
func RunJobs(t *testing.T, newStore func(t *testing.T) store.Product, opts ...Option) {
	t.Helper()
	cfg := configOf(opts)
	runGroups(t, newStore, []group{
		{"Jobs", []testCase{
			{name: "RoundTrip", fn: testJobRoundTrip},
			{name: "CreateConflicts", fn: testCreateJobConflicts},
			{name: "CreateBatch", fn: testCreateJobs},
			{name: "ByKey", fn: testJobByKey},
			{name: "Replace", fn: testReplaceJob},
			{name: "ReplaceConflicts", fn: testReplaceJobConflicts},
			{name: "WithoutRow", fn: testJobWithoutRow},
			{name: "ListNewestFirst", fn: testListJobs},
			{name: "ArmAt", fn: testJobArmAt},
		}},
		{"JobEvents", []testCase{
			{name: "OrderAndLimit", fn: testJobEvents},
			{name: "Bounds", fn: testJobEventBounds},
		}},
		{"Concurrency", []testCase{
			{name: "CreateSameKey", fn: testCreateSameKey, skip: cfg.skipConcurrency},
			{name: "ReplaceSameKey", fn: testReplaceSameKey, skip: cfg.skipConcurrency},
		}},
	})
}

// jobs returns the store under test as store.Jobs.
func (b *bundle) jobs() store.Jobs {
	return b.s
}

// newJob returns a delayed job with every field set (DueAt with
// milliseconds, headers as given), holding key when not "".
func newJob(id, key string) *task.Task {
	return &task.Task{
		TaskID:      id,
		Scenario:    task.JobScenario,
		TaskType:    task.ChannelHTTP,
		TaskPara:    "job " + id,
		Params:      map[string]string{"order": "42"},
		ExecuteType: task.Once,
		TZ:          "Europe/Paris",
		TTL:         30 * time.Second,
		MaxRetries:  7,
		Misfire:     task.MisfireOnce,
		Targets:     []string{task.JobTargetID},
		State:       task.StateRunning,
		Anchor:      at(0),
		IsEnable:    1,
		Job: &task.Job{
			Method:  task.JobPOST,
			Name:    "https://example.com/hook/" + id,
			Body:    `{"order":42}`,
			Key:     key,
			CC:      "billing",
			CCLimit: 3,
			DueAt:   at(90*time.Minute + 123*time.Millisecond),
			Digest:  "digest-of-" + id,
			Headers: map[string]string{"Authorization": "Bearer secret-of-" + id, "x-trace": "t"},
		},
	}
}

// testJobArmAt: a job stored with an arming instant (created alone or in
// a batch) keeps it, is left out of claims bounded before it and claimed
// from it on; a job stored without one is claimable at once; the claim
// clears it.
func testJobArmAt(b *bundle) {
	later := newJob("later", "")
	later.ArmAt = at(88 * time.Minute)
	later.NextFire = later.Job.DueAt
	b.createJob(later)
	now := newJob("now", "")
	b.createJob(now)
	ts := []*task.Task{newJob("batched", "")}
	ts[0].ArmAt = at(89 * time.Minute)
	errs, err := b.s.CreateJobs(b.ctx, ts, nil)
	b.noErr("CreateJobs", err)
	b.noErr("CreateJobs batched", errs[0])
	if got := b.getTask("later"); !got.ArmAt.Equal(at(88*time.Minute)) || !got.NextFire.Equal(later.Job.DueAt) {
		b.t.Errorf("stored later: arm_at %v, next_fire %v; want %v and %v", got.ArmAt, got.NextFire, at(88*time.Minute), later.Job.DueAt)
	}
	if got := b.claimBy("node-a", 10, at(time.Minute)); !slices.Equal(got, []string{"now"}) {
		b.t.Errorf("a claim bounded before both arming instants took %v, want [now]", got)
	}
	if got := b.claimBy("node-a", 10, at(89*time.Minute)); !slices.Equal(got, []string{"later", "batched"}) {
		b.t.Errorf("a claim bounded at the later arming instant took %v, want [later batched] (soonest first)", got)
	}
	if got := b.getTask("later"); !got.ArmAt.IsZero() || got.ClaimedBy != "node-a" {
		b.t.Errorf("claimed later: arm_at %v, claimed by %q; want none and node-a", got.ArmAt, got.ClaimedBy)
	}
}

// createJob calls CreateJob and fails the test on an error.
func (b *bundle) createJob(t *task.Task) {
	b.t.Helper()
	b.noErr("CreateJob "+t.TaskID, b.jobs().CreateJob(b.ctx, t))
}

// checkJob fails unless got is the job want: its content, Task.Job field
// by field (DueAt to the millisecond, in UTC) and, when want.Version is
// set, its version.
func (b *bundle) checkJob(what string, got, want *task.Task) {
	b.t.Helper()
	checkContent(b.t, got, want)
	switch {
	case got.Job == nil || want.Job == nil:
		if got.Job != want.Job {
			b.t.Errorf("%s: job %s: Job = %s, want %s", what, want.TaskID, mustJSON(got.Job), mustJSON(want.Job))
		}
	default:
		g, w := *got.Job, *want.Job
		if !g.DueAt.Equal(w.DueAt) {
			b.t.Errorf("%s: job %s: DueAt %s, want %s", what, want.TaskID,
				g.DueAt.Format(time.RFC3339Nano), w.DueAt.Format(time.RFC3339Nano))
		}
		utc(b.t, what+": DueAt", g.DueAt)
		if !maps.Equal(g.Headers, w.Headers) {
			b.t.Errorf("%s: job %s: Headers %v, want %v", what, want.TaskID, g.Headers, w.Headers)
		}
		g.DueAt, w.DueAt = time.Time{}, time.Time{}
		g.Headers, w.Headers = nil, nil
		if !reflect.DeepEqual(g, w) {
			b.t.Errorf("%s: job %s: Job\n got: %s\nwant: %s", what, want.TaskID, mustJSON(g), mustJSON(w))
		}
	}
	if want.Version != 0 && got.Version != want.Version {
		b.t.Errorf("%s: job %s: version %d, want %d", what, want.TaskID, got.Version, want.Version)
	}
}

// wantNoTask fails unless task id is missing.
func (b *bundle) wantNoTask(what, id string) {
	b.t.Helper()
	_, err := b.s.GetTask(b.ctx, id)
	b.wantErr(what+": GetTask "+id, err, task.ErrNotFound)
}

// wantKeyHeldBy fails unless JobByKey(key) is job id (or, when id is "",
// task.ErrNotFound).
func (b *bundle) wantKeyHeldBy(what, key, id string) {
	b.t.Helper()
	got, err := b.jobs().JobByKey(b.ctx, key)
	if id == "" {
		b.wantErr(fmt.Sprintf("%s: JobByKey(%q)", what, key), err, task.ErrNotFound)
		return
	}
	b.noErr(fmt.Sprintf("%s: JobByKey(%q)", what, key), err)
	if got.TaskID != id {
		b.t.Errorf("%s: JobByKey(%q) = %s, want %s", what, key, got.TaskID, id)
	}
}

func testJobRoundTrip(b *bundle) {
	j := newJob("j1", "k1")
	j.Job.ReplacedBy = "j0"
	// What the caller sets on the claim is not taken: a new job is unclaimed.
	j.IsClaimed, j.ClaimedBy, j.LeaseUntil = 1, "node-x", at(time.Hour)
	want := *j
	b.createJob(j)
	if j.Version != 1 || j.CreatedAt.IsZero() || !j.UpdatedAt.Equal(j.CreatedAt) {
		b.t.Errorf("CreateJob set version %d, created %v, updated %v; want 1 and two equal times",
			j.Version, j.CreatedAt, j.UpdatedAt)
	}
	want.Version = 1
	got := b.getTask("j1")
	b.checkJob("GetTask", got, &want)
	checkClaim(b.t, got, 0, "")
	if !got.LeaseUntil.IsZero() || got.IsDone != 0 || !got.CreatedAt.Equal(j.CreatedAt) || !got.UpdatedAt.Equal(j.UpdatedAt) {
		b.t.Errorf("stored job: lease %v done %d created %v updated %v; want no lease, not done, %v %v",
			got.LeaseUntil, got.IsDone, got.CreatedAt, got.UpdatedAt, j.CreatedAt, j.UpdatedAt)
	}
	utc(b.t, "CreatedAt", got.CreatedAt)

	// A cron job (no DueAt, no key), and a disabled one, which is not
	// claimed.
	cron := newJob("j2", "")
	cron.ExecuteType, cron.CronPara, cron.Job.DueAt, cron.Job.Method = task.Periodic, "every 5m", time.Time{}, task.JobKafka
	cron.Job.Name, cron.Job.CC, cron.Job.CCLimit = "orders.v1", "", 0
	b.createJob(cron)
	b.checkJob("GetTask of a cron job", b.getTask("j2"), cron)
	off := newJob("j3", "")
	off.IsEnable = 0
	b.createJob(off)
	b.checkJob("GetTask of a disabled job", b.getTask("j3"), off)

	claimed := b.claim("node-a", 10, at(time.Hour))
	if len(claimed) != 2 {
		b.t.Fatalf("ClaimTasks = %d tasks, want j1 and j2", len(claimed))
	}
	for _, c := range claimed {
		switch c.TaskID {
		case "j1":
			b.checkJob("ClaimTasks", c, &want)
		case "j2":
			b.checkJob("ClaimTasks", c, cron)
		default:
			b.t.Errorf("ClaimTasks returned %s", c.TaskID)
		}
		checkClaim(b.t, c, 1, "node-a")
	}
	b.checkJob("GetTask after the claim", b.getTask("j1"), &want)

	// A dump carries the job too.
	d := b.s
	seen := 0
	b.noErr("DumpTasks", d.DumpTasks(b.ctx, func(td store.TaskDump) error {
		switch td.Task.TaskID {
		case "j1":
			b.checkJob("DumpTasks", td.Task, &want)
		case "j2":
			b.checkJob("DumpTasks", td.Task, cron)
		case "j3":
			b.checkJob("DumpTasks", td.Task, off)
		default:
			return nil
		}
		seen++
		return nil
	}))
	if seen != 3 {
		b.t.Errorf("DumpTasks gave %d of the 3 jobs", seen)
	}
}

func testCreateJobConflicts(b *bundle) {
	jobs := b.jobs()
	j1 := newJob("j1", "k1")
	b.createJob(j1)

	// A taken task_id: the error says so, and the new key is not taken.
	err := jobs.CreateJob(b.ctx, newJob("j1", "k2"))
	b.wantConflictSaying("CreateJob of a taken id", err, "j1")
	b.wantKeyHeldBy("after the id conflict", "k2", "")
	b.checkJob("j1 after the id conflict", b.getTask("j1"), j1)

	// A held key: the error says so, and no task is left behind.
	err = jobs.CreateJob(b.ctx, newJob("j2", "k1"))
	b.wantConflictSaying("CreateJob with a held key", err, "k1")
	b.wantNoTask("after the key conflict", "j2")
	b.wantKeyHeldBy("after the key conflict", "k1", "j1")

	// A row's task id is taken as well.
	row := b.addTask(newTask("t1", "r1"))
	err = jobs.CreateJob(b.ctx, newJob("t1", "k3"))
	b.wantConflictSaying("CreateJob of a row task's id", err, "t1")
	b.wantKeyHeldBy("after the row id conflict", "k3", "")
	if got := b.getTask("t1"); got.Job != nil || got.Scenario != scenario || got.Version != row.Version {
		b.t.Errorf("row task after the conflict = %s, want it unchanged", mustJSON(got))
	}

	// Jobs without a key never clash on it.
	b.createJob(newJob("j3", ""))
	b.createJob(newJob("j4", ""))
	b.wantKeyHeldBy("no key", "", "")
}

// testCreateJobs: store.Jobs.CreateJobs answers each job as
// CreateJob would (its own conflict or invalid error, also against another
// job of the same call) and stores exactly the others, each with its first
// event and no other job's: a refused job leaves no event, also under an
// id that a stored job has.
func testCreateJobs(b *bundle) {
	jb := b.s
	old := newJob("old", "k-old")
	b.createJob(old)
	noJob := newJob("nojob", "")
	noJob.Job = nil
	ts := []*task.Task{
		newJob("a", "ka"),    // 0: stored, takes ka
		newJob("b", ""),      // 1: stored
		newJob("c", "ka"),    // 2: ka is a's, taken in this call
		newJob("d", "k-old"), // 3: k-old is held by old
		newJob("old", "ke"),  // 4: the id is taken: ke stays free
		noJob,                // 5: invalid
		newJob("b", "kb"),    // 6: the id is b's, taken in this call: kb stays free
		newJob("h", "kh"),    // 7: stored, takes kh
		newJob("old", ""),    // 8: the id is taken, no key
		newJob("a", ""),      // 9: the id is a's, taken in this call, no key
		newJob("i", ""),      // 10: stored after those
	}
	want := make([]task.Task, len(ts))
	evs := make([]store.JobEvent, len(ts))
	for i, t := range ts {
		want[i] = *t
		evs[i] = store.JobEvent{JobID: "not-" + t.TaskID, At: at(time.Duration(i) * time.Second), State: task.JobPending,
			Reason: fmt.Sprintf("submitted %d", i)}
	}

	// Events that are not one per job: refused as a whole.
	_, err := jb.CreateJobs(b.ctx, ts, evs[:2])
	b.wantErr("CreateJobs with 2 events for 11 jobs", err, task.ErrInvalid)
	b.wantNoTask("after CreateJobs refused as a whole", "i")

	errs, err := jb.CreateJobs(b.ctx, ts, evs)
	b.noErr("CreateJobs", err)
	if len(errs) != len(ts) {
		b.t.Fatalf("CreateJobs gave %d results for %d jobs", len(errs), len(ts))
	}
	for _, i := range []int{0, 1, 7, 10} {
		if errs[i] != nil {
			b.t.Errorf("CreateJobs: job %d (%s): %v, want it stored", i, ts[i].TaskID, errs[i])
			continue
		}
		if ts[i].Version != 1 || ts[i].CreatedAt.IsZero() || !ts[i].UpdatedAt.Equal(ts[i].CreatedAt) {
			b.t.Errorf("CreateJobs set on %s version %d, created %v, updated %v; want 1 and two equal times",
				ts[i].TaskID, ts[i].Version, ts[i].CreatedAt, ts[i].UpdatedAt)
		}
		w := want[i]
		w.Version = 1
		b.checkJob("GetTask after CreateJobs", b.getTask(ts[i].TaskID), &w)
		ev := evs[i]
		ev.JobID = ts[i].TaskID
		b.sameEvents("events after CreateJobs of "+ts[i].TaskID, b.jobEvents(ts[i].TaskID, store.MaxJobEvents), []store.JobEvent{ev})
	}
	for _, id := range []string{"old", "c", "d", "nojob"} { // old: its id refused twice
		b.sameEvents("events after CreateJobs refused "+id, b.jobEvents(id, store.MaxJobEvents), nil)
	}
	b.wantConflictSaying("CreateJobs: a key taken by an earlier job of the call", errs[2], "ka")
	b.wantConflictSaying("CreateJobs: a held key", errs[3], "k-old")
	b.wantConflictSaying("CreateJobs: a taken id", errs[4], "old")
	b.wantErr("CreateJobs: a job without Job", errs[5], task.ErrInvalid)
	b.wantConflictSaying("CreateJobs: an id taken by an earlier job of the call", errs[6], "b")
	b.wantConflictSaying("CreateJobs: a taken id, no key", errs[8], "old")
	b.wantConflictSaying("CreateJobs: an id taken by an earlier job of the call, no key", errs[9], "a")
	if got := b.getTask("a"); got.Job == nil || got.Job.Key != "ka" {
		b.t.Errorf("a after CreateJobs holds key %v, want ka (the keyless job with its id was refused)", got.Job)
	}
	for _, id := range []string{"c", "d", "nojob"} {
		b.wantNoTask("after CreateJobs", id)
	}
	b.checkJob("old after CreateJobs", b.getTask("old"), old)
	if got := b.getTask("b"); got.Job == nil || got.Job.Key != "" {
		b.t.Errorf("b after CreateJobs holds key %q, want none", got.Job.Key)
	}
	b.wantKeyHeldBy("after CreateJobs", "ka", "a")
	b.wantKeyHeldBy("after CreateJobs", "k-old", "old")
	b.wantKeyHeldBy("after CreateJobs", "ke", "")
	b.wantKeyHeldBy("after CreateJobs", "kb", "")
	b.wantKeyHeldBy("after CreateJobs", "kh", "h")
	listed, err := b.jobs().ListJobs(b.ctx, store.ListJobsParams{Limit: 100})
	b.noErr("ListJobs", err)
	var ids []string
	for _, t := range listed {
		ids = append(ids, t.TaskID)
	}
	slices.Sort(ids)
	if !slices.Equal(ids, []string{"a", "b", "h", "i", "old"}) {
		b.t.Errorf("jobs after CreateJobs: %v, want [a b h i old]", ids)
	}

	// None at all, and only refused ones, store nothing and fail nothing.
	errs, err = jb.CreateJobs(b.ctx, nil, nil)
	b.noErr("CreateJobs of none", err)
	if len(errs) != 0 {
		b.t.Errorf("CreateJobs of none gave %d results", len(errs))
	}
	errs, err = jb.CreateJobs(b.ctx, []*task.Task{newJob("a", "")}, []store.JobEvent{{State: task.JobPending}})
	b.noErr("CreateJobs of a taken id alone", err)
	if len(errs) != 1 {
		b.t.Fatalf("CreateJobs of one gave %d results", len(errs))
	}
	b.wantConflictSaying("CreateJobs of a taken id alone", errs[0], "a")
	b.sameEvents("events of a after CreateJobs refused its id again", b.jobEvents("a", store.MaxJobEvents),
		[]store.JobEvent{{JobID: "a", At: evs[0].At, State: task.JobPending, Reason: evs[0].Reason}})
}

func testJobByKey(b *bundle) {
	b.wantKeyHeldBy("empty store", "k1", "")
	j1, j2 := newJob("j1", "k1"), newJob("j2", "k2")
	b.createJob(j1)
	b.createJob(j2)
	got, err := b.jobs().JobByKey(b.ctx, "k2")
	b.noErr("JobByKey(k2)", err)
	b.checkJob("JobByKey(k2)", got, j2)
	b.wantKeyHeldBy("other key", "k1", "j1")
	b.wantKeyHeldBy("unknown key", "k3", "")
}

func testReplaceJob(b *bundle) {
	jobs := b.jobs()
	j1 := newJob("j1", "k")
	b.createJob(j1)
	b.claim("node-a", 10, at(time.Hour))

	j2 := newJob("j2", "k")
	j2.Job.Name, j2.Job.DueAt = "https://example.com/v2", at(3*time.Hour+7*time.Millisecond)
	b.noErr("ReplaceJob", jobs.ReplaceJob(b.ctx, "k", "j1", j2))
	if j2.Version != 1 || j2.CreatedAt.IsZero() || !j2.UpdatedAt.Equal(j2.CreatedAt) {
		b.t.Errorf("ReplaceJob set version %d, created %v, updated %v on the new job; want 1 and two equal times",
			j2.Version, j2.CreatedAt, j2.UpdatedAt)
	}
	got, err := jobs.JobByKey(b.ctx, "k")
	b.noErr("JobByKey after the replace", err)
	b.checkJob("JobByKey after the replace", got, j2)
	checkClaim(b.t, got, 0, "")

	// The old job lost the key, says who replaced it, is closed, and its
	// claim was released; the rest of it is kept.
	old := b.getTask("j1")
	want := *j1
	wantJob := *j1.Job
	wantJob.Key, wantJob.ReplacedBy = "", "j2"
	want.Job, want.State, want.Version = &wantJob, task.StateClosed, j1.Version+1
	b.checkJob("replaced job", old, &want)
	checkClaim(b.t, old, 0, "")
	if !old.LeaseUntil.IsZero() {
		b.t.Errorf("replaced job: lease %v, want none", old.LeaseUntil)
	}
	claimed, err := b.s.ListClaimed(b.ctx, "node-a")
	b.noErr("ListClaimed", err)
	if len(claimed) != 0 {
		b.t.Errorf("node-a still holds %+v after the replace", claimed)
	}

	// And again: the key moves on.
	j3 := newJob("j3", "k")
	b.noErr("ReplaceJob again", jobs.ReplaceJob(b.ctx, "k", "j2", j3))
	b.wantKeyHeldBy("second replace", "k", "j3")
	if got := b.getTask("j2"); got.Job == nil || got.Job.Key != "" || got.Job.ReplacedBy != "j3" ||
		got.State != task.StateClosed || got.Version != 2 {
		b.t.Errorf("j2 after its replace = %s, want no key, replaced by j3, closed, version 2", mustJSON(got))
	}
}

func testReplaceJobConflicts(b *bundle) {
	jobs := b.jobs()
	b.createJob(newJob("j1", "k"))
	j2 := newJob("j2", "k")
	b.noErr("ReplaceJob", jobs.ReplaceJob(b.ctx, "k", "j1", j2))
	j2.Version = 1
	j1 := b.getTask("j1")

	// Someone else replaced j1 first.
	err := jobs.ReplaceJob(b.ctx, "k", "j1", newJob("j3", "k"))
	b.wantErr("ReplaceJob of a job that lost the key", err, task.ErrConflict)
	b.wantNoTask("after the conflict", "j3")
	b.wantKeyHeldBy("after the conflict", "k", "j2")
	b.checkJob("j1 after the conflict", b.getTask("j1"), j1)
	b.checkJob("j2 after the conflict", b.getTask("j2"), j2)

	// A job that never held the key.
	b.createJob(newJob("j4", ""))
	err = jobs.ReplaceJob(b.ctx, "k", "j4", newJob("j5", "k"))
	b.wantErr("ReplaceJob of a job without the key", err, task.ErrConflict)
	b.wantNoTask("after the keyless conflict", "j5")
	b.wantKeyHeldBy("after the keyless conflict", "k", "j2")

	// The new job's id is taken: nothing changes.
	err = jobs.ReplaceJob(b.ctx, "k", "j2", newJob("j1", "k"))
	b.wantErr("ReplaceJob by a taken id", err, task.ErrConflict)
	b.wantKeyHeldBy("after the id conflict", "k", "j2")
	b.checkJob("j2 after the id conflict", b.getTask("j2"), j2)
	b.checkJob("j1 after the id conflict", b.getTask("j1"), j1)

	// A missing old job.
	err = jobs.ReplaceJob(b.ctx, "free", "nope", newJob("j6", "free"))
	b.wantErr("ReplaceJob of a missing job", err, task.ErrNotFound)
	b.wantNoTask("after the missing job", "j6")
	b.wantKeyHeldBy("after the missing job", "free", "")
}

// testJobWithoutRow: a job's task goes through claims, fires, feedback,
// statuses and states like a row's task, with no row to mirror onto.
func testJobWithoutRow(b *bundle) {
	j := newJob("j1", "k1")
	b.createJob(j)
	if got := b.claim("node-a", 10, at(time.Hour)); len(got) != 1 || got[0].Job == nil {
		b.t.Fatalf("ClaimTasks = %s, want j1 with its job", mustJSON(got))
	}
	check := func(stage string, next, last time.Time, status string, done int) {
		b.t.Helper()
		tk := b.getTask("j1")
		if !tk.NextFire.Equal(next) || !tk.LastFire.Equal(last) || tk.LastStatus != status || tk.IsDone != done {
			b.t.Errorf("%s: next=%v last=%v status=%q done=%d, want %v %v %q %d", stage,
				tk.NextFire, tk.LastFire, tk.LastStatus, tk.IsDone, next, last, status, done)
		}
		if tk.Version != 1 || tk.Job == nil || tk.Job.Key != "k1" {
			b.t.Errorf("%s: version %d job %s, want version 1 and the job kept", stage, tk.Version, mustJSON(tk.Job))
		}
	}

	slot := j.Job.DueAt
	res, err := b.s.RecordFires(b.ctx, []store.FireRecord{
		{Run: newRun("tr-1", "j1", slot, task.JobTargetID), Status: firedStatus("j1", slot, time.Time{})}})
	b.noErr("RecordFires", err)
	if len(res) != 1 || !res[0].Inserted || res[0].Err != nil {
		b.t.Fatalf("RecordFires = %+v, want inserted", res)
	}
	check("fired", time.Time{}, slot, string(task.RunRunning), 0)

	r := b.getRun("tr-1")
	r.State, r.FinishedAt, r.Error = task.RunFailed, slot.Add(time.Second), "503"
	b.noErr("FinishRun", b.s.FinishRun(b.ctx, r, store.TaskStatusParams{TaskID: "j1", LastStatus: string(task.RunFailed)}))
	check("failed", time.Time{}, slot, string(task.RunFailed), 0)

	retry := slot.Add(time.Minute)
	b.noErr("SetTaskStatus", b.s.SetTaskStatus(b.ctx, store.TaskStatusParams{TaskID: "j1", NextFire: retry}))
	check("retry armed", retry, slot, string(task.RunFailed), 0)
	b.noErr("SetTaskStatuses", b.s.SetTaskStatuses(b.ctx, []store.TaskStatusParams{{TaskID: "j1", LastStatus: "pending"}}))
	check("statuses", retry, slot, "pending", 0)

	// A second attempt, accepted, then reported done.
	r2 := newRun("tr-2", "j1", retry, task.JobTargetID)
	r2.State = task.RunRunning
	if !b.recordFire(r2, firedStatus("j1", retry, time.Time{})) {
		b.t.Fatal("RecordFire of the retry = false")
	}
	b.accept(r2, retry.Add(time.Hour))
	check("accepted", time.Time{}, retry, string(task.RunAccepted), 0)
	if got := b.feedback("tr-2", task.Feedback{At: retry.Add(time.Second)}); got.State != task.RunDone {
		b.t.Errorf("final report: run %s, want done", got.State)
	}
	check("reported", time.Time{}, retry, string(task.RunDone), 0)
	b.noErr("SetTaskStatus done", b.s.SetTaskStatus(b.ctx, store.TaskStatusParams{TaskID: "j1", Done: true}))
	check("done", time.Time{}, retry, string(task.RunDone), 1)

	closed := b.setState("j1", task.StateClosed, time.Time{}, at(5*time.Hour))
	if closed.State != task.StateClosed || closed.Version != 2 || closed.IsClaimed != 0 || closed.Job == nil ||
		!closed.Job.DueAt.Equal(slot) {
		b.t.Errorf("SetTaskState(closed) = %s, want closed, version 2, unclaimed, the job kept", mustJSON(closed))
	}
	b.checkStored("closed", closed)

	// No row was made, and the patrols leave the job alone.
	_, err = b.s.GetRow(b.ctx, task.JobScenario, "j1")
	b.wantErr("GetRow of a job", err, task.ErrNotFound)
	rows, err := b.s.ListRows(b.ctx, task.JobScenario, "", 10)
	b.noErr("ListRows", err)
	unfetched, err := b.s.ListUnfetchedRows(b.ctx, 10)
	b.noErr("ListUnfetchedRows", err)
	if len(rows)+len(unfetched) != 0 {
		b.t.Errorf("rows after a job's life: %d in %s, %d unfetched; want none", len(rows), task.JobScenario, len(unfetched))
	}
	n, err := b.s.PurgeDeleted(b.ctx)
	b.noErr("PurgeDeleted", err)
	if n != 0 {
		b.t.Errorf("PurgeDeleted removed %d tasks, want none", n)
	}
	b.checkStored("after the patrols", closed)
	b.wantKeyHeldBy("after the patrols", "k1", "j1")
}
