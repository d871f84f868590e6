package webtable_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"cronsheet/executors"
	"cronsheet/fire"
	"cronsheet/mapping"
	"cronsheet/store"
	"cronsheet/task"
	"cronsheet/webtable"
)

// controlBundle is an API with every dependency: Control is the SQLite
// store, Trigger a real firer over it delivering to the outbox.
type controlBundle struct {
	*testBundle
	firer     *fire.Firer
	engine    *gin.Engine
	scenarios map[string]*mapping.Scenario
}

// checkTarget is the test's config-dependent check: exec commands other
// than "backup" are not listed, and the host blocked.example is refused
// with a plain error.
func checkTarget(t *task.Target) error {
	switch {
	case t.Exec != nil && t.Exec.Command != "backup":
		return task.Invalid("exec.command", "%q is not a command listed in config", t.Exec.Command)
	case t.HTTP != nil && strings.Contains(t.HTTP.URL, "blocked.example"):
		return errors.New("host blocked.example is not allowed")
	}
	return nil
}

func setupControl(t *testing.T) *controlBundle {
	t.Helper()
	st := openStore(t)
	memos, err := mapping.New(mapping.MemosConfig())
	if err != nil {
		t.Fatalf("memos scenario: %v", err)
	}
	logs := &syncBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, nil))
	execs := executors.NewRegistry()
	execs.Register(task.ChannelOutbox, executors.NewOutbox(logger, st))
	f := fire.New(logger, fire.Config{Node: "api-node"}, st, execs, nil)
	t.Cleanup(func() { _ = f.Shutdown(context.Background()) })
	b := &controlBundle{testBundle: &testBundle{store: st, logs: logs}, firer: f,
		scenarios: map[string]*mapping.Scenario{"memos": memos}}
	api := webtable.New(webtable.Deps{
		Logger:      logger,
		Store:       st,
		Scenarios:   b.scenarios,
		Wake:        func() { b.wakes.Add(1) },
		Now:         func() time.Time { return fixedNow },
		CheckTarget: checkTarget,
		Trigger: func(ctx context.Context, taskID string, params map[string]string) ([]*task.Run, error) {
			return f.Trigger(ctx, fire.TriggerParams{TaskID: taskID, At: fixedNow, Params: params})
		},
	})
	r := gin.New()
	r.Use(webtable.Middleware(logger)...)
	api.Register(r)
	b.router, b.engine = r, r
	return b
}

// addTask stores a row and its synced task (not claimed by anyone).
func (b *testBundle) addTask(t *testing.T, id string, active int) {
	t.Helper()
	body := `{"memo_id":"` + id + `","title":"hi","content":"body","when":"every 1h","channel":"outbox"}`
	row := want[task.Row](t, b.do(t, http.MethodPost, rowsPath, body), http.StatusCreated)
	memos, err := mapping.New(mapping.MemosConfig())
	if err != nil {
		t.Fatal(err)
	}
	tk, err := memos.ToTask(&row, fixedNow)
	if err != nil {
		t.Fatalf("ToTask: %v", err)
	}
	tk.IsEnable = active
	if err := b.store.ApplySync(context.Background(), store.ApplySyncParams{Scenario: "memos", RowID: id,
		RowVersion: row.Version, Task: tk, IsActive: task.RowActive, Now: fixedNow}); err != nil {
		t.Fatalf("ApplySync: %v", err)
	}
}

// triggerAnswer is the answer of POST .../trigger.
type triggerAnswer struct {
	Error string     `json:"error"`
	Runs  []task.Run `json:"runs"`
}

func TestTriggerEndpoint(t *testing.T) {
	t.Parallel()
	b := setupControl(t)
	b.addTask(t, "t1", 1)
	b.addTask(t, "t2", 1)
	b.addTask(t, "off", 0)
	b.addTask(t, "shut", 1)
	if _, err := b.store.SetTaskState(t.Context(), store.TaskStateParams{TaskID: "shut", State: task.StateClosed, Now: fixedNow}); err != nil {
		t.Fatalf("SetTaskState: %v", err)
	}

	got := want[triggerAnswer](t, b.do(t, http.MethodPost, "/api/v1/tasks/t1/trigger", ""), http.StatusAccepted)
	if len(got.Runs) != 1 {
		t.Fatalf("runs = %+v, want one", got.Runs)
	}
	run := got.Runs[0]
	if run.TaskID != "t1" || run.TriggerType != task.TriggerManual || !run.Slot.Equal(fixedNow) || run.TriggerID == "" {
		t.Errorf("run = %+v, want a manual run of t1 at %s", run, fixedNow)
	}

	t.Run("WithParams", func(t *testing.T) {
		got := want[triggerAnswer](t, b.do(t, http.MethodPost, "/api/v1/tasks/t2/trigger",
			`{"params":{"who":"api","n":"2"}}`), http.StatusAccepted)
		if len(got.Runs) != 1 || got.Runs[0].Params["who"] != "api" || got.Runs[0].Params["n"] != "2" {
			t.Fatalf("runs = %+v, want one with the params", got.Runs)
		}
		stored, err := b.store.GetRun(t.Context(), got.Runs[0].TriggerID)
		if err != nil || stored.Params["who"] != "api" {
			t.Errorf("stored run = %+v, %v; want its params kept", stored, err)
		}
	})

	t.Run("AllRejected", func(t *testing.T) {
		got := want[triggerAnswer](t, b.do(t, http.MethodPost, "/api/v1/tasks/shut/trigger", ""), http.StatusConflict)
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
			{"ParamsNotStrings", "/api/v1/tasks/t1/trigger", `{"params":{"n":1}}`, http.StatusBadRequest, "params", "must be a string"},
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
				wantError(t, b.do(t, http.MethodPost, tt.path, tt.body), tt.status, tt.field, tt.msg)
			})
		}
	})

	if err := b.firer.Shutdown(t.Context()); err != nil {
		t.Fatalf("Shutdown: %v", err)
	}
	runs, err := b.store.ListRuns(t.Context(), "t1", time.Time{}, 10)
	if err != nil {
		t.Fatalf("ListRuns: %v", err)
	}
	if len(runs) != 1 || runs[0].TriggerID != run.TriggerID || runs[0].State != task.RunDone {
		t.Errorf("ledger = %+v, want the one manual run, done", runs)
	}
}

// TestControlEndpointsNeedNoExtraDeps checks that targets, task states,
// run queries and feedback come from Deps.Store alone: no store lacks them,
// so none of them answers 501.
func TestControlEndpointsNeedNoExtraDeps(t *testing.T) {
	t.Parallel()
	b := setup(t) // Store only: no Deps.Trigger
	tests := []struct {
		method, path, body string
		want               int
	}{
		{http.MethodPut, "/api/v1/tasks/t1/state", `{"state":"stopped"}`, http.StatusNotFound},
		{http.MethodGet, "/api/v1/targets", "", http.StatusOK},
		{http.MethodGet, "/api/v1/targets/x", "", http.StatusNotFound},
		{http.MethodDelete, "/api/v1/targets/x", "", http.StatusNotFound},
		{http.MethodPost, "/api/v1/runs/tr1/feedback", `{"status":0}`, http.StatusNotFound},
		{http.MethodGet, "/api/v1/runs?state=done", "", http.StatusOK},
		{http.MethodGet, "/api/v1/runs?task_id=t1", "", http.StatusOK},
		{http.MethodGet, "/api/v1/scenarios/memos/rows/r1/audit", "", http.StatusOK},
	}
	for _, tt := range tests {
		if w := b.do(t, tt.method, tt.path, tt.body); w.Code != tt.want {
			t.Errorf("%s %s = %d %s, want %d", tt.method, tt.path, w.Code, w.Body, tt.want)
		}
	}
	// A manual trigger needs the firer (Deps.Trigger), which the server
	// always wires.
	wantError(t, b.do(t, http.MethodPost, "/api/v1/tasks/t1/trigger", ""), http.StatusNotImplemented, "", "not available")
}
