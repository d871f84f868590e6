package server

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// goTypeName matches what a Go type name looks like in a message.
var goTypeName = regexp.MustCompile(`\b(u?int(8|16|32|64)?|float(32|64)|string|bool|rune|byte|interface)\b|jobapi\.|task\.|map\[|\[\]|json\.`)

// wrongValues are JSON values of every kind; each field gets each.
var wrongValues = []string{`true`, `1.5`, `"x"`, `"12"`, `[1]`, `{"a":1}`}

// TestWrongTypesAnsweredInWords sends wrong-typed values to the fields of
// the jobs (one, batch, by key, backfill), tasks, targets, runs, flows,
// users, tokens and rows (one, batch, bulk) APIs: no answer is a 5xx, no
// refusal names a Go type.
func TestWrongTypesAnsweredInWords(t *testing.T) {
	b := setup(t, nil)
	type door struct {
		method, path, tmpl string // tmpl holds %s for the field and the value
		fields             []string
	}
	jobFields := []string{"method", "name", "params", "delay", "at", "cron", "key", "cc", "max_retries", "ttl", "wait", "overlap"}
	targetFields := []string{"id", "name", "kind", "state", "feedback_timeout", "http", "exec", "kafka", "builtin", "version"}
	rowFields := []string{"title", "content", "when", "active", "ttl", "max_retries", "tz", "misfire", "overlap", "alert",
		"alert_after", "alert_absent", "to", "params", "memo_id", "channel"}
	doors := []door{
		{"POST", "/api/v1/jobs", `{"method":"GET","name":"http://example.com/x","delay":3600,%q:%s}`, jobFields},
		{"POST", "/api/v1/jobs", `[{"method":"GET","name":"http://example.com/x","delay":3600,%q:%s}]`, jobFields},
		{"POST", "/api/v1/jobs", `{"jobs":[{"method":"GET","name":"http://example.com/x","delay":3600,%q:%s}]}`, jobFields},
		{"PUT", "/api/v1/jobs/by-key/k1", `{"method":"GET","name":"http://example.com/x","delay":3600,%q:%s}`, jobFields},
		{"POST", "/api/v1/targets", `{"id":"t-x","kind":"http","http":{"method":"GET","url":"https://a.example/"},%q:%s}`, targetFields},
		{"POST", "/api/v1/targets", `{"id":"t-y","kind":"http","http":{"method":"GET","url":"https://a.example/",%q:%s}}`,
			[]string{"method", "url", "headers", "body", "timeout"}},
		{"PUT", "/api/v1/tasks/nope/state", `{%q:%s}`, []string{"state"}},
		{"POST", "/api/v1/tasks/nope/trigger", `{%q:%s}`, []string{"params"}},
		{"POST", "/api/v1/runs/nope/feedback", `{%q:%s}`, []string{"status", "message", "final"}},
		{"POST", "/api/v1/scenarios/memos/rows", `{"content":"x","when":"every 1h",%q:%s}`, rowFields},
		{"POST", "/api/v1/scenarios/memos/rows/batch", `{"rows":[{"id":"nope","fields":{%q:%s}}]}`, rowFields},
		{"POST", "/api/v1/scenarios/memos/rows/batch", `{%q:%s}`, []string{"rows"}},
		{"POST", "/api/v1/scenarios/memos/rows/bulk", `{"action":"activate","ids":["nope"],%q:%s}`, []string{"action", "ids"}},
		{"POST", "/api/v1/flows", `{"id":"f-x","start":"s1","steps":[{"id":"s1","targets":["t1"]}],%q:%s}`,
			[]string{"id", "description", "start", "steps", "max_depth", "schedule", "tz", "version"}},
		{"POST", "/api/v1/flows", `{"id":"f-y","start":"s1","steps":[{"id":"s1","targets":["t1"],%q:%s}]}`,
			[]string{"targets", "params", "result", "timeout", "on"}},
		{"POST", "/api/v1/jobs/backfill", `{%q:%s}`, []string{"ids", "state", "method", "name", "limit"}},
		{"POST", "/api/v1/users", `{"name":"u-x","role":"viewer","password":"a-long-password-1",%q:%s}`,
			[]string{"name", "role", "password", "disabled"}},
		{"POST", "/api/v1/tokens", `{"user":"admin","name":"t","role":"viewer",%q:%s}`, []string{"user", "name", "role", "expires_in"}},
		{"POST", "/api/v1/runs/nope/cancel", `{%q:%s}`, []string{"reason"}},
	}
	for _, d := range doors {
		for _, field := range d.fields {
			for _, v := range wrongValues {
				body := fmt.Sprintf(d.tmpl, field, v)
				code, answer := b.raw(t, d.method, d.path, body)
				if code >= 500 {
					t.Errorf("%s %s %s = %d %s, want no 5xx", d.method, d.path, body, code, answer)
				}
				if m := goTypeName.FindString(answer); m != "" && code >= 400 {
					t.Errorf("%s %s %s = %d %s: names a Go type (%q)", d.method, d.path, body, code, answer, m)
				}
			}
		}
	}
	// Where a number is meant, a number and text holding one are alike.
	// The rows name an alert target, so it must exist.
	const rows = "/api/v1/scenarios/memos/rows"
	if code, answer := b.raw(t, "POST", "/api/v1/targets",
		`{"id":"t1","kind":"http","http":{"method":"GET","url":"https://a.example/"}}`); code != http.StatusCreated {
		t.Fatalf("create target t1: %d %s", code, answer)
	}
	for _, c := range []struct{ path, body string }{
		{rows, `{"content":"x","when":"every 1h","alert":"t1","alert_after":2}`},
		{rows, `{"content":"x","when":"every 1h","alert":"t1","alert_after":"2"}`},
		{rows, `{"content":"x","when":"every 1h","alert":"t1","alert_absent":600}`},
		{rows, `{"content":"x","when":"every 1h","alert":"t1","alert_absent":"600"}`},
		{rows, `{"content":"x","when":"every 1h","alert":"t1","alert_absent":"10m"}`},
		{rows, `{"content":"x","when":"every 1h","max_retries":0}`},
		{rows, `{"content":"x","when":"every 1h","max_retries":"0"}`},
		{"/api/v1/jobs", `{"method":"GET","name":"http://example.com/x","delay":"3600","max_retries":"0","ttl":"30"}`},
		{"/api/v1/targets", `{"id":"t-num","kind":"http","feedback_timeout":"60",` +
			`"http":{"method":"GET","url":"https://a.example/","timeout":"30"}}`},
	} {
		if code, answer := b.raw(t, "POST", c.path, c.body); code != http.StatusCreated {
			t.Errorf("POST %s %s = %d %s, want 201", c.path, c.body, code, answer)
		}
	}
}

// raw sends body as it is, as JSON, and returns the status and the
// answer's text.
func (b *testBundle) raw(t *testing.T, method, path, body string) (int, string) {
	t.Helper()
	return b.rawAs(t, method, path, "application/json", body)
}

// rawAs sends body as it is with the given Content-Type and returns the
// status and the answer's text.
func (b *testBundle) rawAs(t *testing.T, method, path, contentType, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, b.base+path, bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, strings.TrimSpace(string(raw))
}
