package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"
)

// client submits and reads jobs over keep-alive connections, one per
// concurrent client (Go's default keeps only two idle per host, which
// would open a new connection for most requests).
type client struct{ c *http.Client }

func newClient(conns int) *client {
	return &client{c: &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{
		MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns, IdleConnTimeout: time.Minute,
	}}}
}

// do sends body (nil: none) and decodes the answer into out, which must
// have status want.
func (c *client) do(method, url string, body []byte, want int, out any) error {
	req, err := http.NewRequest(method, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := c.c.Do(req)
	if err != nil {
		return fmt.Errorf("after %s: %w", time.Since(start).Round(time.Millisecond), err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: status %d: %.300s", method, url, resp.StatusCode, raw)
	}
	return json.Unmarshal(raw, out)
}

// arms counts the node's arms and keeps the time of the latest.
type arms struct {
	n    atomic.Int64
	last atomic.Int64 // unix nanoseconds
}

func (a *arms) observe(string) {
	a.last.Store(time.Now().UnixNano())
	a.n.Add(1)
}

// since returns how long after start the latest arm was.
func (a *arms) since(start time.Time) time.Duration {
	return time.Unix(0, a.last.Load()).Sub(start)
}
