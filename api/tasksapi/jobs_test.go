package tasksapi_test

import (
	"net/http"
	"testing"
	"time"

	"cronsheet/internal/apitest"
	"cronsheet/internal/apitest/fullapi"
	"cronsheet/task"
)

// TestTaskEndpointsRefuseJobs: the tasks API changes no job — setting a
// pending job's state (closed, stopped, running) and triggering it are 409
// naming the jobs API, and the job stays as it was (running, enabled, no
// run in the ledger); reading it still works.
func TestTaskEndpointsRefuseJobs(t *testing.T) {
	t.Parallel()
	b := fullapi.SetupControl(t)
	job := &task.Task{
		TaskID: "job_1", Scenario: task.JobScenario, TaskType: "http", ExecuteType: task.Once, TTL: time.Minute,
		State: task.StateRunning, IsEnable: 1, Anchor: apitest.FixedNow, Targets: []string{task.JobTargetID},
		Job: &task.Job{Method: task.JobPOST, Name: "http://127.0.0.1:9/hook", DueAt: apitest.FixedNow.Add(time.Hour)},
	}
	if err := b.Store.CreateJob(t.Context(), job); err != nil {
		t.Fatalf("CreateJob: %v", err)
	}
	for _, state := range []string{"closed", "stopped", "running"} {
		apitest.WantError(t, b.Do(t, http.MethodPut, "/api/v1/tasks/job_1/state", `{"state":"`+state+`"}`),
			http.StatusConflict, "", "is a job; change it through the jobs API: DELETE /api/v1/jobs/job_1")
	}
	apitest.WantError(t, b.Do(t, http.MethodPost, "/api/v1/tasks/job_1/trigger", ""),
		http.StatusConflict, "", "POST /api/v1/jobs/backfill")
	stored, err := b.Store.GetTask(t.Context(), "job_1")
	if err != nil || stored.State != task.StateRunning || stored.IsEnable != 1 {
		t.Fatalf("job after the refusals = %+v, %v; want it running as stored", stored, err)
	}
	if runs, err := b.Store.ListRuns(t.Context(), "job_1", time.Time{}, 10); err != nil || len(runs) != 0 {
		t.Errorf("job's runs = %+v, %v; want none (the trigger was refused)", runs, err)
	}
	got := apitest.Want[task.Task](t, b.Do(t, http.MethodGet, "/api/v1/tasks/job_1", ""), http.StatusOK)
	if got.TaskID != "job_1" || got.Job == nil {
		t.Errorf("GET the job as a task = %+v, want it", got)
	}
}
