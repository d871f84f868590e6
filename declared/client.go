package declared

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// Client talks to a node's REST API.
type Client struct {
	// Base is the node's address, e.g. http://127.0.0.1:8080.
	Base string
	// Token, when set, is sent as Authorization: Bearer.
	Token string
	// HTTP sends the requests; nil is http.DefaultClient.
	HTTP *http.Client
}

// APIError is the API's refusal: its status and error body.
type APIError struct {
	Status  int
	Code    string `json:"code"`
	Field   string `json:"field"`
	Message string `json:"error"`
}

func (e *APIError) Error() string {
	msg := e.Message
	if msg == "" {
		msg = http.StatusText(e.Status)
	}
	if e.Field != "" && !strings.HasPrefix(msg, e.Field) {
		return fmt.Sprintf("%d %s: %s", e.Status, e.Field, msg)
	}
	return fmt.Sprintf("%d %s", e.Status, msg)
}

// isNotFound reports whether err is the API's 404.
func isNotFound(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status == http.StatusNotFound
}

// do sends one request: body (when not nil) as JSON, ifMatch (when > 0)
// as If-Match; a 2xx answer is decoded into out (when not nil), anything
// else is an *APIError.
func (c *Client) do(ctx context.Context, method, path string, ifMatch int64, body, out any) error {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("encode %s %s: %w", method, path, err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimSuffix(c.Base, "/")+path, rd)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if ifMatch > 0 {
		req.Header.Set("If-Match", strconv.Quote(strconv.FormatInt(ifMatch, 10)))
	}
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("%s %s: read the answer: %w", method, path, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		ae := &APIError{Status: resp.StatusCode}
		_ = json.Unmarshal(data, ae) // a body that is not the error JSON leaves the status text
		return ae
	}
	if out == nil || len(data) == 0 {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s %s: decode the answer: %w", method, path, err)
	}
	return nil
}

// object is an API object as read: its fields, and its version.
type object = map[string]any

// list pages through a collection (targets, flows, a scenario's rows):
// path answers {<key>: [...], next_after}.
func (c *Client) list(ctx context.Context, path, key string) ([]object, error) {
	var all []object
	after := ""
	for {
		var page map[string]json.RawMessage
		q := path + "?limit=500&after=" + url.QueryEscape(after)
		if err := c.do(ctx, http.MethodGet, q, 0, nil, &page); err != nil {
			return nil, err
		}
		var items []object
		if err := json.Unmarshal(page[key], &items); err != nil {
			return nil, fmt.Errorf("GET %s: decode %s: %w", path, key, err)
		}
		all = append(all, items...)
		var next string
		_ = json.Unmarshal(page["next_after"], &next)
		if next == "" {
			return all, nil
		}
		after = next
	}
}

// get reads one object; a missing one is (nil, nil).
func (c *Client) get(ctx context.Context, path string) (object, error) {
	var o object
	err := c.do(ctx, http.MethodGet, path, 0, nil, &o)
	if isNotFound(err) {
		return nil, nil
	}
	return o, err
}

// versionOf reads an object's version.
func versionOf(o object) int64 {
	v, _ := o["version"].(float64)
	return int64(v)
}

func rowsPath(scenario string) string {
	return "/api/v1/scenarios/" + url.PathEscape(scenario) + "/rows"
}
