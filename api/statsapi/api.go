// Package statsapi serves the figures of the status page: the runs fired
// per bucket of a window, with failures and lag (GET /api/v1/stats/fires),
// and the next fires of the enabled tasks (GET /api/v1/stats/upcoming).
//
// Its handlers hold only the small Store interface declared here. It
// imports task, store (for the parameter and answer types) and httpapi,
// never a store driver, patrol, fire, executors, jobs or server.
package statsapi

import (
	"context"
	"log/slog"
	"time"

	"github.com/gin-gonic/gin"

	"cronsheet/api/httpapi"
	"cronsheet/store"
)

// Store is the part of storage the stats API calls (store.RunStats and
// the tasks' titles).
type Store interface {
	FireStats(ctx context.Context, p store.FireStatsParams) (*store.FireStats, error)
	UpcomingFires(ctx context.Context, from, to time.Time, limit int) ([]store.UpcomingFire, error)
	// TaskGetter reads the titles of a page of answers.
	httpapi.TaskGetter
}

// Every store the server accepts satisfies Store.
var _ Store = store.Product(nil)

// API serves the stats; build it with New and mount it with Register.
type API struct {
	httpapi.Base
	store Store
}

// New returns the stats API over st with the clock now (nil = time.Now);
// logger receives the 500s (nil discards them). It panics when st is nil,
// a wiring bug.
func New(logger *slog.Logger, st Store, now func() time.Time) *API {
	return &API{Base: httpapi.NewBase("statsapi", logger, nil, now), store: httpapi.Require("statsapi", "Store", st)}
}

// Register mounts GET /api/v1/stats/fires and GET /api/v1/stats/upcoming
// on r.
func (a *API) Register(r gin.IRouter) {
	r.GET("/api/v1/stats/fires", a.fireStats)
	r.GET("/api/v1/stats/upcoming", a.upcoming)
}
