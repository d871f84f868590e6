package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// RunControl is the conformance suite of store.Control: targets, task
// states (and that ApplySync keeps them), accepted runs and their feedback,
// deadlines, run queries and cleanup. Like Run, newStore must return a new,
// empty store for each call; RunControl closes it, and its leaf subtests
// run in parallel. SkipConcurrency skips only its concurrency cases.
func RunControl(t *testing.T, newStore func(t *testing.T) store.Product, opts ...Option) {
	t.Helper()
	cfg := configOf(opts)
	runGroups(t, newStore, []group{
		{"Targets", targetCases()},
		{"TaskState", taskStateCases()},
		{"Feedback", feedbackCases()},
		{"ExpireAccepted", expireCases()},
		{"QueryRuns", queryRunsCases()},
		{"CleanupRuns", cleanupCases()},
		{"RunStats", statsCases()},
		{"Concurrency", controlRaceCases(cfg)},
	})
}

func targetCases() []testCase {
	return []testCase{
		{name: "CreateAndGet", fn: testCreateTarget},
		{name: "UpdateChecksVersion", fn: testUpdateTarget},
		{name: "Delete", fn: testDeleteTarget},
		{name: "ListPages", fn: testListTargets},
		{name: "TasksUsing", fn: testTasksUsingTarget},
		{name: "Labels", fn: testTargetLabels},
	}
}

func taskStateCases() []testCase {
	return []testCase{
		{name: "ChangeReleasesClaim", fn: testSetTaskStateReleases},
		{name: "BackToRunningSetsAnchor", fn: testSetTaskStateRunning},
		{name: "SameStateChangesNothing", fn: testSetTaskStateSame},
		{name: "MissingAndInvalid", fn: testSetTaskStateErrors},
		{name: "ApplySyncKeepsState", fn: testSyncKeepsState},
	}
}

// sampleTargets returns one target of each kind with its fields set.
func sampleTargets() []*task.Target {
	return []*task.Target{
		{ID: "hook", Name: "Order hook", Kind: task.ChannelHTTP, State: task.TargetRunning, FeedbackTimeout: 60,
			HTTP: &task.HTTPTarget{Method: "POST", URL: "https://example.com/hook/{{task_id}}",
				Headers: map[string]string{"X-Token": "{{token}}", "X-B": "2"}, Body: `{"id":"{{trigger_id}}"}`, Timeout: 15}},
		{ID: "ls", Kind: task.ChannelExec, State: task.TargetPaused, Exec: &task.ExecTarget{Command: "report"}},
		{ID: "bus", Kind: task.ChannelKafka, State: task.TargetPreset,
			Kafka: &task.KafkaTarget{Topic: "orders.v1", Key: "{{task_id}}", Value: "{{slot}}"}},
		{ID: "gc", Kind: task.ChannelBuiltin, State: task.TargetRunning,
			Builtin: &task.BuiltinTarget{Action: task.BuiltinCleanupRuns, KeepAge: 86400, KeepCount: 10}},
		{ID: "pause", Kind: task.ChannelBuiltin, State: task.TargetRunning,
			Builtin: &task.BuiltinTarget{Action: task.BuiltinPauseTask, Tasks: []string{"t1", "t2"}}},
		{ID: "mail", Kind: task.ChannelEmail, State: task.TargetRunning},
	}
}

func (b *bundle) createTarget(t *task.Target) {
	b.t.Helper()
	b.noErr("CreateTarget "+t.ID, b.s.CreateTarget(b.ctx, t))
}

func (b *bundle) getTarget(id string) *task.Target {
	b.t.Helper()
	got, err := b.s.GetTarget(b.ctx, id)
	b.noErr("GetTarget "+id, err)
	return got
}

// sameTarget fails unless got and want encode alike (every field,
// bookkeeping included).
func (b *bundle) sameTarget(what string, got, want *task.Target) {
	b.t.Helper()
	if !sameJSON(got, want) {
		b.t.Errorf("%s: target\n got: %s\nwant: %s", what, mustJSON(got), mustJSON(want))
	}
}

func testCreateTarget(b *bundle) {
	targets := sampleTargets()
	for _, tg := range targets {
		b.createTarget(tg)
		if tg.Version != 1 || tg.CreatedAt.IsZero() || !tg.UpdatedAt.Equal(tg.CreatedAt) {
			b.t.Errorf("CreateTarget(%s) set version %d, created %v, updated %v; want 1 and two equal times",
				tg.ID, tg.Version, tg.CreatedAt, tg.UpdatedAt)
		}
		got := b.getTarget(tg.ID)
		b.sameTarget("GetTarget "+tg.ID, got, tg)
		utc(b.t, "CreatedAt", got.CreatedAt)
	}
	dup := &task.Target{ID: "hook", Kind: task.ChannelEmail, State: task.TargetPreset}
	b.wantErr("CreateTarget of a taken id", b.s.CreateTarget(b.ctx, dup), task.ErrConflict)
	b.sameTarget("after a refused create", b.getTarget("hook"), targets[0])
	_, err := b.s.GetTarget(b.ctx, "nope")
	b.wantErr("GetTarget missing", err, task.ErrNotFound)
}

func testUpdateTarget(b *bundle) {
	hook := sampleTargets()[0]
	b.createTarget(hook)
	// Version and CreatedAt given by the caller are not taken.
	upd := &task.Target{ID: "hook", Name: "now a command", Kind: task.ChannelExec, State: task.TargetPaused,
		Exec: &task.ExecTarget{Command: "report"}, Version: 42, CreatedAt: at(-time.Hour)}

	_, err := b.s.UpdateTarget(b.ctx, upd, 7)
	b.wantErr("UpdateTarget at another version", err, task.ErrConflict)
	b.sameTarget("after a refused update", b.getTarget("hook"), hook)

	got, err := b.s.UpdateTarget(b.ctx, upd, 1)
	b.noErr("UpdateTarget at version 1", err)
	want := *upd
	want.Version, want.CreatedAt, want.UpdatedAt = 2, hook.CreatedAt, got.UpdatedAt
	b.sameTarget("UpdateTarget result", got, &want)
	if got.UpdatedAt.Before(hook.CreatedAt) {
		b.t.Errorf("UpdatedAt %v before CreatedAt %v", got.UpdatedAt, hook.CreatedAt)
	}
	b.sameTarget("GetTarget after update", b.getTarget("hook"), got)

	_, err = b.s.UpdateTarget(b.ctx, upd, 1)
	b.wantErr("UpdateTarget at a stale version", err, task.ErrConflict)
	got, err = b.s.UpdateTarget(b.ctx, upd, 0)
	b.noErr("UpdateTarget without a version", err)
	if got.Version != 3 {
		b.t.Errorf("version after an unchecked update = %d, want 3", got.Version)
	}
	for _, v := range []int64{0, 1} {
		_, err = b.s.UpdateTarget(b.ctx, &task.Target{ID: "nope", Kind: task.ChannelEmail, State: task.TargetRunning}, v)
		b.wantErr(fmt.Sprintf("UpdateTarget of a missing target at version %d", v), err, task.ErrNotFound)
	}
}

func testDeleteTarget(b *bundle) {
	b.createTarget(sampleTargets()[0])
	bound := newTask("t1", "r1")
	bound.Targets = []string{"hook"}
	b.addTask(bound)
	b.noErr("DeleteTarget", b.s.DeleteTarget(b.ctx, "hook"))
	_, err := b.s.GetTarget(b.ctx, "hook")
	b.wantErr("GetTarget after delete", err, task.ErrNotFound)
	b.wantErr("DeleteTarget again", b.s.DeleteTarget(b.ctx, "hook"), task.ErrNotFound)
	if got := b.getTask("t1"); !slices.Equal(got.Targets, []string{"hook"}) {
		b.t.Errorf("task targets after the target's delete = %v, want [hook] kept", got.Targets)
	}
}

func testListTargets(b *bundle) {
	ids := []string{"t-05", "t-01", "t-09", "a", "t-03", "z", "t-07"}
	for _, id := range ids {
		b.createTarget(&task.Target{ID: id, Kind: task.ChannelEmail, State: task.TargetRunning})
	}
	var got []string
	after := ""
	for range len(ids) + 1 {
		page, err := b.s.ListTargets(b.ctx, after, 3)
		b.noErr("ListTargets", err)
		if len(page) > 3 {
			b.t.Fatalf("page of %d targets, limit 3", len(page))
		}
		if len(page) == 0 {
			break
		}
		for _, tg := range page {
			got = append(got, tg.ID)
			if tg.Version != 1 || tg.Kind != task.ChannelEmail {
				b.t.Errorf("listed target %+v, want version 1 and kind email", tg)
			}
		}
		after = page[len(page)-1].ID
	}
	want := slices.Sorted(slices.Values(ids))
	if !slices.Equal(got, want) {
		b.t.Errorf("ListTargets pages = %v, want %v", got, want)
	}
	page, err := b.s.ListTargets(b.ctx, "t-05", 10)
	b.noErr("ListTargets after t-05", err)
	if len(page) != 3 || page[0].ID != "t-07" || page[2].ID != "z" {
		b.t.Errorf("ListTargets after t-05 = %d targets from %v, want t-07 t-09 z", len(page), page)
	}
	_, err = b.s.ListTargets(b.ctx, "", 0)
	b.wantErr("ListTargets with limit 0", err, task.ErrInvalid)
}

// setState calls SetTaskState and fails the test on an error.
func (b *bundle) setState(id string, st task.State, anchor, now time.Time) *task.Task {
	b.t.Helper()
	got, err := b.s.SetTaskState(b.ctx, store.TaskStateParams{TaskID: id, State: st, Anchor: anchor, Now: now})
	b.noErr(fmt.Sprintf("SetTaskState(%s, %s)", id, st), err)
	return got
}

// checkStored fails unless the stored task matches got, the task a call
// returned: content, claim and version.
func (b *bundle) checkStored(what string, got *task.Task) {
	b.t.Helper()
	stored := b.getTask(got.TaskID)
	checkContent(b.t, stored, got)
	checkClaim(b.t, stored, got.IsClaimed, got.ClaimedBy)
	if stored.Version != got.Version {
		b.t.Errorf("%s: stored version %d, returned %d", what, stored.Version, got.Version)
	}
}

func testSetTaskStateReleases(b *bundle) {
	tk := b.addTask(newTask("t1", "r1"))
	b.claim("node-a", 10, at(time.Hour))

	// Not back to running: the anchor given is not taken.
	got := b.setState("t1", task.StateStopped, at(5*time.Hour), at(2*time.Hour))
	want := *tk
	want.State = task.StateStopped
	checkContent(b.t, got, &want)
	checkClaim(b.t, got, 0, "")
	if got.Version != tk.Version+1 || !got.LeaseUntil.IsZero() {
		b.t.Errorf("stopped: version %d lease %v, want %d and no lease", got.Version, got.LeaseUntil, tk.Version+1)
	}
	b.checkStored("stopped", got)
	claimed, err := b.s.ListClaimed(b.ctx, "node-a")
	b.noErr("ListClaimed", err)
	if len(claimed) != 0 {
		b.t.Errorf("node-a still holds %+v after the state changed", claimed)
	}
	// The publish patrol re-arms it at once, under its new state.
	again := b.claim("node-b", 10, at(time.Hour))
	if len(again) != 1 || again[0].State != task.StateStopped {
		b.t.Fatalf("claim after the change = %+v, want t1, stopped", again)
	}

	closed := b.setState("t1", task.StateClosed, time.Time{}, at(3*time.Hour))
	want.State = task.StateClosed
	checkContent(b.t, closed, &want)
	checkClaim(b.t, closed, 0, "")
	if closed.Version != got.Version+1 {
		b.t.Errorf("closed: version %d, want %d", closed.Version, got.Version+1)
	}
	b.checkStored("closed", closed)
}

func testSetTaskStateRunning(b *bundle) {
	tk := b.addTask(newTask("t1", "r1"))
	stopped := b.setState("t1", task.StateStopped, time.Time{}, at(time.Hour))
	b.claim("node-a", 10, at(time.Hour))
	back := b.setState("t1", task.StateRunning, at(3*time.Hour), at(3*time.Hour))
	want := *tk
	want.Anchor = at(3 * time.Hour)
	checkContent(b.t, back, &want)
	checkClaim(b.t, back, 0, "")
	if back.Version != stopped.Version+1 {
		b.t.Errorf("running again: version %d, want %d", back.Version, stopped.Version+1)
	}
	b.checkStored("running again", back)
}

func testSetTaskStateSame(b *bundle) {
	tk := b.addTask(newTask("t1", "r1"))
	b.claim("node-a", 10, at(time.Hour))
	got := b.setState("t1", task.StateRunning, at(9*time.Hour), at(9*time.Hour))
	checkContent(b.t, got, tk) // the anchor too
	checkClaim(b.t, got, 1, "node-a")
	if got.Version != tk.Version {
		b.t.Errorf("same state: version %d, want %d", got.Version, tk.Version)
	}
	b.checkStored("same state", got)

	stopped := b.setState("t1", task.StateStopped, time.Time{}, at(time.Hour))
	b.claim("node-a", 10, at(time.Hour))
	again := b.setState("t1", task.StateStopped, time.Time{}, at(2*time.Hour))
	if again.Version != stopped.Version || again.IsClaimed != 1 {
		b.t.Errorf("stopped twice: version %d is_claimed %d, want %d and the claim kept",
			again.Version, again.IsClaimed, stopped.Version)
	}
}

func testSetTaskStateErrors(b *bundle) {
	_, err := b.s.SetTaskState(b.ctx, store.TaskStateParams{TaskID: "nope", State: task.StateClosed, Now: at(0)})
	b.wantErr("SetTaskState of a missing task", err, task.ErrNotFound)
	tk := b.addTask(newTask("t1", "r1"))
	for _, st := range []task.State{"paused", ""} {
		_, err := b.s.SetTaskState(b.ctx, store.TaskStateParams{TaskID: "t1", State: st, Now: at(0)})
		b.wantErr(fmt.Sprintf("SetTaskState(%q)", st), err, task.ErrInvalid)
	}
	got := b.getTask("t1")
	if got.State != task.StateRunning || got.Version != tk.Version {
		b.t.Errorf("after refused states: state %s version %d, want running %d", got.State, got.Version, tk.Version)
	}
}

// testSyncKeepsState: the state belongs to SetTaskState; a row's sync, which
// always maps running, keeps it. A new task takes the state it is given.
func testSyncKeepsState(b *bundle) {
	b.addTask(newTask("t1", "r1"))
	stopped := b.setState("t1", task.StateStopped, time.Time{}, at(time.Hour))

	edit := newTask("t1", "r1")
	edit.TaskPara = "new text"
	b.noErr("ApplySync content edit", b.syncRow("r1", edit))
	got := b.getTask("t1")
	if got.State != task.StateStopped || got.TaskPara != "new text" || got.Version != stopped.Version+1 {
		b.t.Errorf("after a content edit: state %s text %q version %d, want stopped, the new text, %d",
			got.State, got.TaskPara, got.Version, stopped.Version+1)
	}
	edit.CronPara = "every 5m"
	edit.Anchor = at(4 * time.Hour)
	b.noErr("ApplySync schedule edit", b.syncRow("r1", edit))
	got = b.getTask("t1")
	if got.State != task.StateStopped || got.CronPara != "every 5m" || !got.Anchor.Equal(edit.Anchor) {
		b.t.Errorf("after a schedule edit: state %s cron %q anchor %v, want stopped, every 5m, %v",
			got.State, got.CronPara, got.Anchor, edit.Anchor)
	}

	for i, st := range []task.State{task.StateStopped, task.StateClosed} {
		tk := newTask(fmt.Sprintf("n%d", i), fmt.Sprintf("rn%d", i))
		tk.State = st
		if got := b.addTask(tk); got.State != st {
			b.t.Errorf("new task given %s: stored %s", st, got.State)
		}
	}
}

// mustJSON is v as JSON, for messages.
func mustJSON(v any) string {
	j, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%+v", v)
	}
	return string(j)
}

// wantConflictSaying fails unless err is task.ErrConflict with a message
// that names word.
func (b *bundle) wantConflictSaying(what string, err error, word string) {
	b.t.Helper()
	if !errors.Is(err, task.ErrConflict) {
		b.t.Errorf("%s: error %v, want %v", what, err, task.ErrConflict)
		return
	}
	if !strings.Contains(err.Error(), word) {
		b.t.Errorf("%s: error %q does not say %q", what, err, word)
	}
}
