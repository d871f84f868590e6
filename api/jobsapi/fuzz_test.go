package jobsapi_test

import (
	"errors"
	"testing"
	"time"

	"cronsheet/jobs"
	"cronsheet/task"
)

// Fuzz targets of the decoders that read what clients send. `make fuzz`
// runs each for a while; under plain `go test` each runs its seeds, so the
// corpus is part of every test run. Every target checks that a refusal is
// an error the API can answer with (a 4xx naming a field), never a panic.

// fuzzNow is the clock of the fuzzed jobs.
var fuzzNow = time.Date(2026, 6, 15, 9, 30, 0, 0, time.UTC)

// FuzzJobJSON: a job or a batch of jobs as POST /api/v1/jobs reads them,
// then builds their tasks.
func FuzzJobJSON(f *testing.F) {
	for _, s := range []string{
		`{"url":"http://127.0.0.1:9/hook","in":2,"body":{"a":1}}`,
		`{"url":"http://h/x","cron":"every 5m","key":"k1","cc":"1 3","max_retries":2,"ttl":1.5,"overlap":"queue"}`,
		`{"url":"http://h/x","at":"2026-07-01T00:00:00Z","cc":{"group":"g","limit":2},"params":{"day":"mon"}}`,
		`[{"url":"http://h/1","in":1},{"url":"http://h/2","in":2}]`,
		`{"jobs":[{"url":"http://h/1","in":1}]}`,
		`{"url":"http://h","in":-1}`, `{"url":"http://h","wait":1e308}`, `{"cc":"x y z"}`, `[]`, `{"jobs":null}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		reqs, err := jobs.ParseBatch(body)
		if err != nil {
			if !errors.Is(err, task.ErrInvalid) {
				t.Fatalf("ParseBatch: %v is not a validation error", err)
			}
			reqs = nil
		}
		if r, err := jobs.ParseRequest(body); err == nil {
			reqs = append(reqs, r)
		} else if !errors.Is(err, task.ErrInvalid) {
			t.Fatalf("ParseRequest: %v is not a validation error", err)
		}
		for _, r := range reqs {
			if _, err := jobs.Build(r, "job_fuzz", fuzzNow); err != nil && !errors.Is(err, task.ErrInvalid) {
				t.Fatalf("Build: %v is not a validation error", err)
			}
		}
	})
}
