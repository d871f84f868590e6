package flowsapi

import (
	"testing"

	"cronsheet/api/httpapi"
	"cronsheet/internal/apitest"
)

// Fuzz targets of the decoders that read what clients send. `make fuzz`
// runs each for a while; under plain `go test` each runs its seeds, so the
// corpus is part of every test run. Every target checks that a refusal is
// an error the API can answer with (a 4xx naming a field), never a panic.

// FuzzFlowJSON: a flow body as POST /api/v1/flows reads it.
func FuzzFlowJSON(f *testing.F) {
	for _, s := range []string{
		`{"id":"f1","start":"a","steps":[{"id":"a","target":"hook","next":{"done":"b"}},{"id":"b","target":"hook"}]}`,
		`{"id":"f2","start":"a","max_depth":3,"steps":[{"id":"a","target":"t","params":{"x":"{{prev.output}}"},"next":{"done":"a"}}]}`,
		`{"id":"f3","start":"a","steps":[{"id":"a","target":"t","parallel":["b","c"]},{"id":"b","target":"t"},{"id":"c","target":"t"}]}`,
		`{"id":"f","start":"x","steps":[]}`, `{"steps":[null]}`, `{"id":"f","start":"a","steps":[{"id":"a","next":{"?":"a"}}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var b flowBody
		err := httpapi.ReadJSON(apitest.FuzzContext(body), &b, false)
		apitest.CheckClientError(t, "readJSON flow", err)
		if err != nil {
			return
		}
		fl := b.flow()
		if err := fl.Validate(); err != nil {
			apitest.CheckClientError(t, "Flow.Validate", err)
			return
		}
		fl.Depth()
		flowSummary(fl)
	})
}
