package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Bounds of `cronsheet hook`.
const (
	hookMaxBody      = 1 << 20 // a request body past it is answered 413
	hookShownBody    = 64 << 10
	hookMaxDelay     = time.Hour
	hookMaxMessage   = 1 << 10 // task.MaxFeedbackMessage
	hookPostTimeout  = 10 * time.Second
	hookShutdownWait = 5 * time.Second
)

// hookTokenEnv names the environment variable holding the API token that
// `cronsheet hook` sends with its feedback (Authorization: Bearer).
const hookTokenEnv = "CRONSHEET_HOOK_TOKEN"

// hookTriggerIDRe is what a trigger id taken from a request may look like
// before it goes into the feedback URL.
var hookTriggerIDRe = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,128}$`)

// hookUsage is what `cronsheet hook -h` prints before the flags.
const hookUsage = `cronsheet hook listens as an HTTP target: it prints every request it
receives (method, path, the X-Cronsheet-* headers, Idempotency-Key and the
body) and answers 200. With -feedback it also reports each delivery's
outcome back, after answering, as an asynchronous target does:
POST <feedback-to>/api/v1/runs/<X-Cronsheet-Trigger-Id>/feedback. Deliveries
carry no callback address, so -feedback-to names the node to report to; the
API token, when the node requires one, is read from $` + hookTokenEnv + `.

Usage:
  cronsheet hook [-listen :9000] [-feedback done|dead] [-feedback-to http://127.0.0.1:8080]
                 [-message text] [-delay 0s]

Flags:
`

// hookConfig is the parsed command line of `cronsheet hook`.
type hookConfig struct {
	listen   string
	feedback string // "", "done" or "dead"
	to       *url.URL
	message  string
	delay    time.Duration
	token    string
}

// hookCmd runs `cronsheet hook` until SIGINT or SIGTERM and returns the
// exit code.
func hookCmd(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return runHook(ctx, args, os.Getenv, os.Stdout, os.Stderr)
}

// runHook is hookCmd with its context, environment and output given: it
// prints "cronsheet hook: listening on ADDR" once it listens, then one
// block per request, on stdout; usage errors go to stderr (exit 2).
func runHook(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) int {
	cfg, code := parseHook(args, getenv, stderr)
	if cfg == nil {
		return code
	}
	ln, err := net.Listen("tcp", cfg.listen)
	if err != nil {
		fmt.Fprintf(stderr, "cronsheet hook: -listen %s: %v\n", cfg.listen, err)
		return 1
	}
	h := &hookServer{cfg: cfg, out: stdout, client: &http.Client{Timeout: hookPostTimeout}}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
	h.printf("cronsheet hook: listening on %s\n", ln.Addr())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case <-ctx.Done():
	case err = <-served:
		fmt.Fprintf(stderr, "cronsheet hook: serve: %v\n", err)
		return 1
	}
	sctx, cancel := context.WithTimeout(context.Background(), hookShutdownWait)
	defer cancel()
	_ = srv.Shutdown(sctx)
	h.reports.Wait() // the reports under way are sent (each bounded by its timeout)
	return 0
}

// parseHook reads the flags; nil and the exit code when they are wrong or
// -h was asked for.
func parseHook(args []string, getenv func(string) string, stderr io.Writer) (*hookConfig, int) {
	fs := flag.NewFlagSet("cronsheet hook", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), hookUsage)
		fs.PrintDefaults()
	}
	listen := fs.String("listen", ":9000", "address to listen on (host:port)")
	feedback := fs.String("feedback", "", "report each delivery's outcome: done (status 0) or dead (status 1); empty reports nothing")
	to := fs.String("feedback-to", "http://127.0.0.1:8080", "base URL of the cronsheet node the feedback goes to")
	message := fs.String("message", "reported by cronsheet hook", "message of the feedback")
	delay := fs.Duration("delay", 0, "wait this long after answering before reporting (at most 1h)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, 0
		}
		return nil, 2
	}
	bad := func(format string, a ...any) (*hookConfig, int) {
		fmt.Fprintf(stderr, "cronsheet hook: "+format+"\n", a...)
		return nil, 2
	}
	if fs.NArg() > 0 {
		return bad("unexpected argument %q (see cronsheet hook -h)", fs.Arg(0))
	}
	if _, _, err := net.SplitHostPort(*listen); err != nil {
		return bad("-listen %q: not host:port", *listen)
	}
	if !slices.Contains([]string{"", "done", "dead"}, *feedback) {
		return bad("-feedback %q: must be done, dead or empty", *feedback)
	}
	u, err := url.Parse(*to)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
		return bad("-feedback-to %q: must be an http or https URL with a host and no query", *to)
	}
	if len(*message) > hookMaxMessage {
		return bad("-message: at most %d bytes", hookMaxMessage)
	}
	if *delay < 0 || *delay > hookMaxDelay {
		return bad("-delay %s: must be from 0 to %s", *delay, hookMaxDelay)
	}
	return &hookConfig{listen: *listen, feedback: *feedback, to: u, message: *message, delay: *delay,
		token: strings.TrimSpace(getenv(hookTokenEnv))}, 0
}

// hookServer answers and prints the requests of `cronsheet hook`.
type hookServer struct {
	cfg     *hookConfig
	client  *http.Client
	reports sync.WaitGroup

	mu  sync.Mutex // one block of output at a time
	out io.Writer
}

func (h *hookServer) printf(format string, a ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	fmt.Fprintf(h.out, format, a...)
}

// ServeHTTP prints the request and answers 200 (413 for a body past
// hookMaxBody), then, with -feedback, reports on the delivery.
func (h *hookServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, hookMaxBody))
	var b strings.Builder
	fmt.Fprintf(&b, "--- %s %s from %s\n", r.Method, r.URL.RequestURI(), r.RemoteAddr)
	names := make([]string, 0, len(r.Header))
	for name := range r.Header {
		if strings.HasPrefix(name, "X-Cronsheet-") || name == "Idempotency-Key" || name == "Content-Type" {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		for _, v := range r.Header.Values(name) {
			fmt.Fprintf(&b, "%s: %s\n", name, v)
		}
	}
	if err != nil {
		fmt.Fprintf(&b, "body: refused, over %d bytes\n", hookMaxBody)
		h.printf("%s", b.String())
		http.Error(w, fmt.Sprintf("body: at most %d bytes", hookMaxBody), http.StatusRequestEntityTooLarge)
		return
	}
	switch {
	case len(body) == 0:
		b.WriteString("body: empty\n")
	case len(body) > hookShownBody:
		fmt.Fprintf(&b, "body (%d bytes, the first %d shown):\n%s\n", len(body), hookShownBody, body[:hookShownBody])
	default:
		fmt.Fprintf(&b, "body (%d bytes):\n%s\n", len(body), body)
	}
	id := r.Header.Get("X-Cronsheet-Trigger-Id")
	report := h.cfg.feedback != ""
	switch {
	case report && id == "":
		b.WriteString("feedback: none sent, the request has no X-Cronsheet-Trigger-Id\n")
		report = false
	case report && !hookTriggerIDRe.MatchString(id):
		fmt.Fprintf(&b, "feedback: none sent, X-Cronsheet-Trigger-Id %q is not a trigger id\n", id)
		report = false
	}
	h.printf("%s", b.String())
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, "ok\n")
	if report {
		h.reports.Go(func() { h.report(id) })
	}
}

// report posts the configured outcome of run id to the node, after
// -delay, and prints how it went.
func (h *hookServer) report(id string) {
	time.Sleep(h.cfg.delay)
	status := 0
	if h.cfg.feedback == "dead" {
		status = 1
	}
	doc, _ := json.Marshal(map[string]any{"status": status, "message": h.cfg.message})
	u := h.cfg.to.JoinPath("api", "v1", "runs", id, "feedback")
	ctx, cancel := context.WithTimeout(context.Background(), hookPostTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(doc))
	if err != nil {
		h.printf("feedback %s: %v\n", id, err)
		return
	}
	req.Header.Set("Content-Type", "application/json")
	if h.cfg.token != "" {
		req.Header.Set("Authorization", "Bearer "+h.cfg.token)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		h.printf("feedback %s: %s to %s failed: %v\n", id, h.cfg.feedback, u, err)
		return
	}
	defer resp.Body.Close()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode != http.StatusOK {
		h.printf("feedback %s: %s refused: %s %s\n", id, h.cfg.feedback, resp.Status, bytes.TrimSpace(answer))
		return
	}
	h.printf("feedback %s: %s, answered %s\n", id, h.cfg.feedback, resp.Status)
}
