package webtable_test

import (
	"bufio"
	"cronsheet/internal/apitest/fullapi"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestOversizedBodyWithExpectContinue sends only the headers of a request
// that announces an oversized body and asks `Expect: 100-continue`, over a
// real connection: the server must answer 413 at once, never "100
// Continue" (which invites the client to send megabytes it then refuses).
func TestOversizedBodyWithExpectContinue(t *testing.T) {
	t.Parallel()
	b := fullapi.Setup(t)
	srv := httptest.NewServer(b.Router)
	t.Cleanup(srv.Close)

	tests := []struct {
		name, method, path, contentType string
		length                          int
	}{
		{"CreateRow", http.MethodPost, "/api/v1/scenarios/memos/rows", "application/json", 10 << 20},
		{"PatchRow", http.MethodPatch, "/api/v1/scenarios/memos/rows/r1", "application/json", 300 << 10},
		{"Import", http.MethodPost, "/api/v1/scenarios/memos/import", "text/csv", 5 << 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			status, line := sendHeadersOnly(t, srv.Listener.Addr().String(), tt.method, tt.path, tt.contentType, tt.length)
			if status != http.StatusRequestEntityTooLarge {
				t.Fatalf("first answer = %q, want 413", line)
			}
		})
	}
	t.Run("Table", func(t *testing.T) {
		t.Parallel()
		tb := setupTable(t)
		tsrv := httptest.NewServer(tb.router)
		t.Cleanup(tsrv.Close)
		status, line := sendHeadersOnly(t, tsrv.Listener.Addr().String(), http.MethodPost,
			"/api/v1/scenarios/memos/table", "application/x-www-form-urlencoded", 1<<20)
		if status != http.StatusRequestEntityTooLarge {
			t.Fatalf("first answer = %q, want 413", line)
		}
	})
}

// sendHeadersOnly writes a request's headers with Expect: 100-continue and
// no body, and returns the status and line of the first answer.
func sendHeadersOnly(t *testing.T, addr, method, path, contentType string, length int) (int, string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n",
		method, path, addr, contentType, length)
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		t.Fatalf("read the answer: %v", err)
	}
	var status int
	if _, err := fmt.Sscanf(strings.TrimSpace(line), "HTTP/1.1 %d", &status); err != nil {
		t.Fatalf("answer %q: %v", line, err)
	}
	return status, line
}
