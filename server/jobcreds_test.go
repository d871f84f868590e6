package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"cronsheet/config"
	"cronsheet/task"
)

// TestJobURLCredentialsWriteOnly: a job's URL
// credentials (http://u:PW@host/?token=Q) reach its hook, and no read
// shows them: the answer, the job, the lists (and their name search), the
// dead list and dead.jsonl, the tasks API, the runs and the status page's
// API show the URL masked as a target's is.
func TestJobURLCredentialsWriteOnly(t *testing.T) {
	h := startCredHook(t, http.StatusBadRequest) // a 4xx: the job ends dead
	b := setup(t, func(c *config.Config) { c.HTTP.Allow = []string{"127.0.0.0/8"} })
	const pass, tok = "pw-job-1234", "q-job-5678"
	host := strings.TrimPrefix(h.srv.URL, "http://")
	name := "http://u:" + pass + "@" + host + "/dead?token=" + tok
	var v jobView
	code, answer := b.send(t, "POST", "/api/v1/jobs", "", mustJSONText(t, map[string]any{"method": "POST", "name": name,
		"params": `{"a":1}`, "max_retries": 0, "wait": 10}))
	if err := json.Unmarshal([]byte(answer), &v); err != nil || code != http.StatusCreated || v.State != task.JobDead {
		t.Fatalf("submit: %d %s, want 201 and dead", code, answer)
	}
	if got := h.seen(); len(got) != 1 || got[0].password != pass || got[0].query.Get("token") != tok {
		t.Fatalf("hook calls = %+v, want one with the password and the token", got)
	}
	reads := map[string]string{"the answer": answer}
	for _, path := range []string{"/api/v1/jobs/" + v.ID, "/api/v1/jobs?state=dead", "/api/v1/jobs/dead.jsonl",
		"/api/v1/tasks/" + v.ID, "/api/v1/runs?task_id=" + v.ID, "/api/v1/runs/" + v.Run.TriggerID, "/api/v1/status"} {
		code, body := b.send(t, "GET", path, "", "")
		if code != http.StatusOK {
			t.Errorf("GET %s: %d %s", path, code, body)
		}
		reads["GET "+path] = body
	}
	for what, body := range reads {
		if strings.Contains(body, pass) || strings.Contains(body, tok) {
			t.Errorf("%s shows the URL's credentials: %s", what, body)
		}
	}
	shown := "http://u:***@" + host + "/dead?token=***"
	for _, what := range []string{"GET /api/v1/jobs/" + v.ID, "GET /api/v1/jobs?state=dead", "GET /api/v1/runs?task_id=" + v.ID} {
		if !strings.Contains(reads[what], shown) {
			t.Errorf("%s does not show the name masked (%s): %s", what, shown, reads[what])
		}
	}
	// The name search sees the masked name only: it cannot guess a secret.
	for _, q := range []string{"name=" + pass, "q=" + tok} {
		code, body := b.send(t, "GET", "/api/v1/jobs?state=dead&"+q, "", "")
		if code != http.StatusOK || strings.Contains(body, v.ID) {
			t.Errorf("GET jobs?%s: %d %s, want the job not found by its secret", q, code, body)
		}
	}
}
