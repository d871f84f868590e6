// Package fullapi mounts the whole REST API (the row endpoints of
// webtable and every package under api/ but authapi and flowsapi) on one
// router over a fresh store, as package server wires it, for the tests of
// those packages and the tests that cross them. It is for tests only.
package fullapi

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"cronsheet/api/auditapi"
	"cronsheet/api/healthapi"
	"cronsheet/api/httpapi"
	"cronsheet/api/jobsapi"
	"cronsheet/api/outboxapi"
	"cronsheet/api/runsapi"
	"cronsheet/api/statsapi"
	"cronsheet/api/targetsapi"
	"cronsheet/api/tasksapi"
	"cronsheet/executors"
	"cronsheet/fire"
	"cronsheet/internal/apitest"
	"cronsheet/mapping"
	"cronsheet/store"
	"cronsheet/task"
	"cronsheet/webtable"
)

// Deps are what Mount hands the API's packages.
type Deps struct {
	Logger      *slog.Logger
	Store       store.Product
	Scenarios   map[string]*mapping.Scenario
	Wake        func()
	Now         func() time.Time
	Health      func(ctx context.Context) error
	CheckTarget func(*task.Target) error
	Trigger     func(ctx context.Context, taskID string, params map[string]string) ([]*task.Run, error)
	CancelRun   func(ctx context.Context, triggerID, why string) (*task.Run, error)
	Feedback    runsapi.Feedback
	Jobs        jobsapi.JobsService
	Socket      http.Handler
}

// Mount registers the row endpoints and the API's packages on r over d,
// d.Store also serving as their audit log.
func Mount(r gin.IRouter, d Deps) {
	webtable.New(webtable.Deps{Logger: d.Logger, Store: d.Store, Scenarios: d.Scenarios, Wake: d.Wake, Now: d.Now}).Register(r)
	auditapi.New(d.Logger, d.Store, d.Scenarios).Register(r)
	tasksapi.New(tasksapi.Deps{Logger: d.Logger, Store: d.Store, Audit: d.Store, Wake: d.Wake, Now: d.Now,
		Trigger: d.Trigger}).Register(r)
	targetsapi.New(targetsapi.Deps{Logger: d.Logger, Store: d.Store, Audit: d.Store, Now: d.Now,
		CheckTarget: d.CheckTarget}).Register(r)
	runsapi.New(runsapi.Deps{Logger: d.Logger, Store: d.Store, Audit: d.Store, Now: d.Now,
		CancelRun: d.CancelRun, Feedback: d.Feedback}).Register(r)
	outboxapi.New(d.Logger, d.Store).Register(r)
	statsapi.New(d.Logger, d.Store, d.Now).Register(r)
	healthapi.New(d.Health).Register(r)
	jobsapi.New(jobsapi.Deps{Logger: d.Logger, Jobs: d.Jobs, Socket: d.Socket, Audit: d.Store, Now: d.Now}).Register(r)
}

// Bundle is the whole API over a fresh store of the test driver and the
// memos scenario, at apitest.FixedNow.
type Bundle struct {
	Router    http.Handler
	Engine    *gin.Engine
	Store     store.Product
	Scenarios map[string]*mapping.Scenario
	// Wakes counts the API's wakes of the patrols.
	Wakes atomic.Int32
	// Logs holds the API's JSON log.
	Logs *apitest.SyncBuffer
	// Health, when set, is what the health check reports.
	Health atomic.Pointer[error]
	// Firer is SetupControl's firer, delivering to the outbox.
	Firer *fire.Firer
}

// Setup returns the API with the store as its only dependency: no
// firer (manual triggers answer 501), no target check, no jobs service.
func Setup(t *testing.T) *Bundle {
	t.Helper()
	b := newBundle(t)
	logger := slog.New(slog.NewJSONHandler(b.Logs, nil))
	b.mount(logger, Deps{Health: func(context.Context) error {
		if p := b.Health.Load(); p != nil {
			return *p
		}
		return nil
	}})
	return b
}

// CheckTarget is the tests' config-dependent check of targets: exec
// commands other than "backup" are not listed, and the host
// blocked.example is refused with a plain error.
func CheckTarget(t *task.Target) error {
	switch {
	case t.Exec != nil && t.Exec.Command != "backup":
		return task.Invalid("exec.command", "%q is not a command listed in config", t.Exec.Command)
	case t.HTTP != nil && strings.Contains(t.HTTP.URL, "blocked.example"):
		return errors.New("host blocked.example is not allowed")
	}
	return nil
}

// SetupControl returns the API with every dependency but the jobs
// service: Trigger is a real firer over the store delivering to the
// outbox, CheckTarget is CheckTarget.
func SetupControl(t *testing.T) *Bundle {
	t.Helper()
	b := newBundle(t)
	logger := slog.New(slog.NewJSONHandler(b.Logs, nil))
	execs := executors.NewRegistry()
	execs.Register(task.ChannelOutbox, executors.NewOutbox(logger, b.Store))
	f := fire.New(logger, fire.Config{Node: "api-node"}, b.Store, execs, nil)
	t.Cleanup(func() { _ = f.Shutdown(context.Background()) })
	b.Firer = f
	b.mount(logger, Deps{CheckTarget: CheckTarget, Feedback: f,
		Trigger: func(ctx context.Context, taskID string, params map[string]string) ([]*task.Run, error) {
			return f.Trigger(ctx, fire.TriggerParams{TaskID: taskID, At: apitest.FixedNow, Params: params})
		}})
	return b
}

func newBundle(t *testing.T) *Bundle {
	t.Helper()
	memos, err := mapping.New(mapping.MemosConfig())
	if err != nil {
		t.Fatalf("memos scenario: %v", err)
	}
	return &Bundle{Store: apitest.OpenStore(t), Logs: &apitest.SyncBuffer{},
		Scenarios: map[string]*mapping.Scenario{"memos": memos}}
}

// mount mounts the API over d, completed with the bundle's store,
// scenarios, wake counter and clock, on a new engine with the request
// middleware.
func (b *Bundle) mount(logger *slog.Logger, d Deps) {
	d.Logger, d.Store, d.Scenarios = logger, b.Store, b.Scenarios
	d.Wake = func() { b.Wakes.Add(1) }
	d.Now = func() time.Time { return apitest.FixedNow }
	r := gin.New()
	r.Use(httpapi.Middleware(logger)...)
	Mount(r, d)
	b.Router, b.Engine = r, r
}

// Do sends one request to the API; headers come in name, value pairs.
func (b *Bundle) Do(t *testing.T, method, path, body string, headers ...string) *httptest.ResponseRecorder {
	t.Helper()
	return apitest.Do(t, b.Router, method, path, body, headers...)
}

// RowsPath is the memos scenario's rows.
const RowsPath = "/api/v1/scenarios/memos/rows"

// AddTask stores a row and its synced task (not claimed by anyone).
func (b *Bundle) AddTask(t *testing.T, id string, active int) {
	t.Helper()
	b.AddTitledTask(t, id, "hi", active)
}

// AddTitledTask stores a row titled title and its synced task.
func (b *Bundle) AddTitledTask(t *testing.T, id, title string, active int) {
	t.Helper()
	body := `{"memo_id":"` + id + `","title":` + strconv.Quote(title) + `,"content":"body","when":"every 1h","channel":"outbox"}`
	row := apitest.Want[task.Row](t, b.Do(t, http.MethodPost, RowsPath, body), http.StatusCreated)
	tk, err := b.Scenarios["memos"].ToTask(&row, apitest.FixedNow)
	if err != nil {
		t.Fatalf("ToTask: %v", err)
	}
	tk.IsEnable = active
	if err := b.Store.ApplySync(context.Background(), store.ApplySyncParams{Scenario: "memos", RowID: id,
		RowVersion: row.Version, Task: tk, IsActive: task.RowActive, Now: apitest.FixedNow}); err != nil {
		t.Fatalf("ApplySync: %v", err)
	}
}
