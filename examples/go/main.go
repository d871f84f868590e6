// Command example is a cronsheet API client with net/http only.
//
// It makes an HTTP target that waits for feedback, creates a row in the
// memos table that fires it, submits a job and waits for its result, runs
// the row's task by hand, reads the run and posts its feedback. It prints
// one line a step and exits 0, or prints the API's error (field and
// reason) and exits 1.
//
// Environment: CRONSHEET_URL (default http://127.0.0.1:8080),
// CRONSHEET_TOKEN (an API token; none with auth: local_dev on loopback),
// CRONSHEET_HOOK_URL (what the target and the job call; default the node's
// own /healthz, which needs http.allow to hold 127.0.0.0/8).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"
)

// apiError is an answer that is not 2xx: its status and the API's error body.
type apiError struct {
	Status int
	Code   string `json:"code"`
	Msg    string `json:"error"`
	Field  string `json:"field"`
}

func (e *apiError) Error() string {
	s := fmt.Sprintf("%d %s: %s", e.Status, e.Code, e.Msg)
	if e.Field != "" {
		s += " (field " + e.Field + ")"
	}
	return s
}

// client calls one node.
type client struct {
	base, token string
	http        *http.Client
}

// call sends body as JSON (none when nil) and decodes the answer into out.
func (c *client) call(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("%s %s: %w", method, path, err)
	}
	if resp.StatusCode >= 300 {
		e := &apiError{Status: resp.StatusCode}
		if json.Unmarshal(raw, e) != nil {
			e.Msg = string(raw)
		}
		return e
	}
	if out != nil {
		return json.Unmarshal(raw, out)
	}
	return nil
}

type run struct {
	TriggerID string `json:"trigger_id"`
	State     string `json:"state"`
}

func main() {
	base := strings.TrimRight(envOr("CRONSHEET_URL", "http://127.0.0.1:8080"), "/")
	c := &client{base: base, token: os.Getenv("CRONSHEET_TOKEN"), http: &http.Client{Timeout: time.Minute}}
	if err := example(context.Background(), c, envOr("CRONSHEET_HOOK_URL", base+"/healthz")); err != nil {
		fmt.Fprintln(os.Stderr, "cronsheet:", err)
		os.Exit(1)
	}
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// example makes the target, the row and the job, and runs, reads and
// reports the row's run.
func example(ctx context.Context, c *client, hook string) error {
	// A target that waits for feedback: its 2xx makes a run "accepted".
	err := c.call(ctx, "POST", "/api/v1/targets", map[string]any{"id": "example-hook", "kind": "http",
		"state": "running", "feedback_timeout": 300, "http": map[string]string{"method": "GET", "url": hook}}, nil)
	if e := (*apiError)(nil); err != nil && (!errors.As(err, &e) || e.Code != "already_exists") {
		return err
	}
	// 1. A row in the memos table.
	var row struct {
		ID string `json:"id"`
	}
	if err := c.call(ctx, "POST", "/api/v1/scenarios/memos/rows", map[string]string{"title": "example",
		"content": "made by examples/go", "when": "daily 02:00", "targets": "example-hook"}, &row); err != nil {
		return err
	}
	fmt.Println("row", row.ID, "created")
	// 2. A job, waiting up to 20 s for its result.
	var job struct {
		ID    string `json:"id"`
		State string `json:"state"`
	}
	if err := c.call(ctx, "POST", "/api/v1/jobs", map[string]any{"method": "GET", "name": hook, "wait": 20}, &job); err != nil {
		return err
	}
	fmt.Println("job", job.ID, job.State)
	// 3. Run the row's task now, then read the run until the target has answered.
	r, err := triggerAndRead(ctx, c, row.ID)
	if err != nil {
		return err
	}
	fmt.Println("run", r.TriggerID, r.State)
	// 4. The target's report: status 0 ends the run done.
	if err := c.call(ctx, "POST", "/api/v1/runs/"+r.TriggerID+"/feedback",
		map[string]any{"status": 0, "message": "done by examples/go"}, &r); err != nil {
		return err
	}
	fmt.Println("feedback: run", r.TriggerID, r.State)
	return nil
}

// triggerAndRead runs the task now (it appears once the row is synced)
// and reads its run until the target has answered.
func triggerAndRead(ctx context.Context, c *client, taskID string) (run, error) {
	deadline := time.Now().Add(30 * time.Second)
	var fired struct {
		Runs []run `json:"runs"`
	}
	for {
		err := c.call(ctx, "POST", "/api/v1/tasks/"+taskID+"/trigger", map[string]any{"params": map[string]string{}}, &fired)
		var e *apiError
		if err == nil {
			break
		}
		if !errors.As(err, &e) || e.Status != http.StatusNotFound || time.Now().After(deadline) {
			return run{}, err
		}
		time.Sleep(200 * time.Millisecond)
	}
	if len(fired.Runs) == 0 {
		return run{}, errors.New("the trigger made no run")
	}
	r := fired.Runs[0]
	for {
		if err := c.call(ctx, "GET", "/api/v1/runs/"+r.TriggerID, nil, &r); err != nil {
			return run{}, err
		}
		if !slices.Contains([]string{"pending", "running", "failed"}, r.State) || time.Now().After(deadline) {
			return r, nil
		}
		time.Sleep(200 * time.Millisecond)
	}
}
