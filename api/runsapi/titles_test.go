package runsapi_test

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"
	"time"

	"cronsheet/internal/apitest"
	"cronsheet/internal/apitest/fullapi"
	"cronsheet/task"
)

// titledRun is a run as the runs API answers it, with its task's title.
type titledRun struct {
	TriggerID string `json:"trigger_id"`
	TaskID    string `json:"task_id"`
	TaskTitle string `json:"task_title"`
}

// TestRunsByTitle: every run names its task's title, in a page and alone;
// the title filter keeps the runs of the tasks whose titles hold all its
// words, newest first across tasks and paged; bad use is a 400 naming
// title.
func TestRunsByTitle(t *testing.T) {
	t.Parallel()
	b := fullapi.SetupControl(t)
	b.AddTitledTask(t, "m1", "Water the plants", 1)
	b.AddTitledTask(t, "m2", "water tanks", 1)
	b.AddTitledTask(t, "m3", "值班提醒", 1)
	for i, id := range []string{"m1", "m2", "m3", "m1", "m2", "gone"} {
		at := apitest.FixedNow.Add(time.Duration(i) * time.Second)
		r := &task.Run{TriggerID: fmt.Sprintf("t%d", i), TaskID: id, Target: "x", Slot: at, FiredAt: at,
			TriggerType: task.TriggerSchedule, State: task.RunDone, Attempt: 1}
		if _, err := b.Store.InsertRun(t.Context(), r); err != nil {
			t.Fatalf("InsertRun: %v", err)
		}
	}
	type page struct {
		Runs []titledRun `json:"runs"`
		Next string      `json:"next"`
	}
	list := func(query string) page {
		t.Helper()
		return apitest.Want[page](t, b.Do(t, http.MethodGet, "/api/v1/runs?"+query, ""), http.StatusOK)
	}
	all := list("")
	titles := map[string]string{}
	for _, r := range all.Runs {
		titles[r.TriggerID] = r.TaskTitle
	}
	want := map[string]string{"t0": "Water the plants", "t1": "water tanks", "t2": "值班提醒", "t3": "Water the plants", "t4": "water tanks", "t5": ""}
	if fmt.Sprint(titles) != fmt.Sprint(want) {
		t.Errorf("titles = %v, want %v", titles, want)
	}
	one := apitest.Want[titledRun](t, b.Do(t, http.MethodGet, "/api/v1/runs/t2", ""), http.StatusOK)
	if one.TaskTitle != "值班提醒" {
		t.Errorf("run t2 names %q, want 值班提醒", one.TaskTitle)
	}

	ids := func(p page) string {
		s := ""
		for _, r := range p.Runs {
			s += r.TriggerID + ","
		}
		return s
	}
	for _, c := range []struct{ title, want string }{
		{"water", "t4,t3,t1,t0,"},
		{"PLANTS water", "t3,t0,"},
		{"值班", "t2,"},
		{"nothing", ""},
	} {
		if got := list("title=" + url.QueryEscape(c.title)); ids(got) != c.want || got.Next != "" {
			t.Errorf("title=%s = %s next %q, want %s", c.title, ids(got), got.Next, c.want)
		}
	}
	first := list("title=water&limit=3")
	second := list("title=water&limit=3&cursor=" + url.QueryEscape(first.Next))
	if ids(first) != "t4,t3,t1," || first.Next == "" || ids(second) != "t0," || second.Next != "" {
		t.Errorf("pages of title=water = %s (next %q) then %s (next %q)", ids(first), first.Next, ids(second), second.Next)
	}
	if got := list("task_id=m2"); ids(got) != "t4,t1," {
		t.Errorf("task_id=m2 = %s, want t4,t1,", ids(got))
	}
	apitest.WantError(t, b.Do(t, http.MethodGet, "/api/v1/runs?title=water&task_id=m1", ""), http.StatusBadRequest, "title", "not both")
}
