package storetest

import (
	"errors"
	"fmt"
	"slices"

	"cronsheet/task"
)

// testTasksUsingTarget: TasksUsingTarget finds the tasks naming a target
// among their targets or alert targets, in id order up to the limit with
// the full count, and leaves out deleted tasks and tasks naming others.
func testTasksUsingTarget(b *bundle) {
	for i := range 5 {
		tk := newTask(fmt.Sprintf("use-%d", i), fmt.Sprintf("r-use-%d", i))
		tk.Targets = []string{"other", "hook"}
		b.addTask(tk)
	}
	alert := newTask("alerts", "r-alerts")
	alert.Alert = &task.Alert{Targets: []string{"hook"}}
	b.addTask(alert)
	elsewhere := newTask("elsewhere", "r-elsewhere")
	elsewhere.Targets = []string{"hooks", "hook2"}
	b.addTask(elsewhere)
	gone := newTask("gone", "r-gone")
	gone.Targets = []string{"hook"}
	b.addTask(gone)
	b.noErr("DeleteRow", b.s.DeleteRow(b.ctx, scenario, "r-gone"))

	ids, total, err := b.s.TasksUsingTarget(b.ctx, "hook", 3)
	b.noErr("TasksUsingTarget", err)
	if want := []string{"alerts", "use-0", "use-1"}; total != 6 || !slices.Equal(ids, want) {
		b.t.Errorf("TasksUsingTarget(hook, 3) = %v, %d; want %v, 6", ids, total, want)
	}
	ids, total, err = b.s.TasksUsingTarget(b.ctx, "other", 10)
	b.noErr("TasksUsingTarget", err)
	if total != 5 || len(ids) != 5 {
		b.t.Errorf("TasksUsingTarget(other) = %v, %d; want the 5 use-* tasks", ids, total)
	}
	ids, total, err = b.s.TasksUsingTarget(b.ctx, "unused", 10)
	b.noErr("TasksUsingTarget", err)
	if total != 0 || len(ids) != 0 {
		b.t.Errorf("TasksUsingTarget(unused) = %v, %d; want none", ids, total)
	}
	if _, _, err := b.s.TasksUsingTarget(b.ctx, "hook", 0); !errors.Is(err, task.ErrInvalid) {
		b.t.Errorf("TasksUsingTarget limit 0 = %v, want task.ErrInvalid", err)
	}
}
