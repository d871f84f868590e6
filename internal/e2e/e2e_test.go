package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"cronsheet/internal/testsmtp"
	"cronsheet/task"
)

// TestBinaryDeliversEmail starts the real binary with email sent to a real
// SMTP server, creates a memo through the API and reads the delivered
// messages back at the server; then deactivates it and sees it stop.
func TestBinaryDeliversEmail(t *testing.T) {
	t.Parallel() // see procs_test.go
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	mail := testsmtp.Start(t)
	dir := t.TempDir()
	addr := freeAddr(t)
	base := "http://" + addr
	cfg := fmt.Sprintf(`listen: %s
auth: local_dev
log_level: warn
store: {driver: sqlite, path: %s}
email: {mode: send, host: %s, port: %d, from: cronsheet@example.com, tls: none}
`, addr, filepath.Join(dir, "data", "cronsheet.db"), mail.Host, mail.Port)
	cfgPath := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	cmd := exec.Command(bin, "-config", cfgPath)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		if err := cmd.Wait(); err != nil {
			t.Errorf("exit: %v\n%s", err, logs.String())
		}
	}()
	waitHealthy(t, base)

	row := postRow(t, base, `{"title":"water","content":"Drink some water.","when":"every 2s","channel":"email","to":"me@example.com"}`)
	msgs := mail.WaitFor(2, 20*time.Second)
	if len(msgs) < 2 {
		t.Fatalf("SMTP server got %d messages, want 2\n%s", len(msgs), logs.String())
	}
	for _, m := range msgs[:2] {
		if m.Subject != "water" || !strings.Contains(m.Body, "Drink some water.") || m.To[0] != "me@example.com" {
			t.Errorf("message = %+v", m)
		}
	}

	req, _ := http.NewRequest(http.MethodPatch, base+"/api/v1/scenarios/memos/rows/"+row.ID, strings.NewReader(`{"active":0}`))
	req.Header.Set("Content-Type", "application/json") // the API takes JSON bodies only
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var tk task.Task
		getJSON(t, base+"/api/v1/tasks/"+row.ID, &tk)
		if tk.IsEnable == 0 && tk.IsClaimed == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("task still armed after active: 0: %+v", tk)
		}
		time.Sleep(20 * time.Millisecond)
	}
	n := len(mail.Messages())
	time.Sleep(4500 * time.Millisecond) // two would-be slots
	if got := len(mail.Messages()); got != n {
		t.Errorf("deactivated memo still delivered: %d → %d messages", n, got)
	}
}

func postRow(t *testing.T, base, body string) task.Row {
	t.Helper()
	resp, err := http.Post(base+"/api/v1/scenarios/memos/rows", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var row task.Row
	if resp.StatusCode != http.StatusCreated || json.Unmarshal(raw, &row) != nil {
		t.Fatalf("create row: %d %s", resp.StatusCode, raw)
	}
	return row
}

func getJSON(t *testing.T, url string, out any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}
