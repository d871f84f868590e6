package jsontype

import (
	"testing"
)

// TestChecked: the one text rule of every door: NUL and other control
// characters nowhere, line breaks only in free text, no member named
// twice, a byte-order mark skipped; each refusal names the field.
func TestChecked(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, body, field string // field "" = accepted
	}{
		{"plain", `{"method":"POST","params":{"a":"b"},"list":[1,"x",{"k":"v"}]}`, ""},
		{"bom", "\ufeff" + `{"a":"b"}`, ""},
		{"duplicate", `{"method":"POST","method":"EXEC"}`, "method"},
		{"nested duplicate", `{"http":{"url":"u","url":"v"}}`, "http.url"},
		{"same name in two objects", `{"a":{"k":1},"b":{"k":2}}`, ""},
		{"nul in params text", `{"params":"a\u0000b"}`, "params"},
		{"nul in params value", `{"params":{"n":"a\u0000"}}`, "params.n"},
		{"nul in key", `{"key":"k\u0000x"}`, "key"},
		{"crlf in key", `{"key":"k\r\nx"}`, "key"},
		{"lf in name", `{"name":"a\nb"}`, "name"},
		{"crlf in body", `{"http":{"body":"a\r\nb"}}`, ""},
		{"crlf in params", `{"params":"line1\nline2"}`, ""},
		{"tab in params value", `{"params":{"v":"a\tb"}}`, ""},
		{"bell in body", `{"http":{"body":"a\u0007"}}`, "http.body"},
		{"in array", `{"jobs":[{"key":"a"},{"key":"b\u0000"}]}`, "jobs[1].key"},
		{"top array", `[{"key":"a"},{"method":"x","method":"y"}]`, "[1].method"},
		{"nul in member name", `{"a\u0000":"b"}`, `a\x00`},
		{"whole value", `"a\u0000"`, "body"},
		{"bad json is the decoder's", `{"a":`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			out, err := Checked([]byte(tt.body))
			te := AsText(err)
			switch {
			case tt.field == "" && err != nil:
				t.Fatalf("Checked(%s) = %v, want accepted", tt.body, err)
			case tt.field != "" && (te == nil || te.Field != tt.field):
				t.Fatalf("Checked(%s) = %v, want a refusal naming %s", tt.body, err, tt.field)
			case err == nil && len(out) > 0 && out[0] == 0xEF:
				t.Fatalf("Checked kept the byte-order mark")
			}
		})
	}
}

// TestCheckedLines: a row's body takes line breaks in any field, but no
// NUL and no member named twice.
func TestCheckedLines(t *testing.T) {
	t.Parallel()
	if _, err := CheckedLines([]byte(`{"note":"a\r\nb\tc"}`)); err != nil {
		t.Errorf("line breaks in a row field: %v", err)
	}
	for body, field := range map[string]string{`{"note":"a\u0000"}`: "note", `{"note":"a","note":"b"}`: "note"} {
		if te := AsText(func() error { _, err := CheckedLines([]byte(body)); return err }()); te == nil || te.Field != field {
			t.Errorf("CheckedLines(%s) refusal = %v, want one naming %s", body, te, field)
		}
	}
}
