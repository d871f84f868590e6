package storetest

import (
	"slices"

	"cronsheet/task"
)

// testTaskIDsByTitle: a task is found when its title param holds every
// word, ASCII letters without case and Chinese alike; a deleted task, a
// task without the words and no words at all are not.
func testTaskIDsByTitle(b *bundle) {
	for id, title := range map[string]string{"ti1": "Water the Plants", "ti2": "water tanks", "ti3": "值班提醒 早班", "ti4": "plants"} {
		tk := newTask(id, "r-"+id)
		tk.Params = map[string]string{task.ParamTo: "a@example.com", task.ParamTitle: title}
		b.addTask(tk)
	}
	b.noErr("DeleteRow", b.s.DeleteRow(b.ctx, scenario, "r-ti4"))
	for _, c := range []struct {
		words []string
		want  []string
	}{
		{[]string{"water"}, []string{"ti1", "ti2"}},
		{[]string{"PLANTS", "wat"}, []string{"ti1"}},
		{[]string{"值班"}, []string{"ti3"}},
		{[]string{"plants"}, []string{"ti1"}},
		{[]string{"water", "nothing"}, nil},
	} {
		got, err := b.s.TaskIDsByTitle(b.ctx, c.words, 10)
		b.noErr("TaskIDsByTitle", err)
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			b.t.Errorf("TaskIDsByTitle(%q) = %v, want %v", c.words, got, c.want)
		}
	}
	if got, err := b.s.TaskIDsByTitle(b.ctx, []string{"water"}, 1); err != nil || len(got) != 1 {
		b.t.Errorf("TaskIDsByTitle(water, limit 1) = %v, %v; want one id", got, err)
	}
	_, err := b.s.TaskIDsByTitle(b.ctx, nil, 10)
	b.wantErr("TaskIDsByTitle without words", err, task.ErrInvalid)
}
