// Package jobsapi serves the jobs API over HTTP (design notes 002/003,
// docs/SEEDS.md): submit one job or a batch, read and long-poll a job,
// cancel, upsert by key, block and unblock, backfill, list jobs by state
// and export the dead ones (/api/v1/jobs…), and mounts the WebSocket
// intake at GET /api/v1/jobs/ws.
//
// Its handlers hold only the JobsService interface declared here
// (jobs.Service implements it) and the wire types of jobs/jobapi. It
// imports task, store (for the cursor and audit types), jobs/jobapi and
// httpapi, never the jobs service itself, a store driver, patrol, fire,
// executors or server.
package jobsapi

import (
	"log/slog"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"cronsheet/api/httpapi"
	"cronsheet/store"
)

// Deps are the dependencies of the jobs API.
type Deps struct {
	// Logger receives the 500s; nil discards them.
	Logger *slog.Logger
	// Jobs serves /api/v1/jobs…; nil answers 501.
	Jobs JobsService
	// Socket, when set, serves GET /api/v1/jobs/ws (the WebSocket intake).
	Socket http.Handler
	// Audit records every change with who made it; nil records nothing.
	Audit store.AuditLog
	// Now is the clock of the audit records; nil = time.Now.
	Now func() time.Time
}

// API is the jobs API's handler set; build it with New and mount it with
// Register.
type API struct {
	httpapi.Base
	jobs   JobsService
	socket http.Handler
}

// New returns the jobs API over d.
func New(d Deps) *API {
	return &API{Base: httpapi.NewBase("jobsapi", d.Logger, d.Audit, d.Now), jobs: d.Jobs, socket: d.Socket}
}

// Register mounts the routes on r (see jobs.go).
func (a *API) Register(r gin.IRouter) {
	jg := r.Group("/api/v1/jobs")
	jg.POST("", a.submitJobs)
	jg.GET("", a.listJobs)
	jg.GET("/dead.jsonl", a.exportDead)
	if a.socket != nil {
		jg.GET("/ws", gin.WrapH(a.socket))
	}
	jg.POST("/backfill", a.backfillJobs)
	jg.PUT("/by-key/:key", a.upsertJob)
	jg.GET("/:id", a.getJob)
	jg.DELETE("/:id", a.cancelJob)
	jg.POST("/:id/block", a.blockJob)
	jg.POST("/:id/unblock", a.unblockJob)
}

// fixedPath answers 405 with the Allow of the fixed route beside /:id that
// c's path names (GET /api/v1/jobs/backfill: only POST routes it), and
// reports whether it did. Gin routes such a request to /:id, whose
// handler would answer "job backfill not found". No job id is one of
// these names: ids are generated ("job_…").
func (a *API) fixedPath(c *gin.Context) bool {
	allow := map[string]string{"backfill": http.MethodPost, "dead.jsonl": http.MethodGet}
	if a.socket != nil {
		allow["ws"] = http.MethodGet
	}
	if methods, ok := allow[c.Param("id")]; ok {
		httpapi.MethodNotAllowed(c, methods)
		return true
	}
	return false
}
