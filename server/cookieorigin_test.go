package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"cronsheet/api/authapi"
	"cronsheet/store"
	"cronsheet/task"
)

// TestCookieNeedsOrigin: with auth required, a write
// signed in by the session cookie that sends neither Origin nor
// Sec-Fetch-Site is refused 403 naming Origin, and so is a WebSocket
// handshake with the cookie and no Origin (it was 101); the page's own
// requests (Origin, or Sec-Fetch-Site: same-origin) and a bearer token
// without either go through, on a running node.
func TestCookieNeedsOrigin(t *testing.T) {
	b := setup(t, requireAuth)
	admin := token(t, b, b.srv.store.(store.Users), "admin", task.RoleAdmin)
	sess := b.signIn(t, "admin", "first admin password")
	cookie := authapi.SessionCookie + "=" + sess
	row := func(id string) string { return `{"memo_id":"` + id + `","content":"c","when":"daily 08:00"}` }
	for _, c := range []struct {
		name    string
		headers map[string]string
		id      string
		want    int
	}{
		{"cookie, neither header", map[string]string{"Cookie": cookie}, "r1", http.StatusForbidden},
		{"cookie, Origin", map[string]string{"Cookie": cookie, "Origin": b.base}, "r2", http.StatusCreated},
		{"cookie, Sec-Fetch-Site same-origin", map[string]string{"Cookie": cookie, "Sec-Fetch-Site": "same-origin"}, "r3", http.StatusCreated},
		{"bearer, neither header", map[string]string{"Authorization": "Bearer " + admin}, "r4", http.StatusCreated},
	} {
		code, body := b.sendWith(t, "POST", "/api/v1/scenarios/memos/rows", row(c.id), c.headers)
		if code != c.want {
			t.Errorf("%s: %d %s, want %d", c.name, code, body, c.want)
		}
		if c.want == http.StatusForbidden {
			wantOriginError(t, c.name, body)
		}
	}
	if code, body := b.sendWith(t, "DELETE", "/api/v1/scenarios/memos/rows/r2", "", map[string]string{"Cookie": cookie}); code != http.StatusForbidden {
		t.Errorf("DELETE with the cookie alone: %d %s, want 403", code, body)
	}

	ws := "ws" + strings.TrimPrefix(b.base, "http") + "/api/v1/jobs/ws"
	dial := func(h http.Header) (int, string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, resp, err := websocket.Dial(ctx, ws, &websocket.DialOptions{HTTPHeader: h})
		if err == nil {
			_ = conn.Close(websocket.StatusNormalClosure, "")
			return http.StatusSwitchingProtocols, ""
		}
		if resp == nil {
			t.Fatalf("dial %v: %v", h, err)
		}
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(raw)
	}
	if code, body := dial(http.Header{"Cookie": {cookie}}); code != http.StatusForbidden {
		t.Errorf("WebSocket with the cookie and no Origin: %d %s, want 403", code, body)
	} else {
		wantOriginError(t, "WebSocket with the cookie and no Origin", body)
	}
	if code, body := dial(http.Header{"Cookie": {cookie}, "Origin": {b.base}}); code != http.StatusSwitchingProtocols {
		t.Errorf("WebSocket with the cookie and this Origin: %d %s, want 101", code, body)
	}
	if code, body := dial(http.Header{"Authorization": {"Bearer " + admin}}); code != http.StatusSwitchingProtocols {
		t.Errorf("WebSocket with a bearer token and no Origin: %d %s, want 101", code, body)
	}
}

// wantOriginError checks that body is the JSON error body naming Origin.
func wantOriginError(t *testing.T, what, body string) {
	t.Helper()
	var e struct{ Error, Code, Field string }
	if err := json.Unmarshal([]byte(body), &e); err != nil || e.Field != "Origin" || e.Code == "" || e.Error == "" {
		t.Errorf("%s: body %s, want the JSON error naming Origin", what, body)
	}
}

// signIn signs name in from this origin and returns the session cookie's
// value.
func (b *testBundle) signIn(t *testing.T, name, password string) string {
	t.Helper()
	req, err := http.NewRequest("POST", b.base+"/api/v1/login",
		strings.NewReader(`{"name":`+jsonString(name)+`,"password":`+jsonString(password)+`}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", b.base)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	for _, c := range resp.Cookies() {
		if c.Name == authapi.SessionCookie && c.Value != "" {
			return c.Value
		}
	}
	raw, _ := io.ReadAll(resp.Body)
	t.Fatalf("sign in %s: %d %s, no session cookie", name, resp.StatusCode, raw)
	return ""
}

// sendWith makes one request with a JSON body (when not "") and headers.
func (b *testBundle) sendWith(t *testing.T, method, path, body string, headers map[string]string) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, b.base+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// jsonString is s as a JSON string.
func jsonString(s string) string {
	raw, _ := json.Marshal(s)
	return string(raw)
}
