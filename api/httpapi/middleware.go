package httpapi

import (
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"strings"
	"time"

	"github.com/gin-gonic/gin"
)

// componentLogger returns logger tagged with component, or a logger that
// discards everything when logger is nil (NewBase's default).
func componentLogger(logger *slog.Logger, component string) *slog.Logger {
	if logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return logger.With("component", component)
}

// Middleware returns the middleware for a gin.New() engine, outermost
// first: a request logger that writes one slog record per request, a
// recovery that logs a panic with its stack and answers 500 with a JSON
// error, and the text rule of paths (PathText). A nil logger discards the
// records.
func Middleware(logger *slog.Logger) []gin.HandlerFunc {
	logger = componentLogger(logger, "http")
	return []gin.HandlerFunc{requestLogger(logger), recovery(logger), PathText(logger)}
}

// PathText answers 400 naming the parameter for a request whose path
// parameter (an id, a key, a name: "/jobs/by-key/k%00x") holds a control
// character: NUL, CR, LF, tab or another. The bodies' text rule
// (CheckText) allows line breaks in free text only, and no path is free
// text. It runs before any handler, so none sees such a value.
func PathText(logger *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		for _, p := range c.Params {
			if strings.IndexFunc(p.Value, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 {
				WriteError(logger, c, Err(http.StatusBadRequest, p.Key,
					"%s: the path holds a control character (NUL, CR, LF or another); remove it", p.Key))
				return
			}
		}
		c.Next()
	}
}

// requestLogger logs each request's method, path, route, status, size and
// duration; 5xx answers at warn level.
func requestLogger(logger *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		start := time.Now()
		c.Next()
		status := c.Writer.Status()
		level := slog.LevelInfo
		if status >= http.StatusInternalServerError {
			level = slog.LevelWarn
		}
		logger.LogAttrs(c.Request.Context(), level, "http request",
			slog.String("method", c.Request.Method),
			slog.String("path", c.Request.URL.Path),
			slog.String("route", c.FullPath()),
			slog.Int("status", status),
			slog.Int("bytes", max(c.Writer.Size(), 0)),
			slog.Duration("duration", time.Since(start)),
			slog.String("client_ip", c.ClientIP()),
		)
	}
}

// recovery turns a handler panic into a logged 500 JSON answer. It lets
// http.ErrAbortHandler through, which net/http uses to drop a connection.
func recovery(logger *slog.Logger) gin.HandlerFunc {
	return func(c *gin.Context) {
		defer func() {
			rec := recover()
			if rec == nil {
				return
			}
			if rec == http.ErrAbortHandler {
				panic(rec)
			}
			logger.ErrorContext(c.Request.Context(), "panic serving request",
				"method", c.Request.Method,
				"path", c.Request.URL.Path,
				"error", fmt.Sprint(rec),
				"stack", string(debug.Stack()))
			if c.Writer.Written() {
				c.Abort()
				return
			}
			c.AbortWithStatusJSON(http.StatusInternalServerError, StatusBody(http.StatusInternalServerError, internalMsg))
		}()
		c.Next()
	}
}
