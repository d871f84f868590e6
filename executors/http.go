package executors

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"cronsheet/task"
)

// Headers every HTTP callback carries.
const (
	// HeaderIdempotencyKey carries Delivery.LedgerKey,
	// <task_id>:<slot unix ms>:<target>: the same for every attempt of a
	// run, so a receiver can drop repeats.
	HeaderIdempotencyKey = "Idempotency-Key"
	// UserAgent is the User-Agent of HTTP callbacks.
	UserAgent = "cronsheet"
)

const (
	// maxResponseBody bounds how much of a response body is read; the rest
	// is discarded with the connection.
	maxResponseBody = 64 << 10
	// maxRetryAfter caps a server's Retry-After.
	maxRetryAfter = 24 * time.Hour
)

// HTTPConfig configures an HTTP executor: which hosts callbacks may reach
// (see HostGuard for the rule order).
type HTTPConfig struct {
	// Allow lists CIDRs, IPs, host names and ".domain" entries that callbacks
	// may reach even when the default rules refuse them (loopback, private,
	// link-local, …). Default: none.
	Allow []string
	// Deny lists entries refused even when public. Allow wins over Deny.
	// Default: none.
	Deny []string
}

// HTTP calls the HTTP endpoint of a target (task.HTTPTarget). It has its own
// http.Client and Transport: no proxy from the environment, no redirects
// followed, and a dialer that checks every address it connects to with the
// HostGuard, so DNS cannot rebind a callback onto a refused address.
type HTTP struct {
	logger    *slog.Logger
	guard     atomic.Pointer[HostGuard] // SetGuard swaps it
	transport *http.Transport
	client    *http.Client
}

// NewHTTP validates cfg and returns an HTTP executor. logger may be nil. Call
// Close when done with it.
func NewHTTP(logger *slog.Logger, cfg HTTPConfig) (*HTTP, error) {
	guard, err := NewHostGuard(cfg.Allow, cfg.Deny)
	if err != nil {
		return nil, fmt.Errorf("http config: %w", err)
	}
	h := &HTTP{logger: componentLogger(logger, "executors.http")}
	h.guard.Store(guard)
	h.transport = &http.Transport{
		Proxy:             nil, // a proxy would dial on our behalf, past the guard
		DialContext:       h.dialContext,
		ForceAttemptHTTP2: true,
		// As many idle connections per host as calls may be in flight at
		// once (fire.workers' default, 256), so a busy callback host
		// reuses its connections instead of opening one per call: each
		// call past the idle limit closes its connection when done, and
		// the next call opens another (docs/BENCHMARKS.md, "Jobs API").
		MaxIdleConns:           1024,
		MaxIdleConnsPerHost:    256,
		IdleConnTimeout:        90 * time.Second,
		TLSHandshakeTimeout:    10 * time.Second,
		ExpectContinueTimeout:  time.Second,
		MaxResponseHeaderBytes: 64 << 10,
	}
	h.client = &http.Client{
		Transport: h.transport,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
	return h, nil
}

// Guard returns the executor's HostGuard, to check a target's URL host when
// the target is saved.
func (h *HTTP) Guard() *HostGuard { return h.guard.Load() }

// SetGuard replaces the executor's allow and deny lists without a restart:
// calls already sent go on; every later check and dial uses the new
// lists, and idle connections are closed so that none opened under the
// old lists is reused. An error (an entry that does not parse) changes
// nothing.
func (h *HTTP) SetGuard(allow, deny []string) error {
	g, err := NewHostGuard(allow, deny)
	if err != nil {
		return err
	}
	h.guard.Store(g)
	h.transport.CloseIdleConnections()
	return nil
}

// Close closes idle connections. The executor stays usable.
func (h *HTTP) Close() { h.transport.CloseIdleConnections() }

// dialContext dials addr, refusing each address the guard refuses. The check
// runs in the dialer's Control hook, after DNS, on the very address the
// socket connects to.
func (h *HTTP) dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	name := host
	if _, err := netip.ParseAddr(host); err == nil {
		name = ""
	}
	d := net.Dialer{
		Timeout:   30 * time.Second,
		KeepAlive: 30 * time.Second,
		Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("parse dialed address %q: %w", address, err)
			}
			return h.guard.Load().check(name, ap.Addr())
		},
	}
	return d.DialContext(ctx, network, addr)
}

// Execute sends one request to d.Target.HTTP. A 2xx answer is success, with
// output "HTTP <code>: <body>". Redirects (not followed), other 4xx answers,
// a refused host and template errors are task.Permanent; 408, 429 and 5xx
// honour Retry-After with task.RetryAfter (429 without one waits
// DefaultRetryAfter); timeouts and connection errors are retryable.
func (h *HTTP) Execute(ctx context.Context, d task.Delivery) (string, error) {
	if d.Target == nil || d.Target.HTTP == nil {
		return "", task.Permanent(fmt.Errorf("http delivery without an http target: %w", task.ErrInvalid))
	}
	t := d.Target.HTTP
	timeout := time.Duration(cmp.Or(t.Timeout, task.DefaultHTTPTimeoutS)) * time.Second
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	req, err := h.newRequest(ctx, d, t)
	if err != nil {
		return "", task.Permanent(err)
	}
	where := redactURL(req.URL)
	resp, err := h.client.Do(req)
	if err != nil {
		return "", classifyTransport(ctx, req.Method, where, err)
	}
	defer resp.Body.Close()
	body, readErr := io.ReadAll(io.LimitReader(resp.Body, maxResponseBody))
	out, err := classifyStatus(req.Method, where, resp, body, time.Now())
	if err != nil {
		return "", err
	}
	h.logger.DebugContext(ctx, "http callback done", "task_id", d.TaskID,
		"trigger_id", d.TriggerID, "attempt", d.Attempt, "url", where,
		"status", resp.StatusCode, "read_error", readErr)
	return out, nil
}

// newRequest builds the request of target t for d. Its errors are permanent:
// the same delivery would fail the same way again.
func (h *HTTP) newRequest(ctx context.Context, d task.Delivery, t *task.HTTPTarget) (*http.Request, error) {
	vars := d.Vars()
	if t.Raw {
		vars = nil // no templates: URL and body go as they are
	}
	u, err := h.expandURL(t.URL, vars)
	if err != nil {
		return nil, err
	}
	var (
		body        []byte
		contentType string
	)
	switch t.Method {
	case http.MethodGet:
		if t.Body != "" {
			return nil, fmt.Errorf("http target: a GET has no body: %w", task.ErrInvalid)
		}
		if !t.Raw {
			addQuery(u, d.Params, task.Placeholders(t.URL))
		}
	case http.MethodPost:
		body, contentType, err = postBody(d, t, vars)
		if err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("http target: method %q, want GET or POST: %w", t.Method, task.ErrInvalid)
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, t.Method, u.String(), rd)
	if err != nil {
		return nil, fmt.Errorf("http request: %w", err)
	}
	// net/http re-sends a request that carries an Idempotency-Key by
	// itself when a connection breaks, invisibly; without GetBody it
	// cannot, and a failed attempt is retried (and counted) by the firer.
	req.GetBody = nil
	if err := setHeaders(req.Header, t.Headers, vars); err != nil {
		return nil, err
	}
	if contentType != "" && req.Header.Get("Content-Type") == "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set(HeaderTriggerID, d.TriggerID)
	req.Header.Set(HeaderIdempotencyKey, d.LedgerKey())
	if d.Node != "" {
		req.Header.Set(HeaderNode, d.Node)
		req.Header.Set(HeaderInstance, d.Instance)
	}
	req.Header.Set("User-Agent", UserAgent)
	return req, nil
}

// expandURL expands the URL template (nil vars: the URL is taken as it is)
// and checks the result's scheme and host (the host with the guard's
// DNS-free check).
func (h *HTTP) expandURL(tmpl string, vars map[string]string) (*url.URL, error) {
	raw := tmpl
	if vars != nil {
		var err error
		if raw, err = task.ExpandEscaped(tmpl, vars, escapeURLValue); err != nil {
			return nil, fmt.Errorf("http url template: %w", err)
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("http url: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("http url %q: want http(s)://host/…: %w", redactURL(u), task.ErrInvalid)
	}
	if err := h.guard.Load().Check(u.Hostname()); err != nil {
		return nil, err
	}
	return u, nil
}

// escapeURLValue escapes a value expanded into a URL template for where it
// stands, told by the template's literal text before it: after a '#' it is
// fragment text, after a '?' a query key or value (so '&', '=', '#' and
// '+' stay data), else part of a path segment (so '/', '?' and '#' stay
// data). Non-ASCII text is percent-encoded as UTF-8 everywhere.
func escapeURLValue(literal, value string) string {
	switch {
	case strings.Contains(literal, "#"):
		return url.PathEscape(value)
	case strings.Contains(literal, "?"):
		return url.QueryEscape(value)
	}
	return url.PathEscape(value)
}

// addQuery appends params to u's query, keys sorted, except those the URL
// template placed already: a key of u's query, or a param named by one of
// the template's placeholders.
func addQuery(u *url.URL, params map[string]string, placed []string) {
	have := u.Query()
	q := make(url.Values, len(params))
	for k, v := range params {
		if have.Has(k) || slices.Contains(placed, k) {
			continue
		}
		q.Set(k, v)
	}
	if len(q) == 0 {
		return
	}
	if u.RawQuery != "" {
		u.RawQuery += "&"
	}
	u.RawQuery += q.Encode()
}

// postBody returns the body of a POST and its default content type: the
// delivery's JSON document without a template, else the expanded template
// (as it is with nil vars; application/json when it is valid JSON, else
// text/plain). Values are escaped for the body's kind (bodyKind): JSON
// string escaping in a JSON body, form encoding in a form, so a value never
// adds fields or breaks the body.
func postBody(d task.Delivery, t *task.HTTPTarget, vars map[string]string) ([]byte, string, error) {
	tmpl := t.Body
	if tmpl == "" {
		return d.Document(), "application/json", nil
	}
	s, err := tmpl, error(nil)
	if vars != nil {
		s, err = task.ExpandEscaped(tmpl, vars, bodyEscaper(bodyKind(tmpl, t.Headers)))
	}
	if err != nil {
		return nil, "", fmt.Errorf("http body template: %w", err)
	}
	if json.Valid([]byte(s)) {
		return []byte(s), "application/json", nil
	}
	return []byte(s), "text/plain; charset=utf-8", nil
}

// setHeaders expands the target's header templates into hdr.
func setHeaders(hdr http.Header, tmpls, vars map[string]string) error {
	for k, tmpl := range tmpls {
		if !validHeaderName(k) {
			return fmt.Errorf("http header name %q: %w", k, task.ErrInvalid)
		}
		v, err := expandUnlessRaw(tmpl, vars)
		if err != nil {
			return fmt.Errorf("http header %s template: %w", k, err)
		}
		if strings.ContainsAny(v, "\r\n\x00") {
			return fmt.Errorf("http header %s: expanded value has a line break or NUL: %w", k, task.ErrInvalid)
		}
		hdr.Set(k, v)
	}
	return nil
}

// validHeaderName reports whether k is an RFC 9110 token.
func validHeaderName(k string) bool {
	if k == "" {
		return false
	}
	for _, c := range []byte(k) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
			strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
		if !ok {
			return false
		}
	}
	return true
}

// classifyTransport turns a failed round trip into the executor's error: a
// host the guard refused at dial time is permanent, anything else
// (timeouts, refused connections, TLS failures) is retryable.
func classifyTransport(ctx context.Context, method, where string, err error) error {
	var refused *HostRefusedError
	if errors.As(err, &refused) {
		return task.Permanent(fmt.Errorf("http %s %s: %w", method, where, refused))
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err // its message repeats the full URL, query included
	}
	if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
		err = fmt.Errorf("%w: %w", ctxErr, err)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("http %s %s: timed out: %w", method, where, err)
	}
	return fmt.Errorf("http %s %s: %w", method, where, err)
}

// HTTPStatusError is a non-2xx answer of an HTTP callback.
type HTTPStatusError struct {
	// Method and URL (without query or user info) of the request.
	Method, URL string
	// Code is the HTTP status code.
	Code int
	// Body is the start of the response body, capped at task.MaxOutput.
	Body string
	// Location is the Location header of a 3xx answer.
	Location string
}

// Error implements error.
func (e *HTTPStatusError) Error() string {
	msg := fmt.Sprintf("http %s %s: HTTP %d %s", e.Method, e.URL, e.Code, http.StatusText(e.Code))
	if e.Location != "" {
		msg += fmt.Sprintf(", redirect to %s not followed", e.Location)
	}
	if e.Body != "" {
		msg += ": " + e.Body
	}
	return msg
}

// classifyStatus decides the outcome of an answer with status resp.StatusCode
// and (the start of) its body.
func classifyStatus(method, where string, resp *http.Response, body []byte, now time.Time) (string, error) {
	code := resp.StatusCode
	if code >= 200 && code <= 299 {
		if len(body) == 0 {
			return fmt.Sprintf("HTTP %d", code), nil
		}
		return clip(append([]byte(fmt.Sprintf("HTTP %d: ", code)), body...), task.MaxOutput), nil
	}
	err := &HTTPStatusError{Method: method, URL: where, Code: code, Body: clip(body, task.MaxOutput)}
	delay, hasDelay := parseRetryAfterHeader(resp.Header.Get("Retry-After"), now)
	switch {
	case code >= 300 && code <= 399:
		err.Location = task.Truncate(resp.Header.Get("Location"), task.MaxURL)
		return "", task.Permanent(err)
	case code == http.StatusTooManyRequests && !hasDelay:
		return "", task.RetryAfter(err, DefaultRetryAfter)
	case hasDelay && (code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500):
		return "", task.RetryAfter(err, delay)
	case code == http.StatusRequestTimeout:
		return "", err
	case code >= 400 && code <= 499:
		return "", task.Permanent(err)
	}
	return "", err // 5xx and anything unexpected: retry with backoff
}

// parseRetryAfterHeader reads a Retry-After value, in seconds or an HTTP
// date, capped at maxRetryAfter. ok is false when v is empty or malformed.
func parseRetryAfterHeader(v string, now time.Time) (d time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		return time.Duration(min(secs, int64(maxRetryAfter/time.Second))) * time.Second, true
	}
	if at, err := http.ParseTime(v); err == nil {
		return min(max(at.Sub(now), 0), maxRetryAfter), true
	}
	return 0, false
}

// redactURL returns u without user info, query and fragment, for messages.
func redactURL(u *url.URL) string {
	r := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}
	return r.String()
}

var _ Executor = (*HTTP)(nil)

// expandUnlessRaw expands tmpl with vars, or returns it as it is when vars
// is nil (a raw target: its text is the caller's, braces included).
func expandUnlessRaw(tmpl string, vars map[string]string) (string, error) {
	if vars == nil {
		return tmpl, nil
	}
	return task.Expand(tmpl, vars)
}
