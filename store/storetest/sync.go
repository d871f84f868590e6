package storetest

import (
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

func syncCases() []testCase {
	return []testCase{
		{name: "InsertsTask", fn: testSyncInsertsTask},
		{name: "MarksRow", fn: testSyncMarksRow},
		{name: "ScheduleChangeResetsClaim", fn: testSyncScheduleChange},
		{name: "OtherChangeKeepsClaim", fn: testSyncOtherChange},
		{name: "StaleRowVersion", fn: testSyncStaleRowVersion},
		{name: "TaskOfAnotherRow", fn: testSyncTaskOfAnotherRow},
		{name: "InvalidRowDisablesTask", fn: testSyncInvalidRowDisablesTask},
		{name: "NewTaskIDRetiresOldTask", fn: testSyncNewTaskID},
		{name: "RecreatedRowRevivesTask", fn: testSyncRecreatedRow},
		{name: "DeletedTaskIDMovesToNewRow", fn: testSyncDeletedTaskIDMoves},
		{name: "MissingRow", fn: testSyncMissingRow},
	}
}

func testSyncInsertsTask(b *bundle) {
	want := newTask("t1", "r1")
	got := b.addTask(want)
	checkContent(b.t, got, want)
	if got.Version != 1 || got.IsDone != 0 {
		b.t.Errorf("new task: version=%d is_done=%d, want 1 0", got.Version, got.IsDone)
	}
	checkClaim(b.t, got, 0, "")
	for what, tm := range map[string]time.Time{"StartTime": got.StartTime, "EndTime": got.EndTime, "Anchor": got.Anchor} {
		utc(b.t, what, tm)
	}
	// A disabled task is stored disabled.
	off := newTask("t2", "r2")
	off.IsEnable = 0
	checkContent(b.t, b.addTask(off), off)
}

func testSyncMarksRow(b *bundle) {
	b.insertRow(scenario, "r1")
	r := b.getRow(scenario, "r1")
	err := b.s.ApplySync(b.ctx, store.ApplySyncParams{Scenario: scenario, RowID: "r1", RowVersion: r.Version,
		Task: newTask("t1", "r1"), IsActive: task.RowActive, Now: at(0)})
	b.noErr("ApplySync", err)
	got := b.getRow(scenario, "r1")
	if got.IsFetched != 1 || got.IsActive != task.RowActive || got.Error != "" {
		b.t.Errorf("row after sync: is_fetched=%d is_active=%d error=%q, want 1 1 \"\"", got.IsFetched, got.IsActive, got.Error)
	}
	// The sync leaves the row's version alone, so an edit based on it passes.
	if got.Version != r.Version {
		b.t.Errorf("row version after sync = %d, want %d", got.Version, r.Version)
	}
	// An inactive row without a task is only marked.
	b.insertRow(scenario, "r2")
	err = b.s.ApplySync(b.ctx, store.ApplySyncParams{Scenario: scenario, RowID: "r2", RowVersion: 1,
		IsActive: task.RowInactive, Now: at(0)})
	b.noErr("ApplySync inactive", err)
	if got := b.getRow(scenario, "r2"); got.IsFetched != 1 || got.IsActive != task.RowInactive {
		b.t.Errorf("inactive row: is_fetched=%d is_active=%d, want 1 0", got.IsFetched, got.IsActive)
	}
}

func testSyncScheduleChange(b *bundle) {
	first := b.addTask(newTask("t1", "r1"))
	b.claim("node-a", 10, at(time.Hour))
	b.noErr("SetTaskStatus done", b.s.SetTaskStatus(b.ctx, store.TaskStatusParams{TaskID: "t1", Done: true}))

	changed := newTask("t1", "r1")
	changed.CronPara = "every 5m"
	changed.TaskPara = "new text"
	changed.Anchor = at(2 * time.Hour)
	b.noErr("ApplySync", b.syncRow("r1", changed))

	got := b.getTask("t1")
	checkContent(b.t, got, changed)
	checkClaim(b.t, got, 0, "")
	if got.IsDone != 0 || got.Version != first.Version+1 {
		b.t.Errorf("after schedule change: is_done=%d version=%d, want 0 %d", got.IsDone, got.Version, first.Version+1)
	}
	// Every other schedule-relevant field counts as a change too.
	mods := map[string]func(*task.Task){
		"TZ":          func(t *task.Task) { t.TZ = "Europe/Paris" },
		"ExecuteType": func(t *task.Task) { t.ExecuteType = task.Once },
		"StartTime":   func(t *task.Task) { t.StartTime = at(time.Minute) },
		"EndTime":     func(t *task.Task) { t.EndTime = time.Time{} },
		"Misfire":     func(t *task.Task) { t.Misfire = task.MisfireSkip },
	}
	for name, mod := range mods {
		b.claim("node-a", 10, at(time.Hour))
		next := *changed
		mod(&next)
		next.Anchor = at(3 * time.Hour)
		b.noErr("ApplySync "+name, b.syncRow("r1", &next))
		got := b.getTask("t1")
		checkClaim(b.t, got, 0, "")
		if !got.Anchor.Equal(next.Anchor) {
			b.t.Errorf("%s change: anchor %v, want %v", name, got.Anchor, next.Anchor)
		}
		*changed = next
	}
}

func testSyncOtherChange(b *bundle) {
	first := b.addTask(newTask("t1", "r1"))
	b.claim("node-a", 10, at(time.Hour))

	changed := newTask("t1", "r1")
	changed.TaskPara = "new text"
	changed.Params = map[string]string{task.ParamTo: "b@example.com"}
	changed.Targets = []string{"sms"}
	changed.TTL = 5 * time.Second
	changed.MaxRetries = 1
	changed.Anchor = at(5 * time.Hour) // ignored: the schedule did not change
	b.noErr("ApplySync", b.syncRow("r1", changed))

	got := b.getTask("t1")
	want := *changed
	want.Anchor = first.Anchor
	checkContent(b.t, got, &want)
	checkClaim(b.t, got, 1, "node-a")
	if got.Version != first.Version+1 {
		b.t.Errorf("version = %d, want %d", got.Version, first.Version+1)
	}
	// Disabling is a non-schedule change too: the claim stays, so the owner
	// sees is_enable=0 and disarms.
	changed.IsEnable = 0
	b.noErr("ApplySync disable", b.syncRow("r1", changed))
	got = b.getTask("t1")
	if got.IsEnable != 0 {
		b.t.Errorf("is_enable = %d, want 0", got.IsEnable)
	}
}

func testSyncStaleRowVersion(b *bundle) {
	b.insertRow(scenario, "r1")
	_, err := b.s.UpdateRowFields(b.ctx, store.UpdateRowParams{Scenario: scenario, ID: "r1", Fields: map[string]any{"memo": "v2"}})
	b.noErr("UpdateRowFields", err)
	err = b.s.ApplySync(b.ctx, store.ApplySyncParams{Scenario: scenario, RowID: "r1", RowVersion: 1,
		Task: newTask("t1", "r1"), IsActive: task.RowActive, Now: at(0)})
	b.wantErr("ApplySync stale version", err, task.ErrConflict)
	_, err = b.s.GetTask(b.ctx, "t1")
	b.wantErr("GetTask after failed sync", err, task.ErrNotFound)
	if r := b.getRow(scenario, "r1"); r.IsFetched != 0 {
		b.t.Errorf("row is_fetched = %d after a failed sync, want 0", r.IsFetched)
	}
}

func testSyncTaskOfAnotherRow(b *bundle) {
	first := b.addTask(newTask("t1", "r1"))
	b.insertRow(scenario, "r2")
	thief := newTask("t1", "r2")
	thief.TaskPara = "stolen"
	b.wantErr("ApplySync task of another row", b.syncRow("r2", thief), store.ErrTaskIDTaken)
	got := b.getTask("t1")
	checkContent(b.t, got, first)
	if got.Version != first.Version {
		b.t.Errorf("version = %d, want %d", got.Version, first.Version)
	}
	if r := b.getRow(scenario, "r2"); r.IsFetched != 0 {
		b.t.Errorf("row r2 is_fetched = %d after a failed sync, want 0", r.IsFetched)
	}
}

func testSyncInvalidRowDisablesTask(b *bundle) {
	first := b.addTask(newTask("t1", "r1"))
	b.claim("node-a", 10, at(time.Hour))
	r, err := b.s.UpdateRowFields(b.ctx, store.UpdateRowParams{Scenario: scenario, ID: "r1", Fields: map[string]any{"cron": "bad"}})
	b.noErr("UpdateRowFields", err)
	err = b.s.ApplySync(b.ctx, store.ApplySyncParams{Scenario: scenario, RowID: "r1", RowVersion: r.Version,
		DisableTask: true, IsActive: task.RowError, Error: "cron_para: bad schedule", Now: at(0)})
	b.noErr("ApplySync invalid", err)

	got := b.getTask("t1")
	if got.IsEnable != 0 || got.Version != first.Version+1 {
		b.t.Errorf("task: is_enable=%d version=%d, want 0 %d", got.IsEnable, got.Version, first.Version+1)
	}
	if got.CronPara != first.CronPara {
		b.t.Errorf("cron_para = %q, want the old %q", got.CronPara, first.CronPara)
	}
	row := b.getRow(scenario, "r1")
	if row.IsFetched != 1 || row.IsActive != task.RowError || row.Error != "cron_para: bad schedule" {
		b.t.Errorf("row: is_fetched=%d is_active=%d error=%q", row.IsFetched, row.IsActive, row.Error)
	}
	claimed, err := b.s.ListClaimed(b.ctx, "node-a")
	b.noErr("ListClaimed", err)
	if len(claimed) != 1 || claimed[0].IsEnable != 0 || claimed[0].Version != got.Version {
		b.t.Errorf("ListClaimed = %+v, want t1 with is_enable 0, version %d", claimed, got.Version)
	}
}

func testSyncNewTaskID(b *bundle) {
	old := b.addTask(newTask("t1", "r1"))
	b.noErr("ApplySync t2", b.syncRow("r1", newTask("t2", "r1")))
	if got := b.getTask("t2"); got.RowID != "r1" || got.IsEnable != 1 {
		b.t.Errorf("t2: row_id=%q is_enable=%d", got.RowID, got.IsEnable)
	}
	got := b.getTask("t1")
	if got.IsEnable != 0 || got.Version <= old.Version {
		b.t.Errorf("old task t1: is_enable=%d version=%d, want 0 and > %d", got.IsEnable, got.Version, old.Version)
	}
	n, err := b.s.PurgeDeleted(b.ctx)
	b.noErr("PurgeDeleted", err)
	if n != 1 {
		b.t.Errorf("PurgeDeleted = %d, want 1 (the retired t1)", n)
	}
	b.getTask("t2")
}

// testSyncRecreatedRow deletes a row and creates it again before the purge:
// syncing the same task_id must bring the task back to life, or the purge
// would remove a live task.
func testSyncRecreatedRow(b *bundle) {
	first := b.addTask(newTask("t1", "r1"))
	b.noErr("DeleteRow", b.s.DeleteRow(b.ctx, scenario, "r1"))
	again := newTask("t1", "r1")
	again.Anchor = at(7 * time.Hour)
	b.addTask(again)
	got := b.getTask("t1")
	checkContent(b.t, got, again)
	if got.Version <= first.Version {
		b.t.Errorf("version = %d, want > %d", got.Version, first.Version)
	}
	n, err := b.s.PurgeDeleted(b.ctx)
	b.noErr("PurgeDeleted", err)
	if n != 0 {
		b.t.Errorf("PurgeDeleted removed %d tasks, want 0: t1 is live again", n)
	}
	if c := b.claim("node-a", 10, at(time.Hour)); len(c) != 1 {
		b.t.Errorf("claimed %d tasks, want the revived t1", len(c))
	}
}

// A deleted row's task id, not yet purged, may be taken by another row: the
// task moves to that row with the new schedule and no claim.
func testSyncDeletedTaskIDMoves(b *bundle) {
	first := b.addTask(newTask("t1", "r1"))
	b.claim("node-a", 10, at(time.Hour))
	b.noErr("DeleteRow", b.s.DeleteRow(b.ctx, scenario, "r1"))
	b.insertRow(scenario, "r2")
	moved := newTask("t1", "r2")
	moved.Anchor = at(9 * time.Hour)
	b.noErr("ApplySync to the new row", b.syncRow("r2", moved))
	got := b.getTask("t1")
	checkContent(b.t, got, moved)
	checkClaim(b.t, got, 0, "")
	if got.RowID != "r2" || got.IsEnable != 1 || got.Version <= first.Version {
		b.t.Errorf("moved task: row=%q is_enable=%d version=%d, want r2 1 >%d", got.RowID, got.IsEnable, got.Version, first.Version)
	}
	if n, err := b.s.PurgeDeleted(b.ctx); err != nil || n != 0 {
		b.t.Errorf("PurgeDeleted = %d, %v; want 0: t1 is live on r2", n, err)
	}
}

func testSyncMissingRow(b *bundle) {
	err := b.s.ApplySync(b.ctx, store.ApplySyncParams{Scenario: scenario, RowID: "nope", RowVersion: 1,
		Task: newTask("t1", "nope"), IsActive: task.RowActive, Now: at(0)})
	b.wantErr("ApplySync missing row", err, task.ErrNotFound)
}
