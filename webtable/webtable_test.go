package webtable_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"cronsheet/mapping"
	"cronsheet/store"
	"cronsheet/task"
	"cronsheet/webtable"
)

func TestMain(m *testing.M) {
	gin.SetMode(gin.TestMode) // tests only; main sets the mode in production
	os.Exit(m.Run())
}

// fixedNow is the clock of every test API.
var fixedNow = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// testBundle is one API over a fresh SQLite file and the memos scenario.
type testBundle struct {
	router http.Handler
	store  store.Product
	wakes  atomic.Int32
	logs   *syncBuffer
	health atomic.Pointer[error]
}

// syncBuffer is a bytes.Buffer safe for the logger's concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func setup(t *testing.T) *testBundle {
	t.Helper()
	st := openStore(t)
	memos, err := mapping.New(mapping.MemosConfig())
	if err != nil {
		t.Fatalf("memos scenario: %v", err)
	}
	b := &testBundle{store: st, logs: &syncBuffer{}}
	logger := slog.New(slog.NewJSONHandler(b.logs, nil))
	api := webtable.New(webtable.Deps{
		Logger:    logger,
		Store:     st,
		Scenarios: map[string]*mapping.Scenario{"memos": memos},
		Wake:      func() { b.wakes.Add(1) },
		Now:       func() time.Time { return fixedNow },
		Health: func(context.Context) error {
			if p := b.health.Load(); p != nil {
				return *p
			}
			return nil
		},
	})
	r := gin.New()
	r.Use(webtable.Middleware(logger)...)
	api.Register(r)
	b.router = r
	return b
}

// do sends one request; headers come in name, value pairs.
func (b *testBundle) do(t *testing.T, method, path, body string, headers ...string) *httptest.ResponseRecorder {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, path, rd)
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	b.router.ServeHTTP(rec, req)
	return rec
}

// want checks the status and decodes the body into a T.
func want[T any](t *testing.T, rec *httptest.ResponseRecorder, status int) T {
	t.Helper()
	var v T
	if rec.Code != status {
		t.Fatalf("status = %d, want %d; body: %s", rec.Code, status, rec.Body)
	}
	if status == http.StatusNoContent {
		return v
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
		t.Fatalf("decode %s: %v", rec.Body, err)
	}
	return v
}

// errBody is the API's error answer.
type errBody struct {
	Error string    `json:"error"`
	Code  task.Code `json:"code"`
	Field string    `json:"field"`
}

// wantCode checks an error answer's stable code.
func wantCode(t *testing.T, rec *httptest.ResponseRecorder, code task.Code) {
	t.Helper()
	var got errBody
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatalf("decode %s: %v", rec.Body, err)
	}
	if got.Code != code {
		t.Errorf("code = %q, want %q (error %q)", got.Code, code, got.Error)
	}
}

// wantError checks an error answer's status, field and message.
func wantError(t *testing.T, rec *httptest.ResponseRecorder, status int, field, msgPart string) {
	t.Helper()
	got := want[errBody](t, rec, status)
	if got.Field != field {
		t.Errorf("field = %q, want %q (error %q)", got.Field, field, got.Error)
	}
	if !strings.Contains(got.Error, msgPart) {
		t.Errorf("error = %q, want it to contain %q", got.Error, msgPart)
	}
}

func TestHealthz(t *testing.T) {
	t.Parallel()
	b := setup(t)

	got := want[map[string]string](t, b.do(t, http.MethodGet, "/healthz", ""), http.StatusOK)
	if got["status"] != "ok" {
		t.Errorf("status = %q, want ok", got["status"])
	}

	down := errors.New("store unreachable")
	b.health.Store(&down)
	got = want[map[string]string](t, b.do(t, http.MethodGet, "/healthz", ""), http.StatusServiceUnavailable)
	if got["error"] != "store unreachable" {
		t.Errorf("error = %q, want the health error", got["error"])
	}
}

func TestMiddleware(t *testing.T) {
	t.Parallel()
	logs := &syncBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, nil))
	r := gin.New()
	r.Use(webtable.Middleware(logger)...)
	r.GET("/boom", func(*gin.Context) { panic("boom") })
	r.GET("/ok", func(c *gin.Context) { c.String(http.StatusOK, "fine") })

	for _, path := range []string{"/boom", "/ok"} {
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if path == "/boom" {
			wantError(t, rec, http.StatusInternalServerError, "", "internal error")
		} else if rec.Code != http.StatusOK {
			t.Errorf("GET /ok = %d", rec.Code)
		}
	}
	out := logs.String()
	for _, part := range []string{`"msg":"panic serving request"`, `"error":"boom"`, `"stack":`,
		`"msg":"http request"`, `"route":"/boom"`, `"status":500`, `"status":200`} {
		if !strings.Contains(out, part) {
			t.Errorf("logs lack %s:\n%s", part, out)
		}
	}
}

func TestNewWithoutStorePanics(t *testing.T) {
	t.Parallel()
	defer func() {
		if recover() == nil {
			t.Error("New with a nil Store did not panic")
		}
	}()
	webtable.New(webtable.Deps{})
}
