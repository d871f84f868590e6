package tasksapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"cronsheet/internal/apitest"
	"cronsheet/internal/apitest/fullapi"
	"cronsheet/mapping"
	"cronsheet/store"
	"cronsheet/task"
)

// triggerAnswer is the answer of POST .../trigger.
type triggerAnswer struct {
	Error string     `json:"error"`
	Runs  []task.Run `json:"runs"`
}

func TestTriggerEndpoint(t *testing.T) {
	t.Parallel()
	b := fullapi.SetupControl(t)
	b.AddTask(t, "t1", 1)
	b.AddTask(t, "t2", 1)
	b.AddTask(t, "off", 0)
	b.AddTask(t, "shut", 1)
	if _, err := b.Store.SetTaskState(t.Context(), store.TaskStateParams{TaskID: "shut", State: task.StateClosed, Now: apitest.FixedNow}); err != nil {
		t.Fatalf("SetTaskState: %v", err)
	}

	got := apitest.Want[triggerAnswer](t, b.Do(t, http.MethodPost, "/api/v1/tasks/t1/trigger", ""), http.StatusAccepted)
	if len(got.Runs) != 1 {
		t.Fatalf("runs = %+v, want one", got.Runs)
	}
	run := got.Runs[0]
	if run.TaskID != "t1" || run.TriggerType != task.TriggerManual || !run.Slot.Equal(apitest.FixedNow) || run.TriggerID == "" {
		t.Errorf("run = %+v, want a manual run of t1 at %s", run, apitest.FixedNow)
	}

	t.Run("WithParams", func(t *testing.T) {
		got := apitest.Want[triggerAnswer](t, b.Do(t, http.MethodPost, "/api/v1/tasks/t2/trigger",
			`{"params":{"who":"api","n":"2"}}`), http.StatusAccepted)
		if len(got.Runs) != 1 || got.Runs[0].Params["who"] != "api" || got.Runs[0].Params["n"] != "2" {
			t.Fatalf("runs = %+v, want one with the params", got.Runs)
		}
		stored, err := b.Store.GetRun(t.Context(), got.Runs[0].TriggerID)
		if err != nil || stored.Params["who"] != "api" {
			t.Errorf("stored run = %+v, %v; want its params kept", stored, err)
		}
	})

	t.Run("AllRejected", func(t *testing.T) {
		got := apitest.Want[triggerAnswer](t, b.Do(t, http.MethodPost, "/api/v1/tasks/shut/trigger", ""), http.StatusConflict)
		if !strings.Contains(got.Error, "closed") || len(got.Runs) != 1 || got.Runs[0].State != task.RunRejected {
			t.Errorf("answer = %+v, want the closed task's rejected run and its reason", got)
		}
	})

	t.Run("Errors", func(t *testing.T) {
		tests := []struct {
			name, path, body string
			status           int
			field, msg       string
		}{
			{"AlreadyFired", "/api/v1/tasks/t1/trigger", "", http.StatusConflict, "", "already fired"},
			{"Disabled", "/api/v1/tasks/off/trigger", "", http.StatusConflict, "", "disabled"},
			{"UnknownTask", "/api/v1/tasks/nope/trigger", "", http.StatusNotFound, "", `task "nope" not found`},
			{"LongID", "/api/v1/tasks/" + strings.Repeat("x", 600) + "/trigger", "", http.StatusBadRequest, "task_id", "longer than"},
			{"UnknownField", "/api/v1/tasks/t1/trigger", `{"parms":{}}`, http.StatusBadRequest, "parms", "unknown field"},
			{"ParamsNotStrings", "/api/v1/tasks/t1/trigger", `{"params":{"n":1}}`, http.StatusBadRequest, "params", "must be text"},
			{"ParamsNotObject", "/api/v1/tasks/t1/trigger", `{"params":["a"]}`, http.StatusBadRequest, "params", "must be an object"},
			{"EmptyKey", "/api/v1/tasks/t1/trigger", `{"params":{"":"x"}}`, http.StatusBadRequest, "params", "keys are 1 to"},
			{"LongValue", "/api/v1/tasks/t1/trigger", `{"params":{"k":"` + strings.Repeat("v", task.MaxParamValue+1) + `"}}`,
				http.StatusBadRequest, "params.k", "at most"},
			{"BadJSON", "/api/v1/tasks/t1/trigger", `{"params":`, http.StatusBadRequest, "body", "invalid JSON"},
			{"NotObject", "/api/v1/tasks/t1/trigger", `[]`, http.StatusBadRequest, "body", "must be a JSON object"},
			{"Trailing", "/api/v1/tasks/t1/trigger", `{} {}`, http.StatusBadRequest, "body", "after the JSON value"},
			{"TooBig", "/api/v1/tasks/t1/trigger", `{"params":{"k":"` + strings.Repeat("v", 300<<10) + `"}}`,
				http.StatusRequestEntityTooLarge, "body", "larger than"},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				apitest.WantError(t, b.Do(t, http.MethodPost, tt.path, tt.body), tt.status, tt.field, tt.msg)
			})
		}
	})

	if err := b.Firer.Shutdown(t.Context()); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	runs, err := b.Store.ListRuns(t.Context(), "t1", time.Time{}, 10)
	if err != nil {
		t.Fatalf("ListRuns: %v", err)
	}
	if len(runs) != 1 || runs[0].TriggerID != run.TriggerID || runs[0].State != task.RunDone {
		t.Errorf("ledger = %+v, want the one manual run, done", runs)
	}
}

func TestTaskState(t *testing.T) {
	t.Parallel()
	b := fullapi.SetupControl(t)
	b.AddTask(t, "t1", 1)
	path := "/api/v1/tasks/t1/state"

	wakes := b.Wakes.Load()
	got := apitest.Want[task.Task](t, b.Do(t, http.MethodPut, path, `{"state":"stopped"}`), http.StatusOK)
	if got.TaskID != "t1" || got.State != task.StateStopped || got.IsClaimed != 0 {
		t.Errorf("task = %+v, want t1 stopped and unclaimed", got)
	}
	if b.Wakes.Load() != wakes+1 {
		t.Errorf("wakes = %d, want %d: a state change wakes the patrols", b.Wakes.Load(), wakes+1)
	}
	// Back to running: the schedule counts from now.
	got = apitest.Want[task.Task](t, b.Do(t, http.MethodPut, path, `{"state":"running"}`), http.StatusOK)
	if got.State != task.StateRunning || !got.Anchor.Equal(mapping.Anchor(apitest.FixedNow)) {
		t.Errorf("task = %+v, want running anchored at %s", got, mapping.Anchor(apitest.FixedNow))
	}
	got = apitest.Want[task.Task](t, b.Do(t, http.MethodPut, path, `{"state":"closed"}`), http.StatusOK)
	if stored, err := b.Store.GetTask(t.Context(), "t1"); err != nil || stored.State != task.StateClosed || got.State != task.StateClosed {
		t.Errorf("stored task = %+v, %v; want closed", stored, err)
	}

	tests := []struct {
		name, path, body string
		status           int
		field, msg       string
	}{
		{"UnknownState", path, `{"state":"paused"}`, 400, "state", "running, stopped or closed"},
		{"NoState", path, `{}`, 400, "state", "required"},
		{"StateType", path, `{"state":1}`, 400, "state", "must be text"},
		{"UnknownField", path, `{"state":"running","why":"x"}`, 400, "why", "unknown field"},
		{"EmptyBody", path, ``, 400, "body", "empty body"},
		{"UnknownTask", "/api/v1/tasks/nope/state", `{"state":"running"}`, 404, "", `task "nope" not found`},
		{"LongID", "/api/v1/tasks/" + strings.Repeat("x", 600) + "/state", `{"state":"running"}`, 400, "task_id", "longer than"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			apitest.WantError(t, b.Do(t, http.MethodPut, tt.path, tt.body), tt.status, tt.field, tt.msg)
		})
	}
}
