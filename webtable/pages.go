package webtable

import (
	"io/fs"
	"net/http"

	"github.com/gin-gonic/gin"

	"cronsheet/api/httpapi"
)

// Pages serves the web pages from an embedded FS (package static): the
// table at /, the targets at /targets, the flows at /flows, the runs at /runs,
// the jobs at /jobs (over the jobs API), the outbox at
// /outbox, the system status at /status (over GET /api/v1/status, which
// package server serves), the sign-in page at /login, the API's reference
// at /api/docs (Swagger UI over GET /api/v1/openapi.json), and their files
// under /assets/. No page holds an inline script (the Guard's
// Content-Security-Policy forbids them).
type Pages struct {
	files fs.FS
}

// NewPages returns the pages over files, which holds index.html,
// targets.html, runs.html, outbox.html, status.html, their scripts and
// style, and vendor/.
func NewPages(files fs.FS) *Pages { return &Pages{files: files} }

// Register mounts the pages on r.
func (p *Pages) Register(r gin.IRouter) {
	r.GET("/", p.page("index.html"))
	r.GET("/targets", p.page("targets.html"))
	r.GET("/flows", p.page("flows.html"))
	r.GET("/runs", p.page("runs.html"))
	r.GET("/jobs", p.page("jobs.html"))
	r.GET("/outbox", p.page("outbox.html"))
	r.GET("/status", p.page("status.html"))
	r.GET("/audit", p.page("audit.html"))
	r.GET("/users", p.page("users.html"))
	r.GET("/settings", p.page("settings.html"))
	r.GET("/login", p.page("login.html"))
	r.GET("/api/docs", p.page("apidocs.html"))
	assets := http.StripPrefix("/assets/", http.FileServerFS(p.files))
	r.GET("/assets/*path", func(c *gin.Context) {
		c.Header("Cache-Control", "no-cache")
		assets.ServeHTTP(c.Writer, c.Request)
	})
}

func (p *Pages) page(name string) gin.HandlerFunc {
	return func(c *gin.Context) {
		b, err := fs.ReadFile(p.files, name)
		if err != nil {
			c.AbortWithStatusJSON(http.StatusNotFound, httpapi.ErrorBody{Error: "page " + name + " is missing"})
			return
		}
		c.Header("Cache-Control", "no-cache")
		c.Data(http.StatusOK, "text/html; charset=utf-8", b)
	}
}
