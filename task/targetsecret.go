package task

import (
	"cmp"
	"fmt"
	"maps"
	"net"
	"slices"
	"strings"
)

// Target secrets are write-only: an answer shows each one as SecretMask
// when it is set, and a PUT that sends SecretMask back keeps the stored
// value (RestoreSecrets). Secrets are, in an HTTP target:
//
//   - the password of the URL's user info (https://user:PASSWORD@host/);
//   - every query parameter value of the URL (?key=VALUE): keys are shown;
//   - every header value, except those of headers that carry no
//     credential: Accept, Accept-Language, Content-Language, Content-Type
//     and User-Agent.
//
// A value that is empty, or a lone {{placeholder}} (its text comes from
// the task's params at fire time, not from the target), is shown as it is.
// A target's body template, an exec target's command and a kafka target's
// topic and templates are not secrets.

// SecretMask stands for a secret value that is set.
const SecretMask = "***"

// publicHeader reports whether the value of header name is shown: it
// carries no credential.
func publicHeader(name string) bool {
	return slices.ContainsFunc([]string{"Accept", "Accept-Language", "Content-Language", "Content-Type", "User-Agent"},
		func(h string) bool { return strings.EqualFold(h, name) })
}

// Redacted returns a copy of t with its secrets masked, for answers and the
// audit trail; t itself is unchanged.
func (t *Target) Redacted() *Target {
	c := *t
	if t.HTTP == nil {
		return &c
	}
	h := *t.HTTP
	h.URL = RedactURL(h.URL)
	if len(t.HTTP.Headers) > 0 {
		h.Headers = make(map[string]string, len(t.HTTP.Headers))
		for k, v := range t.HTTP.Headers {
			if !publicHeader(k) {
				v = maskValue(v)
			}
			h.Headers[k] = v
		}
	}
	c.HTTP = &h
	return &c
}

// RestoreSecrets replaces each SecretMask in t (sent back by a client that
// read the target) with the value old holds in the same place: the URL's
// password (for the same user), the same query key's value (by order among equal keys), the
// same header's value. A mask where old has no value is a ValidationError
// naming http.url or http.headers. old may be nil (nothing stored).
//
// Stored secrets were given for one destination: when t's URL names
// another scheme, host or port than old's, no mask is restored and every
// one is refused, naming each (see MovedSecrets). Every door that updates
// a target (the API's PUT, and cronsheet apply and declared through it)
// goes through here.
func (t *Target) RestoreSecrets(old *Target) error {
	if t.HTTP == nil {
		return nil
	}
	var oldHTTP *HTTPTarget
	if old != nil {
		oldHTTP = old.HTTP
	}
	if oldHTTP != nil {
		if err := t.MovedSecrets(oldHTTP.URL); err != nil {
			return err
		}
	}
	if strings.Contains(t.HTTP.URL, SecretMask) {
		oldURL := ""
		if oldHTTP != nil {
			oldURL = oldHTTP.URL
		}
		u, err := restoreURL(t.HTTP.URL, oldURL)
		if err != nil {
			return err
		}
		t.HTTP.URL = u
	}
	for k, v := range t.HTTP.Headers {
		if v != SecretMask {
			continue
		}
		stored, ok := "", false
		if oldHTTP != nil {
			stored, ok = headerValue(oldHTTP.Headers, k)
		}
		if !ok || stored == "" {
			return Invalid("http.headers", "header %s is %s, which keeps a stored value, but the target has none stored: send the value", k, SecretMask)
		}
		t.HTTP.Headers[k] = stored
	}
	return nil
}

// MovedSecrets refuses the masks of t when its URL's destination (scheme,
// host and port, see Destination) is not that of oldURL, the URL the
// stored secrets were given for: a secret must never follow a target to
// another host. The ValidationError names every masked place (http.url's
// password and query keys, http.headers.<name>) in its message, and its
// field is the first one's. nil when the destination is the same or t
// holds no mask.
func (t *Target) MovedSecrets(oldURL string) error {
	if t.HTTP == nil {
		return nil
	}
	from, to := Destination(oldURL), Destination(t.HTTP.URL)
	if from == to {
		return nil
	}
	var places []string
	field := ""
	p := splitURL(t.HTTP.URL)
	if p.hasPass && p.pass == SecretMask {
		places, field = append(places, "http.url (the password)"), "http.url"
	}
	for _, kv := range p.query {
		if k, v, ok := strings.Cut(kv, "="); ok && v == SecretMask {
			places, field = append(places, fmt.Sprintf("http.url (query parameter %q)", k)), cmp.Or(field, "http.url")
		}
	}
	for _, k := range slices.Sorted(maps.Keys(t.HTTP.Headers)) {
		if t.HTTP.Headers[k] == SecretMask {
			places, field = append(places, "http.headers."+k), cmp.Or(field, "http.headers")
		}
	}
	if len(places) == 0 {
		return nil
	}
	return Invalid(field, "the destination moved from %s to %s, and stored secrets are never sent to another "+
		"scheme, host or port: send every secret again instead of %s in %s", from, to, SecretMask, strings.Join(places, ", "))
}

// Destination is where a URL (or URL template) sends: its scheme, host and
// port in lower case, the scheme's default port written out
// ("https://h.example:443"), without user info, path or query. It reads
// the text only, like splitURL: a template need not parse.
func Destination(raw string) string {
	p := splitURL(raw)
	scheme := strings.ToLower(strings.TrimSuffix(p.head, "://"))
	host := p.rest
	if i := strings.IndexByte(host, '/'); i >= 0 {
		host = host[:i]
	}
	host = strings.ToLower(host)
	if _, port, err := net.SplitHostPort(host); err != nil || port == "" {
		switch scheme {
		case "http":
			host = strings.TrimSuffix(host, ":") + ":80"
		case "https":
			host = strings.TrimSuffix(host, ":") + ":443"
		}
	}
	return scheme + "://" + host
}

// HasSecretMask reports whether t holds SecretMask where a secret stands,
// i.e. RestoreSecrets has something to restore.
func (t *Target) HasSecretMask() bool {
	if t.HTTP == nil {
		return false
	}
	if strings.Contains(t.HTTP.URL, SecretMask) {
		return true
	}
	for _, v := range t.HTTP.Headers {
		if v == SecretMask {
			return true
		}
	}
	return false
}

// headerValue returns the value of header name in h, names compared
// case-insensitively.
func headerValue(h map[string]string, name string) (string, bool) {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return "", false
}

// maskValue returns SecretMask for a value that may hold a secret.
func maskValue(v string) string {
	if v == "" || lonePlaceholder(v) {
		return v
	}
	return SecretMask
}

// lonePlaceholder reports whether v is exactly one {{name}}.
func lonePlaceholder(v string) bool {
	return strings.HasPrefix(v, "{{") && strings.HasSuffix(v, "}}") && strings.Count(v, "{{") == 1 && strings.Count(v, "}}") == 1
}

// urlParts is a URL (or URL template) cut where its secrets stand, by text
// only: a template need not parse as a URL, and re-encoding one would
// change its placeholders.
type urlParts struct {
	head       string // scheme and "://"
	user, pass string
	hasUser    bool
	hasPass    bool
	rest       string // host, port and path
	query      []string
	hasQuery   bool
	fragment   string // with its '#'
}

// splitURL cuts raw into its parts.
func splitURL(raw string) urlParts {
	var p urlParts
	rest := raw
	if i := strings.Index(rest, "://"); i >= 0 {
		p.head, rest = rest[:i+3], rest[i+3:]
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	if at := strings.LastIndex(rest[:end], "@"); at >= 0 {
		p.hasUser = true
		p.user = rest[:at]
		if c := strings.Index(p.user, ":"); c >= 0 {
			p.user, p.pass, p.hasPass = p.user[:c], p.user[c+1:], true
		}
		rest = rest[at+1:]
	}
	if h := strings.Index(rest, "#"); h >= 0 {
		p.fragment, rest = rest[h:], rest[:h]
	}
	if q := strings.Index(rest, "?"); q >= 0 {
		p.hasQuery = true
		p.query = strings.Split(rest[q+1:], "&")
		rest = rest[:q]
	}
	p.rest = rest
	return p
}

// String puts the parts back together.
func (p urlParts) String() string {
	var b strings.Builder
	b.WriteString(p.head)
	if p.hasUser {
		b.WriteString(p.user)
		if p.hasPass {
			b.WriteString(":" + p.pass)
		}
		b.WriteString("@")
	}
	b.WriteString(p.rest)
	if p.hasQuery {
		b.WriteString("?" + strings.Join(p.query, "&"))
	}
	b.WriteString(p.fragment)
	return b.String()
}

// RedactURL masks the secrets of a URL or URL template: the user info's
// password and every query value (see Target.Redacted).
func RedactURL(raw string) string {
	p := splitURL(raw)
	if p.hasPass {
		p.pass = maskValue(p.pass)
	}
	for i, kv := range p.query {
		if k, v, ok := strings.Cut(kv, "="); ok {
			p.query[i] = k + "=" + maskValue(v)
		}
	}
	return p.String()
}

// restoreURL replaces the masks of raw with old's values in the same place.
func restoreURL(raw, old string) (string, error) {
	p, o := splitURL(raw), splitURL(old)
	if p.hasPass && p.pass == SecretMask {
		if !o.hasPass || o.pass == "" || o.user != p.user {
			return "", Invalid("http.url", "the URL's password is %s, which keeps a stored one, but the target has none stored "+
				"for user %q: send the password", SecretMask, p.user)
		}
		p.pass = o.pass
	}
	seen := map[string]int{}
	for i, kv := range p.query {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			continue
		}
		n := seen[k]
		seen[k]++
		if v != SecretMask {
			continue
		}
		stored, found := nthQueryValue(o.query, k, n)
		if !found || stored == "" {
			return "", Invalid("http.url", "query parameter %q is %s, which keeps a stored value, but the target has none stored: send the value", k, SecretMask)
		}
		p.query[i] = k + "=" + stored
	}
	return p.String(), nil
}

// nthQueryValue returns the value of the n-th (from 0) pair with key k.
func nthQueryValue(query []string, k string, n int) (string, bool) {
	for _, kv := range query {
		key, v, ok := strings.Cut(kv, "=")
		if !ok || key != k {
			continue
		}
		if n == 0 {
			return v, true
		}
		n--
	}
	return "", false
}
