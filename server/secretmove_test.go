package server

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"cronsheet/config"
)

// credHook is a callback endpoint that keeps what each call carried where
// secrets stand: the user info's password (sent as basic auth), the query
// and the X-Api-Key header. It answers status.
type credHook struct {
	srv    *httptest.Server
	mu     sync.Mutex
	calls  []credCall
	status int
}

// credCall is what one call to a credHook carried.
type credCall struct {
	path, password, apiKey string
	query                  url.Values
}

func startCredHook(t *testing.T, status int) *credHook {
	t.Helper()
	h := &credHook{status: status}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, pw, _ := r.BasicAuth()
		h.mu.Lock()
		h.calls = append(h.calls, credCall{path: r.URL.Path, password: pw, apiKey: r.Header.Get("X-Api-Key"), query: r.URL.Query()})
		h.mu.Unlock()
		w.WriteHeader(h.status)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *credHook) seen() []credCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]credCall(nil), h.calls...)
}

// carrying counts the calls that carried any of secrets (in the password,
// a query value or X-Api-Key).
func (h *credHook) carrying(secrets ...string) int {
	n := 0
	for _, c := range h.seen() {
		text := c.password + " " + c.apiKey + " " + c.query.Encode()
		for _, s := range secrets {
			if strings.Contains(text, s) {
				n++
				break
			}
		}
	}
	return n
}

// TestTargetSecretsStayWithDestination: an admin PUTs
// a target read back (its secrets ***) with the URL moved to another host
// and port: 400 naming every secret, and the stored secrets never reach
// the new host, counted at that host while the target goes on firing at
// its own. Sent again in full, the secrets go to the new host.
func TestTargetSecretsStayWithDestination(t *testing.T) {
	home, elsewhere := startCredHook(t, http.StatusOK), startCredHook(t, http.StatusOK)
	b := setup(t, func(c *config.Config) { c.HTTP.Allow = []string{"127.0.0.0/8"} })
	const pass, key, apiKey = "pw-4711", "key-0815", "tok-2342"
	homeHost, elsewhereHost := strings.TrimPrefix(home.srv.URL, "http://"), strings.TrimPrefix(elsewhere.srv.URL, "http://")
	target := map[string]any{"id": "mover", "kind": "http", "state": "running", "http": map[string]any{"method": "POST",
		"url": "http://bob:" + pass + "@" + homeHost + "/h?apikey=" + key, "headers": map[string]string{"X-Api-Key": apiKey}}}
	if code := b.call(t, "POST", "/api/v1/targets", target, nil); code != http.StatusCreated {
		t.Fatalf("create target: status %d", code)
	}
	if code := b.call(t, "POST", "/api/v1/scenarios/memos/rows",
		map[string]any{"memo_id": "mv", "content": "ping", "when": "every 1s", "targets": "mover"}, nil); code != http.StatusCreated {
		t.Fatalf("create row: status %d", code)
	}
	eventually(t, "a fire at home with the secrets", func() bool {
		return home.carrying(pass) > 0 && home.carrying(key) > 0 && home.carrying(apiKey) > 0
	})

	var shown map[string]any
	if code := b.call(t, "GET", "/api/v1/targets/mover", nil, &shown); code != http.StatusOK {
		t.Fatalf("GET target: status %d", code)
	}
	raw, _ := json.Marshal(shown)
	moved := strings.ReplaceAll(string(raw), homeHost, elsewhereHost)
	if !strings.Contains(moved, `bob:***@`+elsewhereHost) || !strings.Contains(moved, `apikey=***`) || !strings.Contains(moved, `"X-Api-Key":"***"`) {
		t.Fatalf("the answer sent back is not the masked one: %s", moved)
	}
	code, body := b.send(t, "PUT", "/api/v1/targets/mover", "", moved)
	var e struct{ Error, Field string }
	_ = json.Unmarshal([]byte(body), &e)
	if code != http.StatusBadRequest || e.Field != "http.url" {
		t.Errorf("PUT moving the URL with ***: %d %s, want 400 naming http.url", code, body)
	}
	for _, place := range []string{"http.url (the password)", `http.url (query parameter \"apikey\")`, "http.headers.X-Api-Key"} {
		if !strings.Contains(body, place) {
			t.Errorf("the refusal does not name %s: %s", place, body)
		}
	}
	// Fires go on; after two more (wherever they went), count at the other
	// host, then check they went home.
	n := len(home.seen())
	eventually(t, "two more fires", func() bool { return len(home.seen())+len(elsewhere.seen()) >= n+2 })
	if got := elsewhere.carrying(pass, key, apiKey); got != 0 {
		t.Fatalf("the new host received the stored secrets on %d calls", got)
	}
	eventually(t, "two more fires at home", func() bool { return len(home.seen()) >= n+2 })

	// Every secret sent again: the target moves, with the new ones.
	fresh := strings.NewReplacer("bob:***@", "bob:new-pw@", "apikey=***", "apikey=new-key", `"X-Api-Key":"***"`,
		`"X-Api-Key":"new-tok"`).Replace(moved)
	if code, body := b.send(t, "PUT", "/api/v1/targets/mover", "", fresh); code != http.StatusOK {
		t.Fatalf("PUT moving the URL with every secret: %d %s", code, body)
	}
	eventually(t, "a fire at the new host with the new secrets", func() bool {
		return elsewhere.carrying("new-pw") > 0 && elsewhere.carrying("new-key") > 0 && elsewhere.carrying("new-tok") > 0
	})
	if got := elsewhere.carrying(pass, key, apiKey); got != 0 {
		t.Errorf("the new host received the old secrets on %d calls", got)
	}
}
