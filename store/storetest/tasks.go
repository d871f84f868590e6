package storetest

import (
	"slices"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

func taskCases() []testCase {
	return []testCase{
		{name: "GetMissing", fn: testGetTaskMissing},
		{name: "GetMany", fn: testGetTasks},
		{name: "Heads", fn: testTaskHeads},
		{name: "IDsByTitle", fn: testTaskIDsByTitle},
		{name: "Claim", fn: testClaim},
		{name: "ClaimSkipsDoneAndDisabled", fn: testClaimSkipsDoneAndDisabled},
		{name: "Release", fn: testReleaseTask},
		{name: "ReleaseNotHeld", fn: testReleaseTaskNotHeld},
		{name: "ReleaseClaims", fn: testReleaseClaims},
		{name: "Park", fn: testParkTasks},
		{name: "ParkedEditedIsClaimable", fn: testParkedEditedIsClaimable},
		{name: "RenewAndListClaimed", fn: testRenewAndListClaimed},
		{name: "ReleaseExpired", fn: testReleaseExpired},
		{name: "SetStatusMirrorsRow", fn: testSetTaskStatus},
		{name: "SetStatusMissing", fn: testSetTaskStatusMissing},
		{name: "DoneReleasesClaim", fn: testDoneReleasesClaim},
		{name: "SetStatusesBatch", fn: testSetTaskStatuses},
		{name: "PurgeDeleted", fn: testPurgeDeleted},
		{name: "OverdueTasks", fn: testOverdueTasks},
	}
}

func testGetTaskMissing(b *bundle) {
	_, err := b.s.GetTask(b.ctx, "nope")
	b.wantErr("GetTask missing", err, task.ErrNotFound)
}

func testClaim(b *bundle) {
	ids := b.addTasks("t", 5)
	before := b.getTask(ids[0])
	lease := at(time.Hour)

	first := b.claim("node-a", 3, lease)
	if len(first) != 3 {
		b.t.Fatalf("claimed %d tasks, want 3 (the limit)", len(first))
	}
	for _, tk := range first {
		checkClaim(b.t, tk, 1, "node-a")
		if !tk.LeaseUntil.Equal(lease) {
			b.t.Errorf("task %s: lease_until %v, want %v", tk.TaskID, tk.LeaseUntil, lease)
		}
		stored := b.getTask(tk.TaskID)
		checkClaim(b.t, stored, 1, "node-a")
		checkContent(b.t, tk, stored)
	}
	rest := b.claim("node-b", 10, lease)
	if len(rest) != 2 {
		b.t.Errorf("second claim got %d tasks, want the 2 left", len(rest))
	}
	var got []string
	for _, tk := range slices.Concat(first, rest) {
		got = append(got, tk.TaskID)
	}
	slices.Sort(got)
	if !slices.Equal(got, ids) {
		b.t.Errorf("claimed %v, want each of %v once", got, ids)
	}
	if none := b.claim("node-c", 10, lease); len(none) != 0 {
		b.t.Errorf("claimed %d tasks with none due", len(none))
	}
	// A claim is not an edit: the version stays.
	if after := b.getTask(ids[0]); after.Version != before.Version {
		b.t.Errorf("version after claim = %d, want %d", after.Version, before.Version)
	}
}

func testClaimSkipsDoneAndDisabled(b *bundle) {
	b.addTask(newTask("due", "r1"))
	off := newTask("off", "r2")
	off.IsEnable = 0
	b.addTask(off)
	b.addTask(newTask("done", "r3"))
	b.noErr("SetTaskStatus", b.s.SetTaskStatus(b.ctx, store.TaskStatusParams{TaskID: "done", Done: true}))
	if d := b.getTask("done"); d.IsDone != 1 {
		b.t.Fatalf("is_done = %d after Done, want 1", d.IsDone)
	}
	got := b.claim("node-a", 10, at(time.Hour))
	if len(got) != 1 || got[0].TaskID != "due" {
		var ids []string
		for _, tk := range got {
			ids = append(ids, tk.TaskID)
		}
		b.t.Errorf("claimed %v, want only [due]", ids)
	}
	if _, err := b.s.ClaimTasks(b.ctx, store.ClaimParams{Limit: 1, LeaseUntil: at(time.Hour)}); err == nil {
		b.t.Errorf("ClaimTasks without an owner: no error")
	}
}

func testReleaseTask(b *bundle) {
	b.addTasks("t", 2)
	b.claim("node-a", 10, at(time.Hour))
	b.noErr("ReleaseTask", b.s.ReleaseTask(b.ctx, "t-000", "node-a"))
	checkClaim(b.t, b.getTask("t-000"), 0, "")
	checkClaim(b.t, b.getTask("t-001"), 1, "node-a")
	got := b.claim("node-b", 10, at(time.Hour))
	if len(got) != 1 || got[0].TaskID != "t-000" {
		b.t.Errorf("reclaim after release got %d tasks, want t-000", len(got))
	}
}

func testReleaseTaskNotHeld(b *bundle) {
	ids := b.addTasks("t", 2)
	held := b.claim("node-a", 1, at(time.Hour))[0].TaskID
	free := ids[0]
	if free == held {
		free = ids[1]
	}
	// Releasing what one does not hold changes nothing and is no error, so
	// a node can release after losing a race with a schedule change.
	b.noErr("ReleaseTask by another owner", b.s.ReleaseTask(b.ctx, held, "node-b"))
	checkClaim(b.t, b.getTask(held), 1, "node-a")
	b.noErr("ReleaseTask unclaimed", b.s.ReleaseTask(b.ctx, free, "node-a"))
	checkClaim(b.t, b.getTask(free), 0, "")
	b.wantErr("ReleaseTask missing", b.s.ReleaseTask(b.ctx, "nope", "node-a"), task.ErrNotFound)
}

// testReleaseClaims: a leaving node gives up every claim it holds at
// once, and no other node's; the released tasks can be claimed again.
func testReleaseClaims(b *bundle) {
	b.addTasks("t", 5)
	a := b.claim("node-a", 3, at(time.Hour))
	other := b.claim("node-b", 10, at(time.Hour))
	if len(a) != 3 || len(other) != 2 {
		b.t.Fatalf("claimed %d and %d, want 3 and 2", len(a), len(other))
	}
	n, err := b.s.ReleaseClaims(b.ctx, "node-a")
	b.noErr("ReleaseClaims", err)
	if n != 3 {
		b.t.Errorf("ReleaseClaims = %d, want 3", n)
	}
	for _, tk := range a {
		got := b.getTask(tk.TaskID)
		checkClaim(b.t, got, 0, "")
		if !got.LeaseUntil.IsZero() {
			b.t.Errorf("%s released with lease_until %v, want none", tk.TaskID, got.LeaseUntil)
		}
	}
	for _, tk := range other {
		checkClaim(b.t, b.getTask(tk.TaskID), 1, "node-b")
	}
	if n, err := b.s.ReleaseClaims(b.ctx, "node-a"); err != nil || n != 0 {
		b.t.Errorf("ReleaseClaims again = %d, %v; want 0, nil", n, err)
	}
	if again := b.claim("node-c", 10, at(time.Hour)); len(again) != 3 {
		b.t.Errorf("node-c claimed %d released tasks, want 3", len(again))
	}
	_, err = b.s.ReleaseClaims(b.ctx, "")
	b.wantErr("ReleaseClaims without an owner", err, task.ErrInvalid)
}

// claimBy claims up to limit tasks for owner with arming instants up to
// armBy, and returns their ids in the order claimed.
func (b *bundle) claimBy(owner string, limit int, armBy time.Time) []string {
	b.t.Helper()
	got, err := b.s.ClaimTasks(b.ctx, store.ClaimParams{Owner: owner, LeaseUntil: at(time.Hour), Limit: limit, ArmBy: armBy})
	b.noErr("ClaimTasks "+owner, err)
	ids := make([]string, len(got))
	for i, tk := range got {
		ids[i] = tk.TaskID
	}
	return ids
}

// testParkTasks: a parked claim is handed back only by its holder at the
// version it names; a parked task is left out of a claim bounded before
// its arming instant, and claims come soonest arming instant first.
func testParkTasks(b *bundle) {
	ids := b.addTasks("t", 4)
	if got := b.claimBy("node-a", 3, time.Time{}); !slices.Equal(got, ids[:3]) {
		b.t.Fatalf("node-a claimed %v, want %v (insertion order among unparked tasks)", got, ids[:3])
	}
	b.claimBy("node-b", 1, time.Time{})
	v := b.getTask(ids[0]).Version
	parked, err := b.s.ParkTasks(b.ctx, "node-a", []store.ParkParams{
		{TaskID: ids[0], Version: v, ArmAt: at(2 * time.Hour)},
		{TaskID: ids[1], Version: v, ArmAt: at(time.Hour)},
		{TaskID: ids[2], Version: v + 1, ArmAt: at(time.Hour)}, // edited since it was armed
		{TaskID: ids[3], Version: v, ArmAt: at(time.Hour)},     // node-b's
		{TaskID: "nope", Version: 1, ArmAt: at(time.Hour)},
	})
	b.noErr("ParkTasks", err)
	slices.Sort(parked)
	if !slices.Equal(parked, ids[:2]) {
		b.t.Errorf("ParkTasks parked %v, want %v", parked, ids[:2])
	}
	checkClaim(b.t, b.getTask(ids[0]), 0, "")
	checkClaim(b.t, b.getTask(ids[1]), 0, "")
	checkClaim(b.t, b.getTask(ids[2]), 1, "node-a")
	checkClaim(b.t, b.getTask(ids[3]), 1, "node-b")
	if after := b.getTask(ids[0]); after.Version != v {
		b.t.Errorf("version after park = %d, want %d (parking is not an edit)", after.Version, v)
	}
	if got := b.claimBy("node-c", 10, at(30*time.Minute)); len(got) != 0 {
		b.t.Errorf("a claim bounded before both arming instants took %v", got)
	}
	if got := b.claimBy("node-c", 10, at(time.Hour)); !slices.Equal(got, ids[1:2]) {
		b.t.Errorf("a claim bounded at the first arming instant took %v, want %v", got, ids[1:2])
	}
	b.noErr("ReleaseTask", b.s.ReleaseTask(b.ctx, ids[1], "node-c"))
	// A claim without a bound takes parked tasks too, soonest first; a
	// claim clears the arming instant (a later release needs no bound).
	if got := b.claimBy("node-c", 1, time.Time{}); !slices.Equal(got, ids[1:2]) {
		b.t.Errorf("an unbounded claim of one took %v, want %v (the sooner arming instant)", got, ids[1:2])
	}
	b.noErr("ReleaseTask", b.s.ReleaseTask(b.ctx, ids[1], "node-c"))
	if got := b.claimBy("node-c", 10, at(0)); !slices.Equal(got, ids[1:2]) {
		b.t.Errorf("after a claim and release, a claim bounded now took %v, want %v", got, ids[1:2])
	}
	if got := b.claimBy("node-c", 10, time.Time{}); !slices.Equal(got, ids[:1]) {
		b.t.Errorf("an unbounded claim took %v, want %v", got, ids[:1])
	}
	_, err = b.s.ParkTasks(b.ctx, "", []store.ParkParams{{TaskID: ids[0], Version: v}})
	b.wantErr("ParkTasks without an owner", err, task.ErrInvalid)
}

// testParkedEditedIsClaimable: every kind of edit of a parked task (a
// content change, a schedule change, a state change, a row disabled)
// makes it claimable at once, whatever its arming instant said.
func testParkedEditedIsClaimable(b *bundle) {
	ids := b.addTasks("t", 4)
	b.claimBy("node-a", 10, time.Time{})
	var ps []store.ParkParams
	for _, id := range ids {
		ps = append(ps, store.ParkParams{TaskID: id, Version: b.getTask(id).Version, ArmAt: at(time.Hour)})
	}
	parked, err := b.s.ParkTasks(b.ctx, "node-a", ps)
	b.noErr("ParkTasks", err)
	if len(parked) != len(ids) {
		b.t.Fatalf("parked %v, want all of %v", parked, ids)
	}
	content := newTask(ids[0], "row-"+ids[0])
	content.TaskPara = "water the plants twice"
	b.noErr("ApplySync content", b.syncRow("row-"+ids[0], content))
	sched := newTask(ids[1], "row-"+ids[1])
	sched.CronPara = "daily 09:30"
	b.noErr("ApplySync schedule", b.syncRow("row-"+ids[1], sched))
	b.setState(ids[2], task.StateStopped, at(0), at(time.Minute))
	got := b.claimBy("node-b", 10, at(0))
	slices.Sort(got)
	if !slices.Equal(got, ids[:3]) {
		b.t.Errorf("after the edits a claim bounded now took %v, want the three edited %v", got, ids[:3])
	}
	// A disabled task is not claimable at all; enabled again, at once.
	b.noErr("ApplySync disable", b.s.ApplySync(b.ctx, store.ApplySyncParams{Scenario: scenario, RowID: "row-" + ids[3],
		RowVersion: b.getRow(scenario, "row-"+ids[3]).Version, DisableTask: true, Now: at(time.Minute)}))
	if got := b.claimBy("node-b", 10, time.Time{}); len(got) != 0 {
		b.t.Errorf("a disabled task was claimed: %v", got)
	}
	b.noErr("ApplySync enable", b.syncRow("row-"+ids[3], newTask(ids[3], "row-"+ids[3])))
	if got := b.claimBy("node-b", 10, at(0)); !slices.Equal(got, ids[3:]) {
		b.t.Errorf("the task enabled again: a claim bounded now took %v, want %v", got, ids[3:])
	}
}

func testRenewAndListClaimed(b *bundle) {
	b.addTasks("t", 5)
	b.claim("node-a", 3, at(time.Minute))
	b.claim("node-b", 10, at(time.Minute))

	n, err := b.s.RenewLeases(b.ctx, "node-a", at(time.Hour))
	b.noErr("RenewLeases", err)
	if n != 3 {
		b.t.Errorf("RenewLeases = %d, want 3", n)
	}
	claimed, err := b.s.ListClaimed(b.ctx, "node-a")
	b.noErr("ListClaimed", err)
	if len(claimed) != 3 {
		b.t.Fatalf("ListClaimed(node-a) = %d tasks, want 3", len(claimed))
	}
	for _, c := range claimed {
		tk := b.getTask(c.TaskID)
		checkClaim(b.t, tk, 1, "node-a")
		if !tk.LeaseUntil.Equal(at(time.Hour)) {
			b.t.Errorf("task %s: lease_until %v, want %v", tk.TaskID, tk.LeaseUntil, at(time.Hour))
		}
		if c.IsEnable != 1 || c.IsDone != 0 || c.Version != tk.Version {
			b.t.Errorf("ListClaimed entry %+v, want is_enable 1, is_done 0, version %d", c, tk.Version)
		}
	}
	// node-b's leases were not touched.
	other, err := b.s.ListClaimed(b.ctx, "node-b")
	b.noErr("ListClaimed node-b", err)
	for _, c := range other {
		if tk := b.getTask(c.TaskID); !tk.LeaseUntil.Equal(at(time.Minute)) {
			b.t.Errorf("node-b's task %s: lease_until %v, want %v", tk.TaskID, tk.LeaseUntil, at(time.Minute))
		}
	}
	if n, err := b.s.RenewLeases(b.ctx, "node-z", at(time.Hour)); err != nil || n != 0 {
		b.t.Errorf("RenewLeases(unknown owner) = %d, %v; want 0, nil", n, err)
	}
	if c, err := b.s.ListClaimed(b.ctx, "node-z"); err != nil || len(c) != 0 {
		b.t.Errorf("ListClaimed(unknown owner) = %v, %v; want none", c, err)
	}
}

func testReleaseExpired(b *bundle) {
	b.addTasks("t", 4)
	b.claim("node-a", 2, at(time.Minute))
	b.claim("node-b", 2, at(time.Hour))

	n, err := b.s.ReleaseExpired(b.ctx, at(0))
	b.noErr("ReleaseExpired", err)
	if n != 0 {
		b.t.Errorf("ReleaseExpired before any lease ended = %d, want 0", n)
	}
	n, err = b.s.ReleaseExpired(b.ctx, at(2*time.Minute))
	b.noErr("ReleaseExpired", err)
	if n != 2 {
		b.t.Errorf("ReleaseExpired = %d, want node-a's 2", n)
	}
	if c, _ := b.s.ListClaimed(b.ctx, "node-a"); len(c) != 0 {
		b.t.Errorf("node-a still holds %d tasks", len(c))
	}
	if c, _ := b.s.ListClaimed(b.ctx, "node-b"); len(c) != 2 {
		b.t.Errorf("node-b holds %d tasks, want 2", len(c))
	}
	if got := b.claim("node-c", 10, at(time.Hour)); len(got) != 2 {
		b.t.Errorf("reclaimed %d released tasks, want 2", len(got))
	}
	// A renewed lease is not expired.
	_, err = b.s.RenewLeases(b.ctx, "node-b", at(3*time.Hour))
	b.noErr("RenewLeases", err)
	if n, _ := b.s.ReleaseExpired(b.ctx, at(2*time.Hour)); n != 2 {
		b.t.Errorf("ReleaseExpired at +2h = %d, want node-c's 2 (node-b renewed)", n)
	}
}

func testSetTaskStatus(b *bundle) {
	before := b.addTask(newTask("t1", "r1"))
	rowBefore := b.getRow(scenario, "r1")
	fire, next := at(time.Hour), at(25*time.Hour)
	b.noErr("SetTaskStatus", b.s.SetTaskStatus(b.ctx, store.TaskStatusParams{
		TaskID: "t1", NextFire: next, SetNextFire: true, LastFire: fire, LastStatus: "running"}))
	check := func(stage string, next, fire time.Time, status string, done int) {
		b.t.Helper()
		tk := b.getTask("t1")
		if !tk.NextFire.Equal(next) || !tk.LastFire.Equal(fire) || tk.LastStatus != status || tk.IsDone != done {
			b.t.Errorf("%s: task next=%v last=%v status=%q done=%d, want %v %v %q %d",
				stage, tk.NextFire, tk.LastFire, tk.LastStatus, tk.IsDone, next, fire, status, done)
		}
		if tk.Version != before.Version {
			b.t.Errorf("%s: task version %d, want %d (feedback is not an edit)", stage, tk.Version, before.Version)
		}
		utc(b.t, "NextFire", tk.NextFire)
		r := b.getRow(scenario, "r1")
		if !r.NextFire.Equal(next) || !r.LastFire.Equal(fire) || r.LastStatus != status {
			b.t.Errorf("%s: row next=%v last=%v status=%q, want %v %v %q", stage, r.NextFire, r.LastFire, r.LastStatus, next, fire, status)
		}
		if r.Version != rowBefore.Version || r.IsFetched != rowBefore.IsFetched {
			b.t.Errorf("%s: row version=%d is_fetched=%d, want %d %d", stage, r.Version, r.IsFetched, rowBefore.Version, rowBefore.IsFetched)
		}
	}
	check("fired", next, fire, "running", 0)
	// Zero values leave what is stored.
	b.noErr("SetTaskStatus empty", b.s.SetTaskStatus(b.ctx, store.TaskStatusParams{TaskID: "t1"}))
	check("empty", next, fire, "running", 0)
	// Without SetNextFire a non-zero NextFire still sets it.
	next = at(49 * time.Hour)
	b.noErr("SetTaskStatus next", b.s.SetTaskStatus(b.ctx, store.TaskStatusParams{TaskID: "t1", NextFire: next}))
	check("next", next, fire, "running", 0)
	// Done with SetNextFire and a zero NextFire clears it.
	b.noErr("SetTaskStatus done", b.s.SetTaskStatus(b.ctx, store.TaskStatusParams{
		TaskID: "t1", LastStatus: "done", Done: true, SetNextFire: true}))
	check("done", time.Time{}, fire, "done", 1)
}

// testDoneReleasesClaim: a status that marks a task done releases its
// claim in the same write, through each way a status is written; a status
// that does not leaves the claim.
func testDoneReleasesClaim(b *bundle) {
	b.addTasks("t", 4)
	b.claim("node-a", 4, at(time.Minute))
	b.noErr("SetTaskStatus running", b.s.SetTaskStatus(b.ctx, store.TaskStatusParams{TaskID: "t-000", LastStatus: "running"}))
	b.noErr("SetTaskStatus done", b.s.SetTaskStatus(b.ctx, store.TaskStatusParams{TaskID: "t-001", LastStatus: "done", Done: true}))
	b.noErr("SetTaskStatuses", b.s.SetTaskStatuses(b.ctx, []store.TaskStatusParams{
		{TaskID: "t-002", LastStatus: "running"}, {TaskID: "t-002", LastStatus: "done", Done: true, SetNextFire: true}}))
	checkClaim(b.t, b.getTask("t-000"), 1, "node-a")
	for _, id := range []string{"t-001", "t-002"} {
		tk := b.getTask(id)
		checkClaim(b.t, tk, 0, "")
		if tk.IsDone != 1 || !tk.LeaseUntil.IsZero() {
			b.t.Errorf("task %s: is_done %d, lease_until %v; want 1 and none", id, tk.IsDone, tk.LeaseUntil)
		}
	}
	checkClaim(b.t, b.getTask("t-003"), 1, "node-a")
	claimed, err := b.s.ListClaimed(b.ctx, "node-a")
	b.noErr("ListClaimed", err)
	if len(claimed) != 2 {
		b.t.Errorf("ListClaimed(node-a) = %+v, want t-000 and t-003", claimed)
	}
	// Nobody claims a done task again.
	if got := b.claimBy("node-b", 10, at(time.Hour)); len(got) != 0 {
		b.t.Errorf("claimed %v, want none (the rest are held or done)", got)
	}
}

func testSetTaskStatusMissing(b *bundle) {
	err := b.s.SetTaskStatus(b.ctx, store.TaskStatusParams{TaskID: "nope", LastStatus: "done"})
	b.wantErr("SetTaskStatus missing", err, task.ErrNotFound)
}

func testPurgeDeleted(b *bundle) {
	b.addTask(newTask("held", "r1"))
	b.claim("node-a", 1, at(time.Hour))
	b.addTask(newTask("free", "r2"))
	b.addTask(newTask("kept", "r3"))
	off := newTask("off", "r4")
	off.IsEnable = 0
	b.addTask(off) // disabled but not deleted: kept
	for _, id := range []string{"r1", "r2"} {
		b.noErr("DeleteRow", b.s.DeleteRow(b.ctx, scenario, id))
	}
	n, err := b.s.PurgeDeleted(b.ctx)
	b.noErr("PurgeDeleted", err)
	if n != 1 {
		b.t.Errorf("PurgeDeleted = %d, want 1 (free; held is still claimed)", n)
	}
	_, err = b.s.GetTask(b.ctx, "free")
	b.wantErr("GetTask purged", err, task.ErrNotFound)
	b.getTask("held")
	b.getTask("kept")
	b.getTask("off")

	b.noErr("ReleaseTask", b.s.ReleaseTask(b.ctx, "held", "node-a"))
	n, err = b.s.PurgeDeleted(b.ctx)
	b.noErr("PurgeDeleted", err)
	if n != 1 {
		b.t.Errorf("PurgeDeleted after release = %d, want 1", n)
	}
	_, err = b.s.GetTask(b.ctx, "held")
	b.wantErr("GetTask purged", err, task.ErrNotFound)
}

func testGetTasks(b *bundle) {
	b.addTask(newTask("t1", "r1"))
	b.addTask(newTask("t2", "r2"))
	b.addTask(newTask("t3", "r3"))
	got, err := b.s.GetTasks(b.ctx, []string{"t3", "t1", "missing"})
	b.noErr("GetTasks", err)
	ids := map[string]bool{}
	for _, tk := range got {
		ids[tk.TaskID] = true
		checkContent(b.t, tk, b.getTask(tk.TaskID))
	}
	if len(got) != 2 || !ids["t1"] || !ids["t3"] {
		b.t.Errorf("GetTasks(t3, t1, missing) = %d tasks %v, want t1 and t3", len(got), ids)
	}
	if got, err := b.s.GetTasks(b.ctx, nil); err != nil || len(got) != 0 {
		b.t.Errorf("GetTasks(none) = %v, %v", got, err)
	}
	_, err = b.s.GetTasks(b.ctx, make([]string, store.MaxStatusBatch+1))
	b.wantErr("GetTasks over the bound", err, task.ErrInvalid)
}

// testTaskHeads: a head carries what changes without an edit (claim,
// lease, fire status, done) as GetTask reads it; applied to the task of
// its version it gives the stored task, and an edit makes the old
// version's copy inapplicable.
func testTaskHeads(b *bundle) {
	old := b.addTask(newTask("h1", "r1"))
	b.addTask(newTask("h2", "r2"))
	lease := at(time.Hour)
	if got := b.claim("node-a", 1, lease); len(got) != 1 {
		b.t.Fatalf("claimed %d tasks, want 1", len(got))
	}
	b.noErr("SetTaskStatus", b.s.SetTaskStatus(b.ctx, store.TaskStatusParams{TaskID: "h2",
		NextFire: at(2 * time.Hour), SetNextFire: true, LastFire: at(time.Minute), LastStatus: "running", Done: true}))

	heads, err := b.s.TaskHeads(b.ctx, []string{"h2", "h1", "missing"})
	b.noErr("TaskHeads", err)
	if len(heads) != 2 {
		b.t.Fatalf("TaskHeads(h2, h1, missing) = %d heads, want 2", len(heads))
	}
	for _, h := range heads {
		want := b.getTask(h.TaskID)
		got := h.Apply(old)
		if h.TaskID == "h2" {
			got = h.Apply(b.getTask("h2"))
		}
		if got == nil {
			b.t.Fatalf("head of %s (version %d) does not apply to its task", h.TaskID, h.Version)
		}
		checkContent(b.t, got, want)
		if got.Version != want.Version || got.IsEnable != want.IsEnable || got.IsClaimed != want.IsClaimed ||
			got.ClaimedBy != want.ClaimedBy || !got.LeaseUntil.Equal(want.LeaseUntil) || got.IsDone != want.IsDone ||
			!got.NextFire.Equal(want.NextFire) || !got.LastFire.Equal(want.LastFire) || got.LastStatus != want.LastStatus ||
			!got.UpdatedAt.Equal(want.UpdatedAt) {
			b.t.Errorf("head of %s applied: %+v\nwant %+v", h.TaskID, got, want)
		}
	}
	for _, h := range heads {
		switch h.TaskID {
		case "h1":
			if h.ClaimedBy != "node-a" || h.IsClaimed != 1 || !h.LeaseUntil.Equal(lease) {
				b.t.Errorf("h1 head: claimed %d by %q until %v, want node-a until %v", h.IsClaimed, h.ClaimedBy, h.LeaseUntil, lease)
			}
		case "h2":
			if h.IsDone != 1 || h.LastStatus != "running" || !h.NextFire.Equal(at(2*time.Hour)) {
				b.t.Errorf("h2 head: done %d status %q next %v, want 1 running %v", h.IsDone, h.LastStatus, h.NextFire, at(2*time.Hour))
			}
		}
	}

	// An edit moves the version: the old copy's content is not the task's.
	edited := newTask("h1", "r1")
	edited.TaskPara = "water the garden"
	b.noErr("edit h1", b.syncRow("r1", edited))
	heads, err = b.s.TaskHeads(b.ctx, []string{"h1"})
	b.noErr("TaskHeads after an edit", err)
	if len(heads) != 1 || heads[0].Version == old.Version || heads[0].Apply(old) != nil {
		b.t.Errorf("after an edit: heads %+v (old version %d); want a new version that does not apply to the old copy", heads, old.Version)
	}
	if got, err := b.s.TaskHeads(b.ctx, nil); err != nil || len(got) != 0 {
		b.t.Errorf("TaskHeads(none) = %v, %v", got, err)
	}
	_, err = b.s.TaskHeads(b.ctx, make([]string, store.MaxStatusBatch+1))
	b.wantErr("TaskHeads over the bound", err, task.ErrInvalid)
}

// testOverdueTasks: only enabled, undone tasks watching for absence whose
// next fire is set and before the bound, soonest first, up to the limit.
func testOverdueTasks(b *bundle) {
	add := func(id string, next time.Duration, edit func(*task.Task)) {
		tk := newTask(id, "r-"+id)
		if edit != nil {
			edit(tk)
		}
		b.addTask(tk)
		if next != 0 {
			b.noErr("SetTaskStatus", b.s.SetTaskStatus(b.ctx, store.TaskStatusParams{TaskID: id, NextFire: at(next), SetNextFire: true}))
		}
	}
	add("late", time.Hour, nil)
	add("later", 30*time.Minute, nil)
	add("future", 3*time.Hour, nil)
	add("unwatched", time.Hour, func(tk *task.Task) { tk.Alert.Absent = 0 })
	add("noalert", time.Hour, func(tk *task.Task) { tk.Alert = nil })
	add("off", time.Hour, func(tk *task.Task) { tk.IsEnable = 0 })
	add("unarmed", 0, nil)
	add("done", time.Hour, nil)
	b.noErr("SetTaskStatus done", b.s.SetTaskStatus(b.ctx, store.TaskStatusParams{TaskID: "done", Done: true}))
	ids := func(limit int) []string {
		b.t.Helper()
		got, err := b.s.OverdueTasks(b.ctx, at(2*time.Hour), limit)
		b.noErr("OverdueTasks", err)
		var out []string
		for _, tk := range got {
			out = append(out, tk.TaskID)
			if tk.Alert == nil || tk.Alert.Absent != time.Minute {
				b.t.Errorf("overdue task %s read back with alert %+v, want absent 1m", tk.TaskID, tk.Alert)
			}
		}
		return out
	}
	if got := ids(10); !slices.Equal(got, []string{"later", "late"}) {
		b.t.Errorf("OverdueTasks = %v, want [later late] (soonest next fire first)", got)
	}
	if got := ids(1); !slices.Equal(got, []string{"later"}) {
		b.t.Errorf("OverdueTasks limit 1 = %v, want [later]", got)
	}
	if _, err := b.s.OverdueTasks(b.ctx, at(0), 0); err == nil {
		b.t.Error("OverdueTasks with limit 0: no error")
	}
}
