package server

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"cronsheet/config"
	"cronsheet/static"
)

// lockedBuffer is a log sink safe for the node's goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestPagesWithoutAssets starts a node whose pages lack the vendored files
// (as a bare `go build` on a fresh clone makes it: vendor/ holds only its
// README): it logs an ERROR naming them at start-up, every page and asset
// answers 503 with the page saying so, and the API still works.
func TestPagesWithoutAssets(t *testing.T) {
	cfg := config.Default()
	cfg.Listen = "127.0.0.1:0"
	cfg.NodeID = "test-node"
	cfg.Auth = config.AuthLocalDev
	cfg.Store.Path = filepath.Join(t.TempDir(), "cronsheet.db")
	if testDriver() == "mongo" {
		mongoForPath(t, &cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("config: %v", err)
	}
	var logs lockedBuffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	fresh := fstest.MapFS{"vendor/README.md": {Data: []byte("readme")}}
	ctx, cancel := context.WithCancel(context.Background())
	srv, err := New(ctx, cfg, logger, func(s *Server) { s.setMissingAssets(static.Missing(fresh)) })
	if err != nil {
		cancel()
		t.Fatalf("new server: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	})
	base := "http://" + srv.Addr()

	eventually(t, "the start-up error about the assets", func() bool {
		return strings.Contains(logs.String(), "level=ERROR")
	})
	line := ""
	for l := range strings.SplitSeq(logs.String(), "\n") {
		if strings.Contains(l, "level=ERROR") {
			line = l
		}
	}
	if !strings.Contains(line, "make static") || !strings.Contains(line, "vendor/jquery.min.js") {
		t.Errorf("start-up error = %q, want it to name make static and the missing files", line)
	}

	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, p := range []string{"/", "/targets", "/login", "/assets/app.js", "/assets/vendor/jquery.min.js"} {
		code, body := get(p)
		if code != http.StatusServiceUnavailable || !strings.Contains(body, "make build") ||
			!strings.Contains(body, "static/vendor/dataTables.min.js") {
			t.Errorf("GET %s = %d %.200q, want 503 and the page naming the missing files", p, code, body)
		}
	}
	if code, body := get("/healthz"); code != http.StatusOK {
		t.Errorf("GET /healthz = %d %s, want 200: the API works without the pages", code, body)
	}
	if code, body := get("/api/v1/targets"); code != http.StatusOK {
		t.Errorf("GET /api/v1/targets = %d %s, want 200", code, body)
	}
}
