// Package docsapi serves the API's contract: the OpenAPI 3.1 document
// (openapi.yaml, written by hand beside this file and embedded) as JSON at
// GET /api/v1/openapi.json. The page that renders it, /api/docs, is one of
// the web pages (package webtable, static/apidocs.html).
package docsapi

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/gin-gonic/gin"
	"go.yaml.in/yaml/v3"
)

// spec is the document as written: YAML, so that it can hold comments and
// stay short; JSON returns it converted.
//
//go:embed openapi.yaml
var spec []byte

// YAML returns the document as written.
func YAML() []byte { return spec }

// JSON returns the document converted to JSON.
func JSON() ([]byte, error) {
	var doc any
	if err := yaml.Unmarshal(spec, &doc); err != nil {
		return nil, fmt.Errorf("read openapi.yaml: %w", err)
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("openapi.yaml as JSON: %w", err)
	}
	return out, nil
}

// API serves the document.
type API struct {
	body []byte
}

// New converts the document once; an error means openapi.yaml is not
// valid YAML (its tests catch that before a build ships).
func New() (*API, error) {
	body, err := JSON()
	if err != nil {
		return nil, err
	}
	return &API{body: body}, nil
}

// Register mounts GET /api/v1/openapi.json on r.
func (a *API) Register(r gin.IRouter) {
	r.GET("/api/v1/openapi.json", func(c *gin.Context) {
		c.Header("Cache-Control", "no-cache")
		c.Data(http.StatusOK, "application/json", a.body)
	})
}
