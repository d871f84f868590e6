package tasksapi_test

import (
	"net/http"
	"testing"
	"time"

	"cronsheet/internal/apitest"
	"cronsheet/internal/apitest/fullapi"
	"cronsheet/store"
	"cronsheet/task"
)

// TestDisabledTaskShowsNoNextFire: a task whose row is switched off shows
// no next fire, though the stored one has not been cleared yet; an
// enabled task shows its own.
func TestDisabledTaskShowsNoNextFire(t *testing.T) {
	t.Parallel()
	b := fullapi.Setup(t)
	b.AddTask(t, "on", 1)
	b.AddTask(t, "off", 0)
	next := apitest.FixedNow.Add(time.Hour)
	for _, id := range []string{"on", "off"} {
		if err := b.Store.SetTaskStatus(t.Context(), store.TaskStatusParams{TaskID: id, NextFire: next, SetNextFire: true}); err != nil {
			t.Fatal(err)
		}
	}
	on := apitest.Want[task.Task](t, b.Do(t, http.MethodGet, "/api/v1/tasks/on", ""), http.StatusOK)
	if !on.NextFire.Equal(next) {
		t.Errorf("enabled task: next_fire %s, want %s", on.NextFire, next)
	}
	off := apitest.Want[task.Task](t, b.Do(t, http.MethodGet, "/api/v1/tasks/off", ""), http.StatusOK)
	if !off.NextFire.IsZero() {
		t.Errorf("disabled task: next_fire %s, want none", off.NextFire)
	}
}
