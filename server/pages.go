package server

import (
	"github.com/gin-gonic/gin"

	"cronsheet/static"
)

// setMissingAssets records the vendored files the pages lack (a binary
// built without `make static`): with any, every page and asset answers
// static.Unavailable's 503, and Run logs an error at start-up.
func (s *Server) setMissingAssets(missing []string) {
	s.missingAssets = missing
	s.noPages = nil
	if len(missing) > 0 {
		s.noPages = static.Unavailable(missing)
	}
}

// pagesAvailable is the middleware of the page routes: the 503 page when
// the pages lack their assets, else nothing.
func (s *Server) pagesAvailable(c *gin.Context) {
	if s.noPages != nil {
		s.noPages.ServeHTTP(c.Writer, c.Request)
		c.Abort()
	}
}
