package httpapi

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"

	"cronsheet/task"
)

// taskList is a TaskGetter over fixed tasks that records each batch read.
type taskList struct {
	tasks []*task.Task
	reads [][]string
	err   error
}

func (l *taskList) GetTasks(_ context.Context, ids []string) ([]*task.Task, error) {
	l.reads = append(l.reads, slices.Clone(ids))
	var out []*task.Task
	for _, t := range l.tasks {
		if slices.Contains(ids, t.TaskID) {
			out = append(out, t)
		}
	}
	return out, l.err
}

func TestTaskTitles(t *testing.T) {
	l := &taskList{tasks: []*task.Task{
		{TaskID: "a", Params: map[string]string{task.ParamTitle: "water the plants"}},
		{TaskID: "b"},
		{TaskID: "j", Job: &task.Job{Name: "nightly export"}},
	}}
	got, err := TaskTitles(t.Context(), l, []string{"a", "b", "a", "gone", "j", "a"})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"a": "water the plants", "j": "nightly export"}; !maps.Equal(got, want) {
		t.Errorf("titles = %v, want %v", got, want)
	}
	if len(l.reads) != 1 || !slices.Equal(l.reads[0], []string{"a", "b", "gone", "j"}) {
		t.Errorf("reads = %v, want one batch of the distinct ids in order", l.reads)
	}

	l.reads = nil
	if got, err := TaskTitles(t.Context(), l, nil); err != nil || len(got) != 0 || len(l.reads) != 0 {
		t.Errorf("no ids: titles %v, err %v, reads %v; want none and no read", got, err, l.reads)
	}

	l.err = errors.New("store down")
	if _, err := TaskTitles(t.Context(), l, []string{"a"}); !errors.Is(err, l.err) {
		t.Errorf("err = %v, want the store's error wrapped", err)
	}
}
