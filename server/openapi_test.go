package server

import (
	"context"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"cronsheet/internal/apicontract"
)

// checkContract makes srv's handler check every request and answer
// against the OpenAPI document (internal/apicontract), and reports the
// mismatches when the test ends, after the node has stopped. Call it
// before the node runs. Every test that starts a node through setup has
// its traffic checked so.
func checkContract(t *testing.T, srv *Server) {
	t.Helper()
	c, err := apicontract.New(context.Background())
	if err != nil {
		t.Fatalf("the API document: %v", err)
	}
	srv.http.Handler = c.Wrap(srv.http.Handler)
	t.Cleanup(func() {
		for _, p := range c.Problems() {
			t.Errorf("API contract: %s", p)
		}
	})
}

// ginParam turns gin's :name and *name into OpenAPI's {name}.
var ginParam = regexp.MustCompile(`[:*]([A-Za-z0-9_]+)`)

// TestOpenAPIDocumentsEveryRoute checks the document against the router:
// every route the node serves is documented with its method, and every
// documented operation is a route the node serves.
func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	b := setup(t, nil)
	engine, ok := b.engine.(*gin.Engine)
	if !ok {
		t.Fatalf("the handler is %T, not the gin engine", b.engine)
	}
	var served []string
	for _, r := range engine.Routes() {
		served = append(served, r.Method+" "+ginParam.ReplaceAllString(r.Path, "{$1}"))
	}
	doc, err := apicontract.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			documented = append(documented, method+" "+path)
		}
	}
	slices.Sort(served)
	slices.Sort(documented)
	for _, r := range served {
		if !slices.Contains(documented, r) {
			t.Errorf("route %s is not in api/docsapi/openapi.yaml", r)
		}
	}
	for _, d := range documented {
		if !slices.Contains(served, d) {
			t.Errorf("openapi.yaml documents %s, which the server does not route", d)
		}
	}
	if !slices.Contains(served, "POST /api/v1/jobs") {
		t.Errorf("the routes read lack POST /api/v1/jobs: %s", strings.Join(served, ", "))
	}
}

// TestOpenAPIServed checks GET /api/v1/openapi.json answers the document
// as JSON, version 3.1, and /api/docs the page that renders it.
func TestOpenAPIServed(t *testing.T) {
	b := setup(t, nil)
	var doc struct {
		OpenAPI string         `json:"openapi"`
		Paths   map[string]any `json:"paths"`
	}
	if code := b.call(t, http.MethodGet, "/api/v1/openapi.json", nil, &doc); code != http.StatusOK {
		t.Fatalf("GET /api/v1/openapi.json: %d", code)
	}
	if doc.OpenAPI != "3.1.0" || doc.Paths["/api/v1/jobs"] == nil {
		t.Fatalf("document: openapi %q, %d paths", doc.OpenAPI, len(doc.Paths))
	}
	resp, err := http.Get(b.base + "/api/docs")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET /api/docs: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}
