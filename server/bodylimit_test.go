package server

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
)

// TestJobsBodyLimits: a jobs submission (one job or a batch) past 256 KiB
// is refused with 413, and one that announces such a body with
// `Expect: 100-continue` gets the 413 at once, not "100 Continue".
func TestJobsBodyLimits(t *testing.T) {
	b, _ := setupJobs(t)

	job := `{"method":"POST","name":"http://127.0.0.1:9/x","delay":60,"params":"` + strings.Repeat("x", 1000) + `"}`
	batch := "[" + strings.TrimSuffix(strings.Repeat(job+",", 300), ",") + "]" // about 300 KiB
	for _, body := range []string{batch, `{"jobs":` + batch + `}`} {
		resp, err := http.Post(b.base+"/api/v1/jobs", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("batch of %d bytes: status %d, want 413", len(body), resp.StatusCode)
		}
	}

	conn, err := net.Dial("tcp", strings.TrimPrefix(b.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /api/v1/jobs HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n", strings.TrimPrefix(b.base, "http://"), 8<<20)
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		t.Fatalf("read the answer: %v", err)
	}
	if !strings.HasPrefix(line, "HTTP/1.1 413 ") {
		t.Errorf("first answer = %q, want 413", line)
	}
}
