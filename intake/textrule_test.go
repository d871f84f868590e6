package intake

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"

	"cronsheet/api/httpapi"
	"cronsheet/api/jobsapi"
)

// textRuleCases are job requests every door refuses by the one text rule
// (jsontype.Checked, task.CheckKey), with the field each refusal names.
var textRuleCases = []struct {
	name, body, field string
}{
	{"nul in params text", `{"method":"POST","name":"http://example.com/hook","delay":60,"params":"a\u0000b"}`, "params"},
	{"nul in key", `{"method":"POST","name":"http://example.com/hook","delay":60,"key":"k\u0000x"}`, "key"},
	{"crlf in key", `{"method":"POST","name":"http://example.com/hook","delay":60,"key":"k\r\nx"}`, "key"},
	{"dot dot key", `{"method":"POST","name":"http://example.com/hook","delay":60,"key":".."}`, "key"},
	{"space key", `{"method":"POST","name":"http://example.com/hook","delay":60,"key":" "}`, "key"},
	{"dash key", `{"method":"POST","name":"http://example.com/hook","delay":60,"key":"-1"}`, "key"},
	{"duplicate method", `{"method":"POST","method":"EXEC","name":"http://example.com/hook","delay":60}`, "method"},
}

// TestTextRuleHTTP: through the jobs API's router over a real jobs
// service, each request of textRuleCases and each by-key path holding
// NUL, CR/LF, a space, "..", or a leading "-" is a 400 naming the
// field; a line break in a POST's params (free text) and a body after a
// byte-order mark are taken.
func TestTextRuleHTTP(t *testing.T) {
	t.Parallel()
	r := gin.New()
	r.Use(httpapi.Middleware(testLogger(t))...)
	jobsapi.New(jobsapi.Deps{Jobs: newService(t)}).Register(r)
	do := func(method, path, body string) (int, httpapi.ErrorBody) {
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, httptest.NewRequest(method, path, strings.NewReader(body)))
		var e httpapi.ErrorBody
		_ = json.Unmarshal(rec.Body.Bytes(), &e)
		return rec.Code, e
	}
	for _, tt := range textRuleCases {
		if code, e := do(http.MethodPost, "/api/v1/jobs", tt.body); code != http.StatusBadRequest || e.Field != tt.field {
			t.Errorf("%s: %d %+v, want 400 naming %s", tt.name, code, e, tt.field)
		}
	}
	const upsert = `{"method":"POST","name":"http://example.com/hook","delay":60}`
	for _, key := range []string{"k%00x", "k%0d%0ax", "%20", "%2E%2E", "-1"} {
		if code, e := do(http.MethodPut, "/api/v1/jobs/by-key/"+key, upsert); code != http.StatusBadRequest || e.Field != "key" {
			t.Errorf("by-key %s: %d %+v, want 400 naming key", key, code, e)
		}
	}
	multi := `{"method":"POST","name":"http://example.com/hook","delay":60,"params":"line 1\r\nline 2"}`
	if code, e := do(http.MethodPost, "/api/v1/jobs", multi); code != http.StatusCreated {
		t.Errorf("params with a line break: %d %+v, want 201 (free text)", code, e)
	}
	if code, e := do(http.MethodPost, "/api/v1/jobs", "\ufeff"+validRequest); code != http.StatusCreated {
		t.Errorf("body after a byte-order mark: %d %+v, want 201", code, e)
	}
	if code, e := do(http.MethodPut, "/api/v1/jobs/by-key/order-42", upsert); code != http.StatusCreated {
		t.Errorf("by-key order-42: %d %+v, want 201", code, e)
	}
}

// TestTextRuleWebSocket: the WebSocket intake refuses what the HTTP API
// refuses by the text rule, naming the same field.
func TestTextRuleWebSocket(t *testing.T) {
	t.Parallel()
	conn := dial(t, setupWebSocket(t))
	for _, tt := range textRuleCases {
		m := exchange(t, conn, tt.body)
		if m.Type != "error" || m.Field != tt.field || m.Job != nil {
			t.Errorf("%s: got %+v, want an error naming %s", tt.name, m, tt.field)
		}
	}
}
