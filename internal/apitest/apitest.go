// Package apitest holds the test helpers of the REST API's packages
// (webtable and api/…): a store of the test driver, requests against a
// handler, checks of answers and error bodies, and the fuzz targets'
// helpers. It is for tests only.
//
// It imports no handler package, so that a package's own (internal) tests
// may use it; package fullapi mounts the whole API.
package apitest

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gin-gonic/gin"

	"cronsheet/api/httpapi"
	"cronsheet/store"
	"cronsheet/store/mongo"
	"cronsheet/store/mongo/mongotest"
	"cronsheet/store/sqlite"
	"cronsheet/task"
)

// FixedNow is the clock of every test API.
var FixedNow = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Driver is the store driver the handler and browser tests run on:
// CRONSHEET_TEST_DRIVER=mongo runs them on CRONSHEET_TEST_MONGO_URI (.ci/run
// does, after the SQLite run); anything else, SQLite.
func Driver() string {
	if os.Getenv("CRONSHEET_TEST_DRIVER") == "mongo" {
		return "mongo"
	}
	return "sqlite"
}

// MongoPrefix starts the name of every test database of these tests.
const MongoPrefix = "cronsheet_webtable_"

// OpenStore opens an empty store of the test driver, closed (and on
// MongoDB dropped) when t ends.
func OpenStore(t testing.TB) store.Product {
	t.Helper()
	var st store.Product
	if Driver() == "mongo" {
		uri := mongotest.URI(t, "the web table tests on the mongo driver")
		db := mongotest.TempDatabase(t, uri, MongoPrefix)
		cfg := mongo.Config{URI: uri, Database: db}
		if _, ok := t.(*testing.B); ok {
			// FerretDB reads a scenario's every row per page (see
			// docs/FERRETDB.md): at 100k rows a page takes longer than the
			// default call timeout.
			cfg.Timeout = 10 * time.Minute
		}
		s, err := mongo.Open(t.Context(), cfg)
		if err != nil {
			t.Fatalf("open store: %v", err)
		}
		st = s
	} else {
		s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "cronsheet.db"))
		if err != nil {
			t.Fatalf("open store: %v", err)
		}
		st = s
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// SyncBuffer is a bytes.Buffer safe for the logger's concurrent writes.
type SyncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *SyncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *SyncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Do sends one request to h, with a JSON content type; headers come in
// name, value pairs.
func Do(t *testing.T, h http.Handler, method, path, body string, headers ...string) *httptest.ResponseRecorder {
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
	h.ServeHTTP(rec, req)
	return rec
}

// Want checks the status and decodes the body into a T.
func Want[T any](t *testing.T, rec *httptest.ResponseRecorder, status int) T {
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

// ErrBody is the API's error answer.
type ErrBody struct {
	Error string    `json:"error"`
	Code  task.Code `json:"code"`
	Field string    `json:"field"`
}

// WantCode checks an error answer's stable code.
func WantCode(t *testing.T, rec *httptest.ResponseRecorder, code task.Code) {
	t.Helper()
	var got ErrBody
	if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil {
		t.Fatalf("decode %s: %v", rec.Body, err)
	}
	if got.Code != code {
		t.Errorf("code = %q, want %q (error %q)", got.Code, code, got.Error)
	}
}

// WantError checks an error answer's status, field and message.
func WantError(t *testing.T, rec *httptest.ResponseRecorder, status int, field, msgPart string) {
	t.Helper()
	got := Want[ErrBody](t, rec, status)
	if got.Field != field {
		t.Errorf("field = %q, want %q (error %q)", got.Field, field, got.Error)
	}
	if !strings.Contains(got.Error, msgPart) {
		t.Errorf("error = %q, want it to contain %q", got.Error, msgPart)
	}
}

// FuzzContext is a gin context whose request body is body.
func FuzzContext(body []byte) *gin.Context {
	c, _ := gin.CreateTestContext(httptest.NewRecorder())
	c.Request = httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
	return c
}

// CheckClientError fails unless err is a 4xx the API would answer with a
// message (a validation error or an httpapi error below 500).
func CheckClientError(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil {
		return
	}
	status, body := httpapi.Classify(err)
	if status < 400 || status >= 500 || body.Error == "" {
		t.Fatalf("%s: error %v answers %d %+v, want a 4xx with a message", what, err, status, body)
	}
}
