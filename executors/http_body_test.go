package executors_test

import (
	"context"
	"encoding/json"
	"net/url"
	"testing"
)

// TestHTTPBodyTemplateEscaping: a value holding quotes, backslashes, line
// breaks or form separators reaches the hook as the same value, in the
// field the template put it in, and adds no field: JSON string escaping
// in a JSON body, form encoding in a form, as it is in plain text.
func TestHTTPBodyTemplateEscaping(t *testing.T) {
	t.Parallel()
	const evil = `hi", "status": 500, "x": "\ ` + "\n\t\x01 & n=2 = é"

	t.Run("JSON", func(t *testing.T) {
		t.Parallel()
		for name, tc := range map[string]struct {
			headers map[string]string
			value   string
		}{
			"inferred":     {nil, evil},
			"injects":      {nil, `x", "status": "500`},
			"content-type": {map[string]string{"content-type": "application/vnd.alert+json"}, evil},
		} {
			headers, evil := tc.headers, tc.value
			b := setupHook(t, nil)
			d := httpDelivery("POST", b.srv.URL+"/hook")
			d.Params["msg"] = evil
			d.Target.HTTP.Headers = headers
			d.Target.HTTP.Body = `{"msg": "{{msg}}", "who": "{{name}}", "attempt": {{attempt}}}`
			if _, err := newHTTP(t, loopbackAllowed()).Execute(context.Background(), d); err != nil {
				t.Fatalf("%s: Execute: %v", name, err)
			}
			var got map[string]any
			body := b.onlyRequest(t).Body
			if err := json.Unmarshal([]byte(body), &got); err != nil {
				t.Fatalf("%s: the hook got invalid JSON %q: %v", name, body, err)
			}
			if len(got) != 3 || got["msg"] != evil || got["who"] != "Ann Lee" || got["attempt"] != float64(2) {
				t.Errorf("%s: the hook decoded %#v, want exactly msg %q, who, attempt 2", name, got, evil)
			}
		}
	})

	t.Run("Form", func(t *testing.T) {
		t.Parallel()
		b := setupHook(t, nil)
		d := httpDelivery("POST", b.srv.URL+"/hook")
		d.Params["msg"] = evil
		d.Target.HTTP.Headers = map[string]string{"Content-Type": "application/x-www-form-urlencoded"}
		d.Target.HTTP.Body = `msg={{msg}}&n=1`
		if _, err := newHTTP(t, loopbackAllowed()).Execute(context.Background(), d); err != nil {
			t.Fatalf("Execute: %v", err)
		}
		got, err := url.ParseQuery(b.onlyRequest(t).Body)
		if err != nil {
			t.Fatalf("the hook got an invalid form: %v", err)
		}
		if len(got) != 2 || got.Get("msg") != evil || len(got["n"]) != 1 || got.Get("n") != "1" {
			t.Errorf("the hook decoded %#v, want msg %q and n=1 only", got, evil)
		}
	})

	t.Run("Text", func(t *testing.T) {
		t.Parallel()
		b := setupHook(t, nil)
		d := httpDelivery("POST", b.srv.URL+"/hook")
		d.Params["msg"] = evil
		d.Target.HTTP.Body = `alert: {{msg}}`
		if _, err := newHTTP(t, loopbackAllowed()).Execute(context.Background(), d); err != nil {
			t.Fatalf("Execute: %v", err)
		}
		if got := b.onlyRequest(t).Body; got != "alert: "+evil {
			t.Errorf("text body = %q, want the value as it is", got)
		}
	})
}
