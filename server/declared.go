package server

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"cronsheet/api/authapi"
	"cronsheet/api/httpapi"
	"cronsheet/declared"
	"cronsheet/task"
)

// DeclaredUser names the principal that applies config key declared at
// start, in the audit trail.
const DeclaredUser = "declared-file"

// declaredTimeout bounds the apply at start.
const declaredTimeout = 5 * time.Minute

// loadDeclared reads and checks the file of config key declared; a file
// that does not parse stops the start.
func (s *Server) loadDeclared() error {
	if s.cfg.Declared == "" {
		return nil
	}
	f, err := declared.Load(s.cfg.Declared)
	if err == nil {
		err = f.Check()
	}
	if err != nil {
		return fmt.Errorf("declared: %w", err)
	}
	s.declared = f
	return nil
}

// applyDeclared makes the declared file's objects exist as written,
// through the node's own HTTP handler (every API rule applies: validation,
// audit, If-Match, write-only secrets) before the node serves. Each line
// of the plan is logged. A refusal is planned and tried once more (nodes
// starting together race to create the same objects: the second plan
// finds them), then logged, and the node serves anyway so the objects can
// be fixed through the API.
func (s *Server) applyDeclared(ctx context.Context) {
	if s.declared == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, declaredTimeout)
	defer cancel()
	p := &httpapi.Principal{User: DeclaredUser, Role: task.RoleAdmin, Via: "config"}
	c := &declared.Client{Base: "http://localhost", HTTP: &http.Client{Transport: handlerTransport{h: s.http.Handler, p: p}}}
	log := s.logger.With("component", "declared", "file", s.cfg.Declared, "set", s.declared.Name)
	var err error
	for attempt := range 2 {
		if err = s.applyOnce(ctx, c, log); err == nil {
			return
		}
		if attempt == 0 {
			log.WarnContext(ctx, "declared file refused; planning again", "error", err)
		}
	}
	log.ErrorContext(ctx, "declared file not applied in full; the node serves anyway", "error", err)
}

// applyOnce plans the declared file, logs the plan and applies it.
func (s *Server) applyOnce(ctx context.Context, c *declared.Client, log *slog.Logger) error {
	plan, err := declared.Compute(ctx, c, s.declared, false)
	if err != nil {
		return err
	}
	for _, ch := range plan.Changes {
		log.InfoContext(ctx, "declared plan", "change", ch.String())
	}
	if err := plan.Apply(ctx, c, nil); err != nil {
		return err
	}
	log.InfoContext(ctx, "declared file applied", "created", plan.Count(declared.Create),
		"updated", plan.Count(declared.Update), "unchanged", plan.Count(declared.Unchanged))
	return nil
}

// handlerTransport answers a request by calling h in this process, as
// principal p.
type handlerTransport struct {
	h http.Handler
	p *httpapi.Principal
}

// RoundTrip implements http.RoundTripper.
func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	in := r.Clone(authapi.InProcess(r.Context(), t.p))
	if in.Body == nil {
		in.Body = http.NoBody
	}
	in.RemoteAddr = "127.0.0.1:0"
	in.RequestURI = r.URL.RequestURI()
	rec := &recorder{header: http.Header{}}
	t.h.ServeHTTP(rec, in)
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return &http.Response{StatusCode: rec.status, Status: strconv.Itoa(rec.status) + " " + http.StatusText(rec.status),
		Header: rec.header, Body: io.NopCloser(&rec.body), ContentLength: int64(rec.body.Len()), Request: r,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1}, nil
}

// recorder is the http.ResponseWriter of handlerTransport.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (w *recorder) Header() http.Header { return w.header }

func (w *recorder) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

func (w *recorder) Write(b []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.body.Write(b)
}
