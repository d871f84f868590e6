// Package httpapi holds what every handler package of cronsheet's REST API
// shares, so that each answers alike: the Base each handler set embeds (its
// logger, audit log and clock, base.go), the error bodies with their stable
// codes and the one mapping of errors to statuses (errors.go), JSON
// decoding with bounds (decode.go), query and path parameters with bounds
// (this file), If-Match and ETag (version.go), the request principal and
// the audit trail's author (principal.go, audit.go), and the request
// logger and recovery middleware (middleware.go).
//
// It holds no route of its own. It imports task and store (for the audit
// log and the role of a principal), never a handler package, a store
// driver, patrol, fire, executors, jobs or server.
package httpapi

import (
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"cronsheet/task"
)

// Bounds on query parameters.
const (
	// DefaultLimit is the page size when a request names none.
	DefaultLimit = 50
	// MaxLimit is the largest page size a request may ask for.
	MaxLimit = 500
	// MaxQueryLen bounds an id-like query or path parameter, in bytes.
	MaxQueryLen = 512
)

// IntQuery reads an optional integer query parameter in [lo, hi]; def
// when absent.
func IntQuery(c *gin.Context, name string, def, lo, hi int) (int, error) {
	s, ok := c.GetQuery(name)
	if !ok || s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return 0, task.Invalid(name, "must be an integer from %d to %d", lo, hi)
	}
	return n, nil
}

// StringQuery reads an optional query parameter of at most MaxQueryLen
// bytes.
func StringQuery(c *gin.Context, name string) (string, error) {
	s := c.Query(name)
	if len(s) > MaxQueryLen {
		return "", task.Invalid(name, "longer than %d bytes", MaxQueryLen)
	}
	return s, nil
}

// TimeQuery reads an optional RFC 3339 query parameter; zero when absent.
func TimeQuery(c *gin.Context, name string) (time.Time, error) {
	s := c.Query(name)
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, task.Invalid(name, "must be an RFC 3339 time such as 2026-03-08T01:30:00-05:00")
	}
	if err := task.CheckInstant(name, t); err != nil {
		return time.Time{}, err
	}
	return t, nil
}

// PathID returns the path parameter name, refusing one over MaxQueryLen.
func PathID(c *gin.Context, name string) (string, error) {
	id := c.Param(name)
	if len(id) > MaxQueryLen {
		return "", task.Invalid(name, "longer than %d bytes", MaxQueryLen)
	}
	return id, nil
}
