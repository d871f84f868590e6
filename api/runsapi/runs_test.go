package runsapi_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"cronsheet/internal/apitest"
	"cronsheet/internal/apitest/fullapi"
	"cronsheet/task"
)

// runsAnswer is the answer of GET /api/v1/runs.
type runsAnswer struct {
	Runs []task.Run `json:"runs"`
	Next string     `json:"next"`
}

// addRuns stores runs of tasks a and b to targets x and y, fired a second
// apart (the newest is r5), in states done and dead.
func addRuns(t *testing.T, b *fullapi.Bundle) {
	t.Helper()
	for i := range 6 {
		r := &task.Run{TriggerID: fmt.Sprintf("r%d", i), TaskID: []string{"a", "b"}[i%2], Target: []string{"x", "y", "x"}[i%3],
			Slot: apitest.FixedNow.Add(time.Duration(i) * time.Second), FiredAt: apitest.FixedNow.Add(time.Duration(i) * time.Second),
			TriggerType: task.TriggerSchedule, State: []task.RunState{task.RunDone, task.RunDead}[i/3], Attempt: 1}
		if _, err := b.Store.InsertRun(t.Context(), r); err != nil {
			t.Fatalf("InsertRun: %v", err)
		}
	}
}

// runIDs lists the trigger ids of runs.
func runIDs(runs []task.Run) string {
	ids := make([]string, len(runs))
	for i, r := range runs {
		ids[i] = r.TriggerID
	}
	return strings.Join(ids, ",")
}

func TestQueryRuns(t *testing.T) {
	t.Parallel()
	b := fullapi.SetupControl(t)
	addRuns(t, b)

	t.Run("Filters", func(t *testing.T) {
		tests := []struct{ query, want string }{
			{"", "r5,r4,r3,r2,r1,r0"},
			{"task_id=a", "r4,r2,r0"},
			{"target=y", "r4,r1"},
			{"state=dead", "r5,r4,r3"},
			{"task_id=b&target=x&state=dead", "r5,r3"},
			{"task_id=none", ""},
		}
		for _, tt := range tests {
			rec := b.Do(t, http.MethodGet, "/api/v1/runs?"+tt.query, "")
			got := apitest.Want[runsAnswer](t, rec, http.StatusOK)
			if runIDs(got.Runs) != tt.want || got.Next != "" {
				t.Errorf("?%s = %s next %q, want %s and no next", tt.query, runIDs(got.Runs), got.Next, tt.want)
			}
			if tt.want == "" && !strings.Contains(rec.Body.String(), `"runs":[]`) {
				t.Errorf("no runs = %s, want runs []", rec.Body)
			}
		}
	})

	t.Run("Cursor", func(t *testing.T) {
		var pages []string
		cursor := ""
		for range 5 {
			got := apitest.Want[runsAnswer](t, b.Do(t, http.MethodGet, "/api/v1/runs?limit=2&cursor="+url.QueryEscape(cursor), ""), http.StatusOK)
			pages = append(pages, runIDs(got.Runs))
			if got.Next == "" {
				break
			}
			cursor = got.Next
		}
		if got := strings.Join(pages, " | "); got != "r5,r4 | r3,r2 | r1,r0" {
			t.Errorf("pages = %s, want r5,r4 | r3,r2 | r1,r0", got)
		}
		// Filters apply on every page.
		first := apitest.Want[runsAnswer](t, b.Do(t, http.MethodGet, "/api/v1/runs?task_id=a&limit=1", ""), http.StatusOK)
		second := apitest.Want[runsAnswer](t, b.Do(t, http.MethodGet, "/api/v1/runs?task_id=a&limit=5&cursor="+first.Next, ""), http.StatusOK)
		if runIDs(first.Runs) != "r4" || runIDs(second.Runs) != "r2,r0" || second.Next != "" {
			t.Errorf("task a pages = %s then %s (next %q)", runIDs(first.Runs), runIDs(second.Runs), second.Next)
		}
	})

	t.Run("OlderForm", func(t *testing.T) {
		// ?task_id=&before= pages one task's runs by slot, as before.
		before := apitest.FixedNow.Add(4 * time.Second).Format(time.RFC3339)
		got := apitest.Want[runsAnswer](t, b.Do(t, http.MethodGet, "/api/v1/runs?task_id=a&before="+before, ""), http.StatusOK)
		if runIDs(got.Runs) != "r2,r0" {
			t.Errorf("runs of a before %s = %s, want r2,r0", before, runIDs(got.Runs))
		}
	})

	t.Run("Errors", func(t *testing.T) {
		tests := []struct{ query, field, msg string }{
			{"state=finished", "state", "must be one of pending, running, accepted"},
			{"cursor=abc", "cursor", "not a cursor"},
			{"cursor=" + strings.Repeat("A", 600), "cursor", "not a cursor"},
			{"limit=0", "limit", "from 1 to 500"},
			{"limit=501", "limit", "from 1 to 500"},
			{"task_id=" + strings.Repeat("a", 600), "task_id", "longer than"},
			{"target=" + strings.Repeat("a", 600), "target", "longer than"},
			{"before=2026-01-01T00:00:00Z", "task_id", "required"},
			{"task_id=a&before=yesterday", "before", "RFC 3339"},
			{"task_id=a&before=2026-01-01T00:00:00Z&state=done", "before", "page with cursor"},
		}
		for _, tt := range tests {
			apitest.WantError(t, b.Do(t, http.MethodGet, "/api/v1/runs?"+tt.query, ""), http.StatusBadRequest, tt.field, tt.msg)
		}
	})
}

func TestRunDetailAndFeedback(t *testing.T) {
	t.Parallel()
	b := fullapi.SetupControl(t)
	b.AddTask(t, "t1", 1)
	for _, id := range []string{"tr-ok", "tr-bad", "tr-full"} {
		r := &task.Run{TriggerID: id, TaskID: "t1", Target: id, Slot: apitest.FixedNow, FiredAt: apitest.FixedNow,
			TriggerType: task.TriggerManual, State: task.RunRunning, Attempt: 1}
		if _, err := b.Store.InsertRun(t.Context(), r); err != nil {
			t.Fatalf("InsertRun: %v", err)
		}
	}
	feedback := func(id string) string { return "/api/v1/runs/" + id + "/feedback" }

	got := apitest.Want[task.Run](t, b.Do(t, http.MethodGet, "/api/v1/runs/tr-ok", ""), http.StatusOK)
	if got.TriggerID != "tr-ok" || got.State != task.RunRunning || len(got.Feedback) != 0 {
		t.Errorf("run = %+v", got)
	}
	apitest.WantError(t, b.Do(t, http.MethodGet, "/api/v1/runs/nope", ""), http.StatusNotFound, "", `run "nope" not found`)

	// A progress report keeps the run going; a final one with status 0
	// ends it done.
	got = apitest.Want[task.Run](t, b.Do(t, http.MethodPost, feedback("tr-ok"),
		`{"status":0,"message":"half way","progress":true}`), http.StatusOK)
	if got.State == task.RunDone || len(got.Feedback) != 1 || got.Feedback[0].Message != "half way" || !got.Feedback[0].Progress {
		t.Errorf("after progress: %+v", got)
	}
	got = apitest.Want[task.Run](t, b.Do(t, http.MethodPost, feedback("tr-ok"),
		`{"status":0,"message":"all done","output":"42 rows"}`), http.StatusOK)
	if got.State != task.RunDone || len(got.Feedback) != 2 || got.Output != "42 rows" || !got.Feedback[1].At.Equal(apitest.FixedNow) {
		t.Errorf("after final report: %+v", got)
	}
	detail := apitest.Want[task.Run](t, b.Do(t, http.MethodGet, "/api/v1/runs/tr-ok", ""), http.StatusOK)
	if len(detail.Feedback) != 2 || detail.Feedback[0].Message != "half way" || detail.Feedback[1].Message != "all done" {
		t.Errorf("detail feedback = %+v, want both reports, oldest first", detail.Feedback)
	}
	apitest.WantError(t, b.Do(t, http.MethodPost, feedback("tr-ok"), `{"status":0}`), http.StatusConflict, "",
		"run tr-ok is already done; feedback is taken while it is running or accepted")

	// A final report with another status: dead, with the message as error.
	got = apitest.Want[task.Run](t, b.Do(t, http.MethodPost, feedback("tr-bad"), `{"status":3,"message":"disk full"}`), http.StatusOK)
	if got.State != task.RunDead || got.Error != "disk full" {
		t.Errorf("after failure report: %+v", got)
	}

	t.Run("TooManyReports", func(t *testing.T) {
		for i := range task.MaxFeedback {
			apitest.Want[task.Run](t, b.Do(t, http.MethodPost, feedback("tr-full"),
				fmt.Sprintf(`{"status":0,"message":"step %d","progress":true}`, i)), http.StatusOK)
		}
		apitest.WantError(t, b.Do(t, http.MethodPost, feedback("tr-full"), `{"status":0}`), http.StatusConflict, "",
			fmt.Sprintf("already holds %d feedback reports", task.MaxFeedback))
	})

	t.Run("Errors", func(t *testing.T) {
		tests := []struct {
			name, id, body string
			status         int
			field, msg     string
		}{
			{"NoStatus", "tr-full", `{"message":"x"}`, 400, "status", "required"},
			{"StatusType", "tr-full", `{"status":"ok"}`, 400, "status", "must be a whole number"},
			{"StatusFraction", "tr-full", `{"status":1.5}`, 400, "status", "must be a whole number"},
			{"StatusRange", "tr-full", `{"status":4294967296}`, 400, "status", "from -2147483648"},
			{"ProgressType", "tr-full", `{"status":0,"progress":"yes"}`, 400, "progress", "true or false"},
			{"LongMessage", "tr-full", `{"status":0,"message":"` + strings.Repeat("m", task.MaxFeedbackMessage+1) + `"}`, 400, "message", "at most"},
			{"LongOutput", "tr-full", `{"status":0,"output":"` + strings.Repeat("o", task.MaxOutput+1) + `"}`, 400, "output", "at most"},
			{"UnknownField", "tr-full", `{"status":0,"code":1}`, 400, "code", "unknown field"},
			{"EmptyBody", "tr-full", ``, 400, "body", "empty body"},
			{"TooBig", "tr-full", `{"status":0,"output":"` + strings.Repeat("o", 300<<10) + `"}`, 413, "body", "larger than"},
			{"UnknownRun", "nope", `{"status":0}`, 404, "", `run "nope" not found`},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				apitest.WantError(t, b.Do(t, http.MethodPost, feedback(tt.id), tt.body), tt.status, tt.field, tt.msg)
			})
		}
	})
}
