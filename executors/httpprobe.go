package executors

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"cronsheet/task"
)

// Probe sends the probe of target t (task.TargetProbe) and reports its
// answer: nil for a status below 400, else an error saying what came
// back or why nothing did. It goes through the executor's client, so the
// HostGuard refuses a host a delivery may not reach (before DNS, and
// again on the address dialled); the request carries the target's
// headers that hold no template, User-Agent "cronsheet" and no body.
// Redirects are not followed (a 3xx is an answer).
func (h *HTTP) Probe(ctx context.Context, t *task.Target) error {
	if t == nil || t.HTTP == nil || t.Probe == nil {
		return fmt.Errorf("probe without an http target and its probe: %w", task.ErrInvalid)
	}
	u, err := probeURL(t)
	if err != nil {
		return err
	}
	if err := h.guard.Load().Check(u.Hostname()); err != nil {
		return err
	}
	timeout := time.Duration(cmp.Or(t.HTTP.Timeout, task.DefaultHTTPTimeoutS)) * time.Second
	ctx, cancel := context.WithTimeout(ctx, min(timeout, t.Probe.Every()))
	defer cancel()
	method := t.Probe.MethodOrDefault()
	req, err := http.NewRequestWithContext(ctx, method, u.String(), nil)
	if err != nil {
		return fmt.Errorf("probe request: %w", err)
	}
	for k, v := range t.HTTP.Headers {
		if !strings.Contains(v, "{{") && validHeaderName(k) {
			req.Header.Set(k, v)
		}
	}
	req.Header.Set("User-Agent", UserAgent)
	where := redactURL(u)
	resp, err := h.client.Do(req)
	if err != nil {
		return classifyTransport(ctx, method, where, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxResponseBody))
	if resp.StatusCode >= 400 {
		return &HTTPStatusError{Method: method, URL: where, Code: resp.StatusCode}
	}
	return nil
}

// probeURL is where t's probe goes: the target's scheme, user info and
// host with the probe's path, or without one the target's URL as it is.
func probeURL(t *task.Target) (*url.URL, error) {
	raw := t.HTTP.URL
	if p := t.Probe.Path; p != "" {
		base, err := url.Parse(strings.SplitN(raw, "{{", 2)[0])
		if err != nil {
			return nil, fmt.Errorf("probe url: %w", err)
		}
		raw = base.Scheme + "://" + base.Host + p
		if base.User != nil {
			raw = base.Scheme + "://" + base.User.String() + "@" + base.Host + p
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("probe url: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || strings.Contains(raw, "{{") {
		return nil, fmt.Errorf("probe url %q: want http(s)://host/… without a template: %w", redactURL(u), task.ErrInvalid)
	}
	return u, nil
}
