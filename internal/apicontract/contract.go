// Package apicontract holds the API's contract to tests: the OpenAPI
// document of package docsapi, loaded and validated by kin-openapi, and a
// handler wrapper that checks every request and answer passing through a
// test node against it.
//
// The rule for a request/answer pair: the answer must be one the document
// describes for that route and status (always), and a request the document
// calls invalid must have been refused (a 4xx): tests send bad input on
// purpose, and the server must refuse at least what the document refuses.
package apicontract

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"cronsheet/api/docsapi"
)

// Load reads and validates the document (OpenAPI 3.1, JSON Schema 2020-12).
func Load(ctx context.Context) (*openapi3.T, error) {
	loader := openapi3.NewLoader()
	loader.Context = ctx
	doc, err := loader.LoadFromData(docsapi.YAML())
	if err != nil {
		return nil, fmt.Errorf("load openapi.yaml: %w", err)
	}
	if err := doc.Validate(ctx); err != nil {
		return nil, fmt.Errorf("openapi.yaml is not a valid OpenAPI document: %w", err)
	}
	return doc, nil
}

// Checker validates traffic against the document and keeps what broke it.
type Checker struct {
	router routers.Router
	opts   *openapi3filter.Options

	pending  sync.WaitGroup // checks under way
	mu       sync.Mutex
	problems []string
	checked  int
}

// New loads the document and makes its router.
func New(ctx context.Context) (*Checker, error) {
	doc, err := Load(ctx)
	if err != nil {
		return nil, err
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("route the document: %w", err)
	}
	// Who may call is the guard's business, tested on its own; here the
	// security requirements are only described.
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, IncludeResponseStatus: true}
	return &Checker{router: router, opts: opts}, nil
}

// Problems waits for the checks under way and returns every mismatch
// seen, one sentence each.
func (c *Checker) Problems() []string {
	c.pending.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.problems...)
}

// Checked waits for the checks under way and returns how many
// request/answer pairs were validated.
func (c *Checker) Checked() int {
	c.pending.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.checked
}

func (c *Checker) report(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.problems = append(c.problems, fmt.Sprintf(format, args...))
}

// Wrap returns next with every request and its answer checked. WebSocket
// upgrades, HEAD requests and paths the document does not route (a 404
// or 405 the router answers for any path) pass unchecked.
func (c *Checker) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		route, params, err := c.router.FindRoute(r)
		if err != nil || r.Method == http.MethodHead || strings.EqualFold(r.Header.Get("Upgrade"), "websocket") {
			next.ServeHTTP(w, r)
			return
		}
		// The body is kept as the handler reads it, so that size limits
		// and Expect: 100-continue work as without the check.
		var body bytes.Buffer
		r.Body = struct {
			io.Reader
			io.Closer
		}{io.TeeReader(r.Body, &body), r.Body}
		rec := &recorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		// The check runs after the answer is complete, so that it adds no
		// time to what the client sees; Problems waits for it.
		req, header := r.Clone(context.Background()), rec.Header().Clone()
		c.pending.Add(1)
		go func() {
			defer c.pending.Done()
			c.check(req, body.Bytes(), route, params, rec.status, header, rec.body.Bytes())
		}()
	})
}

// check validates one pair: req with the body the handler read, and the
// answer's status, header and body.
func (c *Checker) check(req *http.Request, body []byte, route *routers.Route, params map[string]string,
	status int, header http.Header, answer []byte) {
	ctx := context.Background()
	req.Body = io.NopCloser(bytes.NewReader(body))
	in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route, Options: c.opts}
	name := req.Method + " " + req.URL.RequestURI()
	if err := openapi3filter.ValidateRequest(ctx, in); err != nil && (status < 400 || status >= 500) {
		c.report("%s: the document refuses the request but the server answered %d: %v", name, status, short(err))
	}
	in.Request.Body = io.NopCloser(bytes.NewReader(body))
	out := &openapi3filter.ResponseValidationInput{RequestValidationInput: in, Status: status,
		Header: header, Body: io.NopCloser(bytes.NewReader(answer)), Options: c.opts}
	c.mu.Lock()
	c.checked++
	c.mu.Unlock()
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		c.report("%s: answer %d %s does not match the document: %v", name, status, cut(string(answer), 300), short(err))
	}
}

// short keeps an error's first lines: kin-openapi appends the schema and
// the value, which can be long.
func short(err error) string {
	var re *openapi3filter.ResponseError
	if errors.As(err, &re) && re.Err != nil {
		err = re.Err
	}
	return cut(err.Error(), 600)
}

func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// recorder passes the answer on and keeps a copy.
type recorder struct {
	http.ResponseWriter
	status int
	wrote  bool
	body   bytes.Buffer
}

func (r *recorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	r.wrote = true
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}

// Flush passes a flush on (long-polling answers flush).
func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Hijack passes a hijack on.
func (r *recorder) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h, ok := r.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("the writer cannot be hijacked")
	}
	return h.Hijack()
}

// Unwrap lets http.ResponseController reach the writer.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// The document describes pages (HTML) and JSON lines too; kin-openapi has
// no decoder for them, and they are checked for their status only.
func init() {
	openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.PlainBodyDecoder)
	openapi3filter.RegisterBodyDecoder("application/x-ndjson", openapi3filter.PlainBodyDecoder)
}
