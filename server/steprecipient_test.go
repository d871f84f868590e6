package server

import (
	"net/http"
	"strings"
	"testing"
)

// TestFlowStepRecipient: a flow step sending through an email or SMS
// target must carry a recipient in params.to (an address, or a template
// the trigger fills); without one, or with one the channel cannot send
// to, create and PUT answer 400 naming steps[i].params.to.
func TestFlowStepRecipient(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	for _, tg := range []map[string]any{{"id": "mail", "kind": "email", "state": "running"},
		{"id": "text", "kind": "sms", "state": "running"}} {
		if code := b.call(t, "POST", "/api/v1/targets", tg, nil); code != http.StatusCreated {
			t.Fatalf("create target %v: %d", tg["id"], code)
		}
	}
	flow := func(target string, params map[string]string) map[string]any {
		second := map[string]any{"id": "b", "targets": []string{target}}
		if params != nil {
			second["params"] = params
		}
		return map[string]any{"id": "f", "start": "a", "steps": []any{
			map[string]any{"id": "a", "targets": []string{"mail"}, "params": map[string]string{"to": "a@example.com"},
				"on": map[string]any{"success": []string{"b"}}},
			second}}
	}
	refused := func(what, method, path string, body map[string]any, words ...string) {
		t.Helper()
		var e apiError
		code := b.call(t, method, path, body, &e)
		if code != http.StatusBadRequest || e.Field != "steps[1].params.to" {
			t.Errorf("%s: %d %+v, want 400 naming steps[1].params.to", what, code, e)
		}
		for _, w := range words {
			if !strings.Contains(e.Error, w) {
				t.Errorf("%s: error %q does not say %q", what, e.Error, w)
			}
		}
	}
	refused("an email step with no recipient", "POST", "/api/v1/flows", flow("mail", nil), `"b"`, `"mail"`, "{{params.to}}")
	refused("an email step with an empty recipient", "POST", "/api/v1/flows", flow("mail", map[string]string{"to": " "}), `"mail"`)
	refused("an SMS step with an email address", "POST", "/api/v1/flows", flow("text", map[string]string{"to": "a@example.com"}), "E.164")
	if code := b.call(t, "GET", "/api/v1/flows/f", nil, nil); code != http.StatusNotFound {
		t.Fatalf("a refused flow was stored: GET %d", code)
	}
	if code := b.call(t, "POST", "/api/v1/flows", flow("text", map[string]string{"to": "+8613800138000"}), nil); code != http.StatusCreated {
		t.Fatalf("create a flow whose steps name recipients: %d", code)
	}
	put := flow("mail", nil)
	refused("PUT an email step with no recipient", "PUT", "/api/v1/flows/f", put, `"mail"`)
	put = flow("mail", map[string]string{"to": "{{params.to}}"})
	if code := b.call(t, "PUT", "/api/v1/flows/f", put, nil); code != http.StatusOK {
		t.Errorf("PUT a step whose recipient the trigger fills: %d, want 200", code)
	}
}
