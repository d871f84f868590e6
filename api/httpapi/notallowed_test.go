package httpapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/gin-gonic/gin"

	"cronsheet/task"
)

// TestMethodNotAllowed: a known path asked with a method it has no route
// for answers 405 with Allow listing its methods (a JSON error body under
// /api/ and at /healthz); an unknown path stays a 404.
func TestMethodNotAllowed(t *testing.T) {
	gin.SetMode(gin.TestMode)
	r := gin.New()
	RegisterNotFound(r)
	RegisterMethodNotAllowed(r)
	ok := func(c *gin.Context) { c.Status(http.StatusNoContent) }
	r.GET("/api/v1/things/:id", ok)
	r.DELETE("/api/v1/things/:id", ok)
	r.GET("/page", ok)
	r.GET("/healthz", ok)

	do := func(method, path string) *httptest.ResponseRecorder {
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, httptest.NewRequest(method, path, nil))
		return rec
	}
	rec := do(http.MethodPost, "/api/v1/things/x")
	if rec.Code != http.StatusMethodNotAllowed {
		t.Fatalf("POST known API path = %d, want 405", rec.Code)
	}
	if allow := rec.Header().Get("Allow"); allow != "GET, DELETE" && allow != "DELETE, GET" {
		t.Errorf("Allow = %q, want GET and DELETE", allow)
	}
	var body ErrorBody
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || body.Code != task.CodeMethodNotAllowed {
		t.Errorf("body = %s (%v), want the JSON error body, code method_not_allowed", rec.Body, err)
	}
	if rec := do(http.MethodPut, "/page"); rec.Code != http.StatusMethodNotAllowed || rec.Header().Get("Allow") != "GET" {
		t.Errorf("PUT /page = %d Allow %q, want 405 Allow GET", rec.Code, rec.Header().Get("Allow"))
	}
	rec = do(http.MethodPost, "/healthz")
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != http.StatusMethodNotAllowed ||
		body.Code != task.CodeMethodNotAllowed || rec.Header().Get("Allow") != "GET" {
		t.Errorf("POST /healthz = %d %s (%v), want 405 Allow GET with the JSON error body", rec.Code, rec.Body, err)
	}
	if rec := do(http.MethodPost, "/api/v1/nothing"); rec.Code != http.StatusNotFound {
		t.Errorf("POST unknown API path = %d, want 404", rec.Code)
	}
	if rec := do(http.MethodGet, "/no-page"); rec.Code != http.StatusNotFound {
		t.Errorf("GET unknown page = %d, want 404", rec.Code)
	}
	if rec := do(http.MethodGet, "/api/v1/things/x"); rec.Code != http.StatusNoContent {
		t.Errorf("GET known path = %d, want its handler's 204", rec.Code)
	}
}
