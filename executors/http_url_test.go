package executors_test

import (
	"context"
	"net/url"
	"testing"
)

// TestHTTPURLTemplateEscapesByPosition: a value expanded into the URL is
// escaped for where it stands (a path segment, a query value), so it can
// neither add parameters nor cut the URL at '#', non-ASCII goes
// percent-encoded, and a GET never sends a parameter twice.
func TestHTTPURLTemplateEscapesByPosition(t *testing.T) {
	t.Parallel()
	const evil = "a&evil=1#frag b"
	tests := []struct {
		name      string
		method    string
		path      string // the URL template after the server's address
		params    map[string]string
		wantPath  string
		wantQuery url.Values
	}{
		{
			name: "QueryValue", method: "GET", path: "/hook?who={{who}}",
			params:    map[string]string{"who": evil},
			wantPath:  "/hook",
			wantQuery: url.Values{"who": {evil}},
		},
		{
			name: "QueryValueWithOtherParams", method: "GET", path: "/hook?who={{who}}&fixed=1",
			params:    map[string]string{"who": evil, "day": "mon"},
			wantPath:  "/hook",
			wantQuery: url.Values{"who": {evil}, "fixed": {"1"}, "day": {"mon"}},
		},
		{
			name: "ParamAlreadyInTemplateLiterally", method: "GET", path: "/hook?day=tue",
			params:    map[string]string{"day": "mon", "who": "ann"},
			wantPath:  "/hook",
			wantQuery: url.Values{"day": {"tue"}, "who": {"ann"}},
		},
		{
			name: "PathSegment", method: "POST", path: "/users/{{who}}/ping",
			params:    map[string]string{"who": "a/b?c#d é"},
			wantPath:  "/users/a/b?c#d é/ping", // decoded: one segment on the wire
			wantQuery: url.Values{},
		},
		{
			name: "NonASCIIQuery", method: "GET", path: "/hook?who={{who}}",
			params:    map[string]string{"who": "张三 ü"},
			wantPath:  "/hook",
			wantQuery: url.Values{"who": {"张三 ü"}},
		},
		{
			name: "QueryKeyPlaceholder", method: "POST", path: "/hook?{{k}}=1",
			params:    map[string]string{"k": "x&y=2"},
			wantPath:  "/hook",
			wantQuery: url.Values{"x&y=2": {"1"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setupHook(t, nil)
			d := httpDelivery(tt.method, b.srv.URL+tt.path)
			d.Params = tt.params
			if _, err := newHTTP(t, loopbackAllowed()).Execute(context.Background(), d); err != nil {
				t.Fatalf("Execute: %v", err)
			}
			got := b.onlyRequest(t)
			if got.Path != tt.wantPath {
				t.Errorf("path = %q, want %q", got.Path, tt.wantPath)
			}
			q, err := url.ParseQuery(got.RawQuery)
			if err != nil {
				t.Fatalf("query %q: %v", got.RawQuery, err)
			}
			if q.Encode() != tt.wantQuery.Encode() {
				t.Errorf("query = %v (raw %q), want %v", q, got.RawQuery, tt.wantQuery)
			}
			for i := 0; i < len(got.RawQuery); i++ {
				if got.RawQuery[i] >= 0x80 {
					t.Fatalf("raw query %q carries a non-ASCII byte", got.RawQuery)
				}
			}
		})
	}
}
