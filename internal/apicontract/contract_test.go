package apicontract

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// serve passes one request through a checker wrapping a handler that
// answers status and body, and returns what the checker found.
func serve(t *testing.T, method, path, reqBody string, status int, body string) (problems []string, checked int) {
	t.Helper()
	c, err := New(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	h := c.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = w.Write([]byte(body))
	}))
	req := httptest.NewRequest(method, path, strings.NewReader(reqBody))
	if reqBody != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	h.ServeHTTP(httptest.NewRecorder(), req)
	return c.Problems(), c.Checked()
}

const aRun = `{"trigger_id":"tr_1","task_id":"m1","slot":"2026-12-04T10:00:00Z","state":"done","attempt":1}`

func TestCheckerPassesWhatTheDocumentSays(t *testing.T) {
	problems, checked := serve(t, "GET", "/api/v1/runs/tr_1", "", 200, aRun)
	if len(problems) != 0 || checked != 1 {
		t.Fatalf("a run as documented: %d checked, problems %v", checked, problems)
	}
	problems, _ = serve(t, "GET", "/api/v1/runs/nope", "", 404, `{"error":"run \"nope\" not found","code":"not_found"}`)
	if len(problems) != 0 {
		t.Fatalf("a documented refusal: %v", problems)
	}
}

func TestCheckerReportsAnAnswerTheDocumentDoesNotDescribe(t *testing.T) {
	problems, _ := serve(t, "GET", "/api/v1/runs/tr_1", "", 200, `{"trigger_id":"tr_1","state":5}`)
	if len(problems) != 1 || !strings.Contains(problems[0], "does not match the document") {
		t.Fatalf("a run without its fields and a numeric state: %v", problems)
	}
	problems, _ = serve(t, "GET", "/api/v1/runs/nope", "", 404, `{"message":"no"}`)
	if len(problems) != 1 {
		t.Fatalf("an error without the Error shape: %v", problems)
	}
}

func TestCheckerReportsARequestRefusedByTheDocumentButAccepted(t *testing.T) {
	problems, _ := serve(t, "POST", "/api/v1/runs/tr_1/feedback", `{"message":"no status"}`, 200, aRun)
	if len(problems) != 1 || !strings.Contains(problems[0], "the document refuses the request") {
		t.Fatalf("feedback without status, accepted: %v", problems)
	}
	problems, _ = serve(t, "POST", "/api/v1/runs/tr_1/feedback", `{"message":"no status"}`, 400,
		`{"error":"status: required","code":"invalid_field","field":"status"}`)
	if len(problems) != 0 {
		t.Fatalf("feedback without status, refused: %v", problems)
	}
}
