package jobapi

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"time"

	"cronsheet/task"
)

// digestFields are the parts of a request that define its job, as Build
// read them: the method and name (trimmed, the method in capitals), the
// params and cc as JSON without insignificant spaces, when it runs (the
// delay in seconds as given, the at instant, or the cron schedule with its
// time zone), and the retries, attempt deadline and overlap the job got
// (a default and the same value given are alike), and the headers (names
// in canonical form: names differing only in case are alike). Key and
// wait are not in it: the key names the job, and wait only shapes the
// answer. The digest is stored with the job and never shown (it covers
// the headers' values, which are write-only).
type digestFields struct {
	Method     task.JobMethod    `json:"method"`
	Name       string            `json:"name"`
	Params     json.RawMessage   `json:"params,omitempty"`
	CC         json.RawMessage   `json:"cc,omitempty"`
	Delay      float64           `json:"delay"`
	At         string            `json:"at,omitempty"`
	Cron       string            `json:"cron,omitempty"`
	MaxRetries int               `json:"max_retries"`
	TTL        time.Duration     `json:"ttl"`
	Overlap    task.Overlap      `json:"overlap"`
	Headers    map[string]string `json:"headers,omitempty"`
}

// digest returns the digest of request r that built t (task.Job.Digest):
// two requests under one key define the same job exactly when their
// digests are equal.
func digest(r Request, t *task.Task) string {
	d := digestFields{Method: t.Job.Method, Name: t.Job.Name, Params: compact(r.Params), CC: compact(r.CC),
		MaxRetries: t.MaxRetries, TTL: t.TTL, Overlap: t.Overlap}
	if t.Overlap == "" {
		d.Overlap = task.OverlapSkip
	}
	if len(t.Job.Headers) > 0 {
		d.Headers = make(map[string]string, len(t.Job.Headers))
		for k, v := range t.Job.Headers {
			d.Headers[http.CanonicalHeaderKey(k)] = v
		}
	}
	switch {
	case t.CronPara != "":
		d.Cron = t.CronPara + " " + t.TZ
	case r.At != "":
		if at, err := time.Parse(time.RFC3339Nano, r.At); err == nil {
			d.At = at.UTC().Truncate(time.Millisecond).Format(time.RFC3339Nano)
		}
	case r.Delay != nil:
		d.Delay = *r.Delay
	}
	b, _ := json.Marshal(d) // plain fields: cannot fail
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// compact returns raw without insignificant spaces (raw when it is not
// JSON, nil when empty or null).
func compact(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return raw
	}
	return buf.Bytes()
}
