package targetsapi

import (
	"testing"

	"cronsheet/api/httpapi"
	"cronsheet/internal/apitest"
)

// Fuzz targets of the decoders that read what clients send. `make fuzz`
// runs each for a while; under plain `go test` each runs its seeds, so the
// corpus is part of every test run. Every target checks that a refusal is
// an error the API can answer with (a 4xx naming a field), never a panic.

// FuzzTargetJSON: a target body as POST /api/v1/targets reads it.
func FuzzTargetJSON(f *testing.F) {
	for _, s := range []string{
		`{"id":"hook","kind":"http","state":"running","http":{"method":"POST","url":"http://127.0.0.1:9/cb/{{task_id}}"}}`,
		`{"id":"h2","kind":"http","http":{"method":"GET","url":"https://example.com/{{day}}?q={{ x }}","headers":{"X-A":"{{slot}}"},"body":"{{trigger_id}}"},"feedback_timeout":2}`,
		`{"id":"k","kind":"kafka","kafka":{"topic":"t","key":"{{task_id}}","value":"{{params}}"}}`,
		`{"id":"e","kind":"exec","exec":{"command":"hello","args":["{{name}}"]}}`,
		`{"id":"b","kind":"builtin","builtin":{"action":"start_flow","flows":["f1"]}}`,
		`{"id":"b2","kind":"builtin","builtin":{"action":"cleanup_runs","keep_age":3600}}`,
		`{"id":"","kind":"nope"}`, `{"id":"x","http":{"url":"{{"}}`, `{"version":"1"}`, `null`, `{"id":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var b targetBody
		err := httpapi.ReadJSON(apitest.FuzzContext(body), &b, false)
		apitest.CheckClientError(t, "readJSON target", err)
		if err != nil {
			return
		}
		tg := b.target()
		apitest.CheckClientError(t, "Target.Validate", tg.Validate())
		_, err = httpapi.BodyIfMatch("", b.Version)
		apitest.CheckClientError(t, "target version", err)
	})
}
