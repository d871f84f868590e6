package jobapi

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"cronsheet/task"
)

func TestBuildHeaders(t *testing.T) {
	t.Parallel()
	b, err := build(t, `{"method":"POST","name":"http://h/hook","headers":{"Authorization":"Bearer x","X-Trace":"7"}}`)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	tg := b.Task.Job.Target()
	if tg.HTTP.Headers["Authorization"] != "Bearer x" || tg.HTTP.Headers["X-Trace"] != "7" || tg.Validate() != nil {
		t.Errorf("target headers = %v (%v)", tg.HTTP.Headers, tg.Validate())
	}
	if got := b.Task.Job.RedactedHeaders(); fmt.Sprint(got) != "map[Authorization:*** X-Trace:***]" {
		t.Errorf("RedactedHeaders = %v", got)
	}
	if r := b.Task.Job.Redacted(); r.Digest != "" || r.Headers["Authorization"] != task.SecretMask ||
		b.Task.Job.Headers["Authorization"] != "Bearer x" {
		t.Errorf("Redacted = %+v; the job itself = %+v", r, b.Task.Job)
	}
	g, err := build(t, `{"method":"GET","name":"http://h/q","params":"a=1","headers":{"Authorization":"Bearer x"}}`)
	if err != nil || g.Task.Job.Target().HTTP.Headers["Authorization"] != "Bearer x" {
		t.Errorf("GET with headers: %+v, %v", g.Task.Job, err)
	}
}

func TestBuildRefusesHeaders(t *testing.T) {
	t.Parallel()
	many := map[string]string{}
	for i := range task.MaxJobHeaders + 1 {
		many[fmt.Sprintf("X-H%d", i)] = "v"
	}
	manyJSON := `{`
	for k, v := range many {
		manyJSON += fmt.Sprintf("%q:%q,", k, v)
	}
	manyJSON = strings.TrimSuffix(manyJSON, ",") + `}`
	big := strings.Repeat("v", 3000)
	tests := []struct {
		name, headers, field, want string
		method                     string
	}{
		{"NotAToken", `{"Bad Name":"v"}`, "headers.Bad Name", "is not a header name", "POST"},
		{"Colon", `{"X-A:b":"v"}`, "headers.X-A:b", "is not a header name", "POST"},
		{"CR", `{"X-A":"a\rb"}`, "headers.X-A", "carriage return (CR", "POST"},
		{"LF", `{"Authorization":"Bearer x\nX-Evil: 1"}`, "headers.Authorization", "line break (LF", "POST"},
		{"NUL", `{"X-A":"a\u0000"}`, "headers.X-A", "NUL character", "POST"},
		{"HopByHop", `{"connection":"close"}`, "headers.connection", "hop-by-hop", "POST"},
		{"TransferEncoding", `{"Transfer-Encoding":"chunked"}`, "headers.Transfer-Encoding", "hop-by-hop", "POST"},
		{"Host", `{"Host":"evil"}`, "headers.Host", "comes from the URL", "POST"},
		{"ContentLength", `{"Content-Length":"1"}`, "headers.Content-Length", "comes from the body", "POST"},
		{"Ours", `{"X-Cronsheet-Node":"n"}`, "headers.X-Cronsheet-Node", "set by cronsheet", "POST"},
		{"IdempotencyKey", `{"Idempotency-Key":"k"}`, "headers.Idempotency-Key", "set by cronsheet", "POST"},
		{"Twice", `{"X-A":"1","x-a":"2"}`, "headers.x-a", "given twice", "POST"},
		{"TooMany", manyJSON, "headers", "at most 32 headers", "POST"},
		{"TooBig", `{"X-A":"` + big + `","X-B":"` + big + `","X-C":"` + big + `"}`, "headers", "bytes", "POST"},
		{"NotHTTP", `{"X-A":"1"}`, "headers", "only GET and POST", "KAFKA"},
		{"NotStrings", `{"X-A":1}`, "headers", "text", "POST"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			name := "http://h/hook"
			if tt.method == "KAFKA" {
				name = "topic"
			}
			_, err := build(t, fmt.Sprintf(`{"method":%q,"name":%q,"headers":%s}`, tt.method, name, tt.headers))
			var ve *task.ValidationError
			if !errors.As(err, &ve) || ve.Field != tt.field || !strings.Contains(ve.Msg, tt.want) {
				t.Fatalf("error = %v, want field %q saying %q", err, tt.field, tt.want)
			}
			if strings.Contains(err.Error(), "evil") || strings.Contains(err.Error(), "Bearer") {
				t.Errorf("the error repeats a header value: %v", err)
			}
		})
	}
}

func TestDigestCoversHeaders(t *testing.T) {
	t.Parallel()
	digest := func(headers string) string {
		t.Helper()
		b, err := build(t, `{"method":"POST","name":"http://h/hook","key":"k","headers":`+headers+`}`)
		if err != nil {
			t.Fatal(err)
		}
		return b.Task.Job.Digest
	}
	base := digest(`{"Authorization":"Bearer a"}`)
	if base == digest(`{"Authorization":"Bearer b"}`) || base == digest(`null`) ||
		base == digest(`{"Authorization":"Bearer a","X-B":"1"}`) {
		t.Error("requests with other headers have the same digest")
	}
	if base != digest(`{"authorization":"Bearer a"}`) {
		t.Error("names differing only in case give another digest")
	}
	if strings.Contains(base, "Bearer") {
		t.Errorf("digest %q holds the value", base)
	}
}
