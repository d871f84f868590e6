package executors

import (
	"encoding/json"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"cronsheet/task"
)

// Body kinds: how values expanded into a POST body template are escaped.
const (
	bodyText = iota // inserted as they are: the body has no structure to break
	bodyJSON        // JSON string escaping: quotes, backslashes, control characters
	bodyForm        // form encoding (application/x-www-form-urlencoded)
)

// bodyKind tells how a body template's values are escaped. A Content-Type
// among the target's headers decides: application/json or any +json type is
// JSON, application/x-www-form-urlencoded is a form, any other type is text.
// Without one, a template that is a JSON object or array (its placeholders
// set aside) is JSON, anything else text.
func bodyKind(tmpl string, headers map[string]string) int {
	for k, v := range headers {
		if http.CanonicalHeaderKey(k) != "Content-Type" {
			continue
		}
		mt, _, _ := mime.ParseMediaType(v)
		switch {
		case mt == "application/json" || strings.HasSuffix(mt, "+json"):
			return bodyJSON
		case mt == "application/x-www-form-urlencoded":
			return bodyForm
		}
		return bodyText
	}
	probe := strings.TrimSpace(probeJSON(tmpl))
	if (strings.HasPrefix(probe, "{") || strings.HasPrefix(probe, "[")) && json.Valid([]byte(probe)) {
		return bodyJSON
	}
	return bodyText
}

// probeJSON returns tmpl with every placeholder replaced by 0, which is
// valid JSON both inside a string and as a bare value ("" for a malformed
// template).
func probeJSON(tmpl string) string {
	vars := map[string]string{}
	for _, n := range task.Placeholders(tmpl) {
		vars[n] = "0"
	}
	s, err := task.Expand(tmpl, vars)
	if err != nil {
		return ""
	}
	return s
}

// bodyEscaper returns the escape function for a body of kind, nil for text.
func bodyEscaper(kind int) func(literal, value string) string {
	switch kind {
	case bodyJSON:
		return func(_, v string) string { return jsonStringContent(v) }
	case bodyForm:
		return func(_, v string) string { return url.QueryEscape(v) }
	}
	return nil
}

// jsonStringContent escapes v as the inside of a JSON string (no quotes
// around it), so a value can neither end the string nor add fields; as a
// bare value it stays a number or a literal when it is one, and is invalid
// JSON, not extra structure, when it holds quotes.
func jsonStringContent(v string) string {
	b, err := json.Marshal(v)
	if err != nil || len(b) < 2 {
		return ""
	}
	return string(b[1 : len(b)-1])
}
