package storetest

import (
	"time"

	"cronsheet/task"
)

// testRetireTasks: RetireTasks marks a deleted flow's step tasks deleted
// and disabled (version+1; a row's task in the list and a missing id are
// skipped, a second call marks nothing); a retired task is no longer
// claimable, PurgeDeleted removes it once unclaimed, and EnsureTask then
// creates the id afresh.
func testRetireTasks(b *bundle) {
	fs := b.flows()
	step := func(id, para string) *task.Task {
		return &task.Task{TaskID: id, Scenario: "flows", TaskType: task.ChannelHTTP, TaskPara: para,
			ExecuteType: task.Once, TTL: 30 * time.Second, MaxRetries: 1, Misfire: task.MisfireOnce,
			Targets: []string{"hook"}, State: task.StateStopped, IsEnable: 1}
	}
	for _, id := range []string{"flow.f.v1.a", "flow.f.v1.b"} {
		b.noErr("EnsureTask", fs.EnsureTask(b.ctx, step(id, "old")))
	}
	row := b.addTask(newTask("rowtask", "r1"))
	held := b.claim("n1", 10, at(time.Hour)) // every one of them, held by n1
	if len(held) != 3 {
		b.t.Fatalf("claimed %d tasks, want 3", len(held))
	}
	before := b.getTask("flow.f.v1.a")
	n, err := fs.RetireTasks(b.ctx, []string{"flow.f.v1.a", "flow.f.v1.b", "rowtask", "nope"})
	if err != nil || n != 2 {
		b.t.Fatalf("RetireTasks = %d, %v; want the 2 step tasks", n, err)
	}
	if got := b.getTask("flow.f.v1.a"); got.IsEnable != 0 || got.Version != before.Version+1 {
		b.t.Errorf("retired task: enabled %d version %d; want disabled, version %d", got.IsEnable, got.Version, before.Version+1)
	}
	if got := b.getTask("rowtask"); got.IsEnable != 1 || got.Version != row.Version {
		b.t.Errorf("row task after RetireTasks: enabled %d version %d; want it untouched", got.IsEnable, got.Version)
	}
	if n, err := fs.RetireTasks(b.ctx, []string{"flow.f.v1.a"}); err != nil || n != 0 {
		b.t.Errorf("RetireTasks again = %d, %v; want 0", n, err)
	}
	if n, err := b.s.PurgeDeleted(b.ctx); err != nil || n != 0 {
		b.t.Errorf("PurgeDeleted while n1 holds them = %d, %v; want 0", n, err)
	}
	if _, err := b.s.ReleaseClaims(b.ctx, "n1"); err != nil {
		b.t.Fatal(err)
	}
	if got := b.claim("n2", 10, at(time.Hour)); len(got) != 1 || got[0].TaskID != "rowtask" {
		b.t.Errorf("claimable after the release: %d tasks; want the row's task only", len(got))
	}
	if n, err := b.s.PurgeDeleted(b.ctx); err != nil || n != 2 {
		b.t.Errorf("PurgeDeleted = %d, %v; want the 2 retired step tasks", n, err)
	}
	b.noErr("EnsureTask after the purge", fs.EnsureTask(b.ctx, step("flow.f.v1.a", "new")))
	if got := b.getTask("flow.f.v1.a"); got.TaskPara != "new" || got.IsEnable != 1 {
		b.t.Errorf("step task made again: %q enabled %d; want the new one, enabled", got.TaskPara, got.IsEnable)
	}
}
