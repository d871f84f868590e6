package executors_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"cronsheet/executors"
	"cronsheet/task"
)

// hookRequest is what the test endpoint saw.
type hookRequest struct {
	Method, Path, RawQuery string
	Header                 http.Header
	Body                   string
}

type hookBundle struct {
	srv *httptest.Server

	mu   sync.Mutex
	reqs []hookRequest
}

func (b *hookBundle) requests() []hookRequest {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]hookRequest(nil), b.reqs...)
}

// onlyRequest returns the single request the endpoint received.
func (b *hookBundle) onlyRequest(t *testing.T) hookRequest {
	t.Helper()
	reqs := b.requests()
	if len(reqs) != 1 {
		t.Fatalf("endpoint received %d requests, want 1", len(reqs))
	}
	return reqs[0]
}

// setupHook starts an endpoint that records each request and then calls
// respond (nil: 200 "ok").
func setupHook(t *testing.T, respond http.HandlerFunc) *hookBundle {
	t.Helper()
	if respond == nil {
		respond = func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }
	}
	b := &hookBundle{}
	b.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		b.mu.Lock()
		b.reqs = append(b.reqs, hookRequest{Method: r.Method, Path: r.URL.Path,
			RawQuery: r.URL.RawQuery, Header: r.Header.Clone(), Body: string(body)})
		b.mu.Unlock()
		respond(w, r)
	}))
	t.Cleanup(b.srv.Close)
	return b
}

// newHTTP returns an HTTP executor closed at cleanup.
func newHTTP(t *testing.T, cfg executors.HTTPConfig) *executors.HTTP {
	t.Helper()
	h, err := executors.NewHTTP(nil, cfg)
	if err != nil {
		t.Fatalf("NewHTTP: %v", err)
	}
	t.Cleanup(h.Close)
	return h
}

// loopbackAllowed lets the executor reach httptest servers.
func loopbackAllowed() executors.HTTPConfig {
	return executors.HTTPConfig{Allow: []string{"127.0.0.0/8", "::1/128"}}
}

func httpDelivery(method, rawURL string) task.Delivery {
	return task.Delivery{
		TaskID:      "task-1",
		TriggerID:   "trg-42",
		Slot:        time.Date(2026, 3, 7, 8, 30, 0, 0, time.UTC),
		Attempt:     2,
		Channel:     task.ChannelHTTP,
		TriggerType: task.TriggerSchedule,
		Params:      map[string]string{"name": "Ann Lee", "q": "a&b=c"},
		Target: &task.Target{ID: "hook", Kind: task.ChannelHTTP, State: task.TargetRunning,
			HTTP: &task.HTTPTarget{Method: method, URL: rawURL}},
		Node: "node-7", Instance: "0a1b2c3d",
	}
}

// checkCallbackHeaders checks the headers every callback carries.
func checkCallbackHeaders(t *testing.T, got hookRequest, d task.Delivery) {
	t.Helper()
	for k, want := range map[string]string{
		"X-Cronsheet-Trigger-Id": d.TriggerID,
		"Idempotency-Key":        d.LedgerKey(),
		"User-Agent":             "cronsheet",
		"X-Cronsheet-Node":       d.Node,
		"X-Cronsheet-Instance":   d.Instance,
	} {
		if v := got.Header.Get(k); v != want {
			t.Errorf("header %s = %q, want %q", k, v, want)
		}
	}
}

func TestHTTP(t *testing.T) {
	t.Parallel()

	t.Run("PostsDocument", func(t *testing.T) {
		t.Parallel()
		b := setupHook(t, nil)
		d := httpDelivery("POST", b.srv.URL+"/hook")

		out, err := newHTTP(t, loopbackAllowed()).Execute(context.Background(), d)
		if err != nil {
			t.Fatalf("Execute: %v", err)
		}
		if out != "HTTP 200: ok" {
			t.Errorf("output = %q, want %q", out, "HTTP 200: ok")
		}
		got := b.onlyRequest(t)
		checkCallbackHeaders(t, got, d)
		if got.Method != "POST" || got.Path != "/hook" {
			t.Errorf("request = %s %s, want POST /hook", got.Method, got.Path)
		}
		if ct := got.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type = %q, want application/json", ct)
		}
		if got.Body != string(d.Document()) {
			t.Errorf("body = %s, want %s", got.Body, d.Document())
		}
	})

	t.Run("ExpandsTemplates", func(t *testing.T) {
		t.Parallel()
		b := setupHook(t, func(w http.ResponseWriter, _ *http.Request) {
			w.WriteHeader(http.StatusAccepted)
		})
		d := httpDelivery("POST", b.srv.URL+"/tasks/{{task_id}}/fire")
		d.Target.HTTP.Headers = map[string]string{"X-Who": "{{name}}", "Idempotency-Key": "mine"}
		d.Target.HTTP.Body = `{"who": "{{name}}", "attempt": {{attempt}}}`

		out, err := newHTTP(t, loopbackAllowed()).Execute(context.Background(), d)
		if err != nil {
			t.Fatalf("Execute: %v", err)
		}
		if out != "HTTP 202" {
			t.Errorf("output = %q, want %q", out, "HTTP 202")
		}
		got := b.onlyRequest(t)
		checkCallbackHeaders(t, got, d) // the target cannot override them
		if got.Path != "/tasks/task-1/fire" {
			t.Errorf("path = %q, want /tasks/task-1/fire", got.Path)
		}
		if v := got.Header.Get("X-Who"); v != "Ann Lee" {
			t.Errorf("X-Who = %q, want %q", v, "Ann Lee")
		}
		if want := `{"who": "Ann Lee", "attempt": 2}`; got.Body != want {
			t.Errorf("body = %s, want %s", got.Body, want)
		}
		if ct := got.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type = %q, want application/json", ct)
		}
	})

	t.Run("GetSendsParamsAsQuery", func(t *testing.T) {
		t.Parallel()
		b := setupHook(t, nil)
		d := httpDelivery("GET", b.srv.URL+"/ping?fixed=1")

		if _, err := newHTTP(t, loopbackAllowed()).Execute(context.Background(), d); err != nil {
			t.Fatalf("Execute: %v", err)
		}
		got := b.onlyRequest(t)
		checkCallbackHeaders(t, got, d)
		q, err := url.ParseQuery(got.RawQuery)
		if err != nil {
			t.Fatal(err)
		}
		for k, want := range map[string]string{"fixed": "1", "name": "Ann Lee", "q": "a&b=c"} {
			if q.Get(k) != want {
				t.Errorf("query %s = %q, want %q (raw %q)", k, q.Get(k), want, got.RawQuery)
			}
		}
		if got.Method != "GET" || got.Body != "" {
			t.Errorf("request = %s with body %q, want GET without body", got.Method, got.Body)
		}
	})

	t.Run("CapsOutput", func(t *testing.T) {
		t.Parallel()
		b := setupHook(t, func(w http.ResponseWriter, _ *http.Request) {
			io.WriteString(w, strings.Repeat("é", 1<<20))
		})
		out, err := newHTTP(t, loopbackAllowed()).Execute(context.Background(), httpDelivery("GET", b.srv.URL))
		if err != nil {
			t.Fatalf("Execute: %v", err)
		}
		if len(out) > task.MaxOutput || !strings.HasPrefix(out, "HTTP 200: éé") || !strings.HasSuffix(out, "[truncated]") {
			t.Errorf("output of %d bytes = %.40q…%q, want at most %d bytes marked truncated",
				len(out), out, out[max(0, len(out)-20):], task.MaxOutput)
		}
	})

	t.Run("TemplateErrorIsPermanent", func(t *testing.T) {
		t.Parallel()
		b := setupHook(t, nil)
		d := httpDelivery("POST", b.srv.URL+"/{{missing}}")
		_, err := newHTTP(t, loopbackAllowed()).Execute(context.Background(), d)
		if !task.IsPermanent(err) || !strings.Contains(err.Error(), "missing") {
			t.Errorf("err = %v, want permanent naming the placeholder", err)
		}
		if n := len(b.requests()); n != 0 {
			t.Errorf("endpoint received %d requests, want 0", n)
		}
	})

	t.Run("LineBreakInHeaderIsPermanent", func(t *testing.T) {
		t.Parallel()
		b := setupHook(t, nil)
		d := httpDelivery("POST", b.srv.URL)
		d.Params["name"] = "Ann\r\nX-Evil: 1"
		d.Target.HTTP.Headers = map[string]string{"X-Who": "{{name}}"}
		_, err := newHTTP(t, loopbackAllowed()).Execute(context.Background(), d)
		if !task.IsPermanent(err) {
			t.Errorf("err = %v, want permanent", err)
		}
	})
}

func TestHTTPStatus(t *testing.T) {
	t.Parallel()

	httpDate := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	tests := []struct {
		name       string
		status     int
		headers    map[string]string
		permanent  bool
		retryAfter time.Duration // 0: no RetryDelay; -1: any positive delay
	}{
		{name: "BadRequest", status: 400, permanent: true},
		{name: "NotFound", status: 404, permanent: true},
		{name: "ServerError", status: 500},
		{name: "BadGateway", status: 502},
		{name: "UnavailableWithRetryAfter", status: 503, headers: map[string]string{"Retry-After": "7"}, retryAfter: 7 * time.Second},
		{name: "TooManyRequestsSeconds", status: 429, headers: map[string]string{"Retry-After": "120"}, retryAfter: 120 * time.Second},
		{name: "TooManyRequestsDate", status: 429, headers: map[string]string{"Retry-After": httpDate}, retryAfter: -1},
		{name: "TooManyRequestsBare", status: 429, retryAfter: executors.DefaultRetryAfter},
		{name: "RequestTimeout", status: 408},
		{name: "RequestTimeoutWithRetryAfter", status: 408, headers: map[string]string{"Retry-After": "3"}, retryAfter: 3 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := setupHook(t, func(w http.ResponseWriter, _ *http.Request) {
				for k, v := range tt.headers {
					w.Header().Set(k, v)
				}
				w.WriteHeader(tt.status)
				io.WriteString(w, "reason from server")
			})
			out, err := newHTTP(t, loopbackAllowed()).Execute(context.Background(), httpDelivery("POST", b.srv.URL))
			if err == nil {
				t.Fatalf("Execute = %q, nil; want an error", out)
			}
			var se *executors.HTTPStatusError
			if !errors.As(err, &se) || se.Code != tt.status {
				t.Errorf("err = %v, want an HTTPStatusError with code %d", err, tt.status)
			}
			if msg := err.Error(); !strings.Contains(msg, "reason from server") {
				t.Errorf("err = %q, want the response body in it", msg)
			}
			if got := task.IsPermanent(err); got != tt.permanent {
				t.Errorf("IsPermanent = %v, want %v (err %v)", got, tt.permanent, err)
			}
			delay, ok := task.RetryDelay(err)
			switch {
			case tt.retryAfter == 0 && ok:
				t.Errorf("RetryDelay = %v, want none", delay)
			case tt.retryAfter > 0 && delay != tt.retryAfter:
				t.Errorf("RetryDelay = %v, %v; want %v", delay, ok, tt.retryAfter)
			case tt.retryAfter < 0 && (!ok || delay <= 0 || delay > 90*time.Second):
				t.Errorf("RetryDelay = %v, %v; want (0, 90s]", delay, ok)
			}
		})
	}
}

func TestHTTPRedirectNotFollowed(t *testing.T) {
	t.Parallel()
	target := setupHook(t, nil)
	b := setupHook(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.srv.URL+"/elsewhere", http.StatusFound)
	})
	_, err := newHTTP(t, loopbackAllowed()).Execute(context.Background(), httpDelivery("POST", b.srv.URL))
	if !task.IsPermanent(err) || !strings.Contains(err.Error(), target.srv.URL+"/elsewhere") {
		t.Errorf("err = %v, want permanent naming the Location", err)
	}
	if n := len(target.requests()); n != 0 {
		t.Errorf("redirect target received %d requests, want 0", n)
	}
}

func TestHTTPTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	b := setupHook(t, func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) }) // runs before the server closes
	h := newHTTP(t, loopbackAllowed())

	t.Run("ContextDeadline", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		_, err := h.Execute(ctx, httpDelivery("POST", b.srv.URL))
		if err == nil || task.IsPermanent(err) || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want retryable deadline exceeded", err)
		}
	})
	t.Run("TargetTimeout", func(t *testing.T) {
		d := httpDelivery("GET", b.srv.URL)
		d.Target.HTTP.Timeout = 1
		_, err := h.Execute(context.Background(), d)
		if err == nil || task.IsPermanent(err) || !strings.Contains(err.Error(), "timed out") {
			t.Errorf("err = %v, want retryable timeout", err)
		}
	})
}

func TestHTTPConnectionRefusedIsRetryable(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	_, err = newHTTP(t, loopbackAllowed()).Execute(context.Background(), httpDelivery("POST", "http://"+addr+"/"))
	if err == nil || task.IsPermanent(err) {
		t.Errorf("err = %v, want retryable", err)
	}
}

func TestHTTPGuard(t *testing.T) {
	t.Parallel()

	t.Run("RefusesLoopbackByDefault", func(t *testing.T) {
		t.Parallel()
		b := setupHook(t, nil)
		_, err := newHTTP(t, executors.HTTPConfig{}).Execute(context.Background(), httpDelivery("POST", b.srv.URL))
		want := "callback host 127.0.0.1 refused: loopback addresses need an allow entry in the live settings' allow list"
		if !task.IsPermanent(err) || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want permanent %q", err, want)
		}
		if n := len(b.requests()); n != 0 {
			t.Errorf("endpoint received %d requests, want 0", n)
		}
	})

	t.Run("RefusesNameResolvingToLoopbackAtDial", func(t *testing.T) {
		t.Parallel()
		b := setupHook(t, nil)
		h := newHTTP(t, executors.HTTPConfig{})
		if err := h.Guard().Check("localhost"); err != nil {
			t.Fatalf("Check(localhost) = %v; want nil: a name is checked when dialed", err)
		}
		u := strings.Replace(b.srv.URL, "127.0.0.1", "localhost", 1)
		_, err := h.Execute(context.Background(), httpDelivery("POST", u))
		var refused *executors.HostRefusedError
		if !task.IsPermanent(err) || !errors.As(err, &refused) || !refused.Resolved || !refused.IP.IsLoopback() {
			t.Fatalf("err = %v, want permanent refusal of the address localhost resolved to", err)
		}
		if !strings.Contains(err.Error(), "callback host localhost refused: it resolved to") {
			t.Errorf("err = %q, want it to name the host and the address", err)
		}
		if n := len(b.requests()); n != 0 {
			t.Errorf("endpoint received %d requests, want 0", n)
		}
	})

	t.Run("AllowsNameEntry", func(t *testing.T) {
		t.Parallel()
		b := setupHook(t, nil)
		h := newHTTP(t, executors.HTTPConfig{Allow: []string{"localhost"}})
		u := strings.Replace(b.srv.URL, "127.0.0.1", "localhost", 1)
		if _, err := h.Execute(context.Background(), httpDelivery("POST", u)); err != nil {
			t.Fatalf("Execute: %v", err)
		}
		b.onlyRequest(t)
	})

	t.Run("DenyBeatsDefaultButNotAllow", func(t *testing.T) {
		t.Parallel()
		b := setupHook(t, nil)
		h := newHTTP(t, executors.HTTPConfig{Allow: []string{"127.0.0.1"}, Deny: []string{"127.0.0.0/8"}})
		if _, err := h.Execute(context.Background(), httpDelivery("POST", b.srv.URL)); err != nil {
			t.Fatalf("Execute: %v", err)
		}
		h = newHTTP(t, executors.HTTPConfig{Allow: []string{"127.0.0.2"}, Deny: []string{"localhost"}})
		u := strings.Replace(b.srv.URL, "127.0.0.1", "localhost", 1)
		_, err := h.Execute(context.Background(), httpDelivery("POST", u))
		if !task.IsPermanent(err) || !strings.Contains(err.Error(), `deny entry "localhost" in the live settings' deny list`) {
			t.Errorf("err = %v, want permanent refusal by the deny entry", err)
		}
	})
}

func TestHostGuardCheck(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		allow, deny []string
		host        string
		refused     string // "" when permitted, else a substring of the error
	}{
		{name: "PublicIPv4", host: "8.8.8.8"},
		{name: "PublicIPv6", host: "2606:4700:4700::1111"},
		{name: "BracketedIPv6", host: "[2606:4700:4700::1111]"},
		{name: "Name", host: "api.example.com"},
		{name: "Localhost", host: "localhost"}, // checked at dial time
		{name: "Loopback", host: "127.0.0.1", refused: "callback host 127.0.0.1 refused: loopback addresses need an allow entry in the live settings' allow list"},
		{name: "LoopbackHigh", host: "127.9.9.9", refused: "loopback"},
		{name: "LoopbackIPv6", host: "::1", refused: "loopback"},
		{name: "MappedLoopback", host: "::ffff:127.0.0.1", refused: "loopback"},
		{name: "Private10", host: "10.1.2.3", refused: "private"},
		{name: "Private172", host: "172.16.0.1", refused: "private"},
		{name: "Private192", host: "192.168.1.1", refused: "private"},
		{name: "UniqueLocal", host: "fd00::1", refused: "private"},
		{name: "Metadata", host: "169.254.169.254", refused: "link-local"},
		{name: "LinkLocalIPv6", host: "fe80::1", refused: "link-local"},
		{name: "Unspecified", host: "0.0.0.0", refused: "unspecified"},
		{name: "UnspecifiedIPv6", host: "::", refused: "unspecified"},
		{name: "Multicast", host: "224.0.0.1", refused: "multicast"},
		{name: "MulticastIPv6", host: "ff02::1", refused: "multicast"},
		{name: "CarrierNAT", host: "100.64.0.1", refused: "shared"},
		{name: "Broadcast", host: "255.255.255.255", refused: "reserved"},
		{name: "Documentation1", host: "192.0.2.1", refused: "documentation addresses need an allow entry"},
		{name: "Documentation2", host: "198.51.100.200", refused: "documentation"},
		{name: "Documentation3", host: "203.0.113.9", refused: "documentation"},
		{name: "DocumentationIPv6", host: "2001:db8::5", refused: "documentation"},
		{name: "AllowDocumentation", allow: []string{"192.0.2.0/24"}, host: "192.0.2.1"},
		{name: "NAT64Loopback", host: "64:ff9b::7f00:1", refused: "loopback (via NAT64)"},
		{name: "NAT64Public", host: "64:ff9b::808:808"},
		{name: "Empty", host: "", refused: "no host"},
		{name: "AllowCIDR", allow: []string{"127.0.0.0/8"}, host: "127.0.0.1"},
		{name: "AllowIPv6CIDR", allow: []string{"::1/128"}, host: "::1"},
		{name: "AllowMappedCIDR", allow: []string{"::ffff:10.0.0.0/104"}, host: "10.1.2.3"},
		{name: "AllowBeatsDeny", allow: []string{"10.0.0.0/8"}, deny: []string{"10.1.0.0/16"}, host: "10.1.2.3"},
		{name: "DenyPublicCIDR", deny: []string{"8.8.8.0/24"}, host: "8.8.8.8", refused: `callback host 8.8.8.8 refused: it matches deny entry "8.8.8.0/24" in the live settings' deny list`},
		{name: "DenyName", deny: []string{"API.example.com"}, host: "api.example.com.", refused: "deny list"},
		{name: "DenyDomainSelf", deny: []string{".example.com"}, host: "example.com", refused: "deny list"},
		{name: "DenyDomainSub", deny: []string{".example.com"}, host: "a.b.Example.com", refused: "deny list"},
		{name: "DenyDomainNotSuffixWord", deny: []string{".example.com"}, host: "notexample.com"},
		{name: "AllowDomainBeatsDenyDomain", allow: []string{".ok.example.com"}, deny: []string{".example.com"}, host: "x.ok.example.com"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g, err := executors.NewHostGuard(tt.allow, tt.deny)
			if err != nil {
				t.Fatalf("NewHostGuard: %v", err)
			}
			err = g.Check(tt.host)
			switch {
			case tt.refused == "" && err != nil:
				t.Errorf("Check(%q) = %v, want nil", tt.host, err)
			case tt.refused != "" && (err == nil || !strings.Contains(err.Error(), tt.refused)):
				t.Errorf("Check(%q) = %v, want an error containing %q", tt.host, err, tt.refused)
			case err != nil && !errors.Is(err, task.ErrInvalid):
				t.Errorf("Check(%q) = %v, want it to match task.ErrInvalid", tt.host, err)
			}
		})
	}
}

func TestNewHTTPConfigErrors(t *testing.T) {
	t.Parallel()
	for _, cfg := range []executors.HTTPConfig{
		{Allow: []string{"10.0.0.0/33"}},
		{Allow: []string{""}},
		{Deny: []string{"not a host!"}},
		{Deny: []string{"fe80::/200"}},
	} {
		if _, err := executors.NewHTTP(nil, cfg); err == nil {
			t.Errorf("NewHTTP(%+v) = nil error, want one", cfg)
		}
	}
}

// TestHTTPRaw: a raw target (a job's) sends its URL and body as they are,
// braces included, and adds no params to a GET's query.
func TestHTTPRaw(t *testing.T) {
	t.Parallel()
	var gotURL, gotBody string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		gotURL, gotBody = r.URL.String(), string(b)
	}))
	defer srv.Close()
	h, err := executors.NewHTTP(nil, executors.HTTPConfig{Allow: []string{"127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	d := task.Delivery{TaskID: "j1", TriggerID: "tr_1", Slot: time.Now(), Attempt: 1, Params: map[string]string{"p": "1"},
		Target: &task.Target{ID: "job", Kind: task.ChannelHTTP, State: task.TargetRunning,
			HTTP: &task.HTTPTarget{Method: "POST", URL: srv.URL + "/hook?x={{y}}", Body: `{"a":"{{not a template}}"}`, Raw: true}}}
	if _, err := h.Execute(t.Context(), d); err != nil {
		t.Fatalf("Execute: %v", err)
	}
	if gotURL != "/hook?x={{y}}" && gotURL != "/hook?x=%7B%7By%7D%7D" || gotBody != `{"a":"{{not a template}}"}` {
		t.Errorf("raw POST sent url %q body %q", gotURL, gotBody)
	}
	d.Target.HTTP = &task.HTTPTarget{Method: "GET", URL: srv.URL + "/q?a=1", Raw: true}
	if _, err := h.Execute(t.Context(), d); err != nil {
		t.Fatalf("Execute: %v", err)
	}
	if gotURL != "/q?a=1" {
		t.Errorf("raw GET sent url %q, want the URL as it is, without params", gotURL)
	}
}
