package main

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// hook is the jobs' callback endpoint: it answers 200 to everything and
// records each call's due instant, from its Idempotency-Key (<job id>:<due
// unix ms>:<target>), and when it arrived.
type hook struct {
	url   string
	srv   *http.Server
	mu    sync.Mutex
	seen  []call
	calls atomic.Int64
	first atomic.Int64 // unix nanoseconds of the first call, and of the latest
	last  atomic.Int64
	conns atomic.Int64 // TCP connections accepted
	bad   atomic.Int64 // calls without a readable key
	// onCall, when not nil, is given each call's job id.
	onCall func(jobID string)
}

// startHook listens on a loopback port; expect sizes its record, onCall
// (nil: none) hears each call's job id.
func startHook(expect int, onCall func(jobID string)) (*hook, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	h := &hook{url: "http://" + ln.Addr().String() + "/hook", seen: make([]call, 0, expect), onCall: onCall}
	h.srv = &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ConnState: func(_ net.Conn, s http.ConnState) {
			if s == http.StateNew {
				h.conns.Add(1)
			}
		},
	}
	go func() { _ = h.srv.Serve(ln) }()
	return h, nil
}

func (h *hook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	now := time.Now()
	_, _ = io.Copy(io.Discard, r.Body)
	key := r.Header.Get("Idempotency-Key")
	if parts := strings.SplitN(key, ":", 3); len(parts) < 2 {
		h.bad.Add(1)
	} else if ms, err := strconv.ParseInt(parts[1], 10, 64); err == nil {
		h.mu.Lock()
		h.seen = append(h.seen, call{due: time.UnixMilli(ms), at: now})
		h.mu.Unlock()
		if h.onCall != nil {
			h.onCall(parts[0])
		}
	} else {
		h.bad.Add(1)
	}
	h.first.CompareAndSwap(0, now.UnixNano())
	h.last.Store(now.UnixNano())
	h.calls.Add(1)
	w.WriteHeader(http.StatusOK)
}

func (h *hook) close() { _ = h.srv.Close() }

// dumpGoroutines writes every goroutine's stack, grouped, to path.
func dumpGoroutines(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := pprof.Lookup("goroutine").WriteTo(f, 1); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// call is one callback: the job's due instant and when the call arrived.
type call struct{ due, at time.Time }

// received returns a copy of the callbacks received so far.
func (h *hook) received() []call {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.seen)
}

// callbackLags returns each call's lag: due instant → arrival.
func callbackLags(cs []call) []time.Duration {
	out := make([]time.Duration, len(cs))
	for i, c := range cs {
		out[i] = c.at.Sub(c.due)
	}
	return out
}

// writeCalls writes cs as CSV: due and arrival, in milliseconds after
// first, in due order.
func writeCalls(path string, cs []call, first time.Time) error {
	slices.SortFunc(cs, func(a, b call) int { return a.due.Compare(b.due) })
	var buf bytes.Buffer
	buf.WriteString("due_ms,arrived_ms\n")
	for _, c := range cs {
		fmt.Fprintf(&buf, "%d,%d\n", c.due.Sub(first).Milliseconds(), c.at.Sub(first).Milliseconds())
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}
