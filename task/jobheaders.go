package task

import (
	"maps"
	"net/http"
	"slices"
	"strings"
)

// Bounds on a job's headers (Job.Headers).
const (
	MaxJobHeaders     = 32
	MaxJobHeaderBytes = 8 << 10 // names and values together
)

// refusedJobHeader says why a job may not set header canon (in canonical
// form), or "" when it may: a header of one connection (hop-by-hop, RFC
// 9110 7.6.1), one the HTTP client writes from the request itself, or one
// cronsheet sets on every callback.
func refusedJobHeader(canon string) string {
	switch canon {
	case "Connection", "Keep-Alive", "Proxy-Connection", "Proxy-Authenticate", "Proxy-Authorization",
		"Te", "Trailer", "Transfer-Encoding", "Upgrade":
		return "is hop-by-hop"
	case "Host":
		return "comes from the URL"
	case "Content-Length":
		return "comes from the body"
	case "Idempotency-Key", "User-Agent":
		return "is set by cronsheet on every callback"
	}
	if strings.HasPrefix(canon, "X-Cronsheet-") {
		return "is set by cronsheet on every callback (X-Cronsheet-*)"
	}
	return ""
}

// ValidateJobHeaders checks the headers of a job of method m: only GET
// and POST jobs send headers; at most MaxJobHeaders of them and
// MaxJobHeaderBytes in all; each name an RFC 9110 token given once (names
// are case-insensitive) and not one of the refused headers (hop-by-hop,
// Host, Content-Length, those cronsheet sets: Idempotency-Key,
// User-Agent, X-Cronsheet-*); no value holds CR, LF or NUL. Errors are
// *ValidationError naming "headers" or "headers.<name>"; none repeats a
// value.
func ValidateJobHeaders(m JobMethod, h map[string]string) error {
	if len(h) == 0 {
		return nil
	}
	if m != JobGET && m != JobPOST {
		return Invalid("headers", "only GET and POST jobs send headers; this is %s", m)
	}
	if len(h) > MaxJobHeaders {
		return Invalid("headers", "at most %d headers; got %d", MaxJobHeaders, len(h))
	}
	size := 0
	seen := make(map[string]string, len(h))
	for _, name := range slices.Sorted(maps.Keys(h)) {
		v := h[name]
		size += len(name) + len(v)
		field := "headers." + Truncate(name, 64)
		if !headerToken(name) {
			return Invalid(field, "is not a header name: use letters, digits and !#$%%&'*+-.^_`|~")
		}
		canon := http.CanonicalHeaderKey(name)
		if other, dup := seen[canon]; dup {
			return Invalid(field, "given twice, as %s too (header names are case-insensitive)", other)
		}
		seen[canon] = name
		if why := refusedJobHeader(canon); why != "" {
			return Invalid(field, "%s and may not be given", why)
		}
		if strings.ContainsAny(v, "\r\n\x00") {
			return Invalid(field, "the value may not hold CR, LF or NUL")
		}
	}
	if size > MaxJobHeaderBytes {
		return Invalid("headers", "at most %d bytes of names and values in all; got %d", MaxJobHeaderBytes, size)
	}
	return nil
}

// headerToken reports whether s is an RFC 9110 token.
func headerToken(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case strings.ContainsRune("!#$%&'*+-.^_`|~", r):
		default:
			return false
		}
	}
	return true
}

// RedactedHeaders returns j's header names, each with the value
// SecretMask: a job's headers are write-only, like a target's secrets
// (every answer, list, event and log shows this). nil when j has none.
func (j *Job) RedactedHeaders() map[string]string {
	if len(j.Headers) == 0 {
		return nil
	}
	out := make(map[string]string, len(j.Headers))
	for k := range j.Headers {
		out[k] = SecretMask
	}
	return out
}

// Redacted returns a copy of j for answers: its URL's credentials masked
// (ShownName), its headers masked (RedactedHeaders) and without its
// digest (the digest covers the headers' values).
func (j *Job) Redacted() *Job {
	c := *j
	c.Name = j.ShownName()
	c.Headers = j.RedactedHeaders()
	c.Digest = ""
	return &c
}

// ShownName is j's name as every answer, list, title and export shows it:
// a GET or POST job's URL with its secrets masked as a target's are
// (RedactURL: the user info's password and every query value), other
// methods' names as they are. The delivery uses Name itself.
func (j *Job) ShownName() string {
	if j.Method == JobGET || j.Method == JobPOST {
		return RedactURL(j.Name)
	}
	return j.Name
}
