package e2e

import (
	"bytes"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestUserAndTokenCommands runs the binary: `user add` takes the password
// from stdin, `token create` prints a token once, a node with auth
// required accepts it, and `token revoke` shuts it out at once, while the
// node keeps running.
func TestUserAndTokenCommands(t *testing.T) {
	t.Parallel() // see procs_test.go
	bin := buildBinary(t)
	dir := t.TempDir()
	addr := freeAddr(t)
	base := "http://" + addr
	cfgPath := filepath.Join(dir, "config.yaml")
	cfg := fmt.Sprintf("listen: %s\nauth: required\nlog_level: warn\nstore: {driver: sqlite, path: %s}\n",
		addr, filepath.Join(dir, "cronsheet.db"))
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cli := func(stdin string, args ...string) (string, string, error) {
		t.Helper()
		cmd := exec.Command(bin, append(args, "-config", cfgPath)...)
		cmd.Stdin = strings.NewReader(stdin)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		return out.String(), errb.String(), err
	}
	if out, errs, err := cli("s3cret password\n", "user", "add", "alice", "--role", "editor"); err != nil ||
		!strings.Contains(out, "alice added") {
		t.Fatalf("user add: %v %s %s", err, out, errs)
	}
	if _, errs, err := cli("short\n", "user", "add", "bob", "--role", "viewer"); err == nil || !strings.Contains(errs, "password") {
		t.Errorf("user add with a short password: %v %s", err, errs)
	}
	if _, errs, err := cli("", "user", "add", "carol", "--role", "root"); err == nil || !strings.Contains(errs, "role") {
		t.Errorf("user add with a bad role: %v %s", err, errs)
	}
	tok, errs, err := cli("", "token", "create", "--user", "alice", "--name", "ci", "--role", "editor")
	tok = strings.TrimSpace(tok)
	if err != nil || !strings.HasPrefix(tok, "cst_") {
		t.Fatalf("token create: %v %q %s", err, tok, errs)
	}
	list, _, _ := cli("", "token", "list")
	if strings.Contains(list, tok) || !strings.Contains(list, "alice") {
		t.Errorf("token list shows the secret or misses the token:\n%s", list)
	}
	id := strings.TrimPrefix(strings.SplitN(tok, ".", 2)[0], "cst_")

	var logs bytes.Buffer
	node := exec.Command(bin, "-config", cfgPath)
	node.Stdout, node.Stderr = &logs, &logs
	if err := node.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = node.Process.Signal(syscall.SIGTERM)
		if err := node.Wait(); err != nil {
			t.Errorf("exit: %v\n%s", err, logs.String())
		}
	}()
	waitHealthy(t, base)
	get := func(token string) int {
		req, _ := http.NewRequest(http.MethodGet, base+"/api/v1/outbox", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := get(""); code != http.StatusUnauthorized {
		t.Errorf("without a token: %d, want 401", code)
	}
	if code := get(tok); code != http.StatusOK {
		t.Fatalf("with the token: %d, want 200", code)
	}
	if out, errs, err := cli("", "token", "revoke", id); err != nil {
		t.Fatalf("token revoke: %v %s %s", err, out, errs)
	}
	if code := get(tok); code != http.StatusUnauthorized {
		t.Errorf("with the revoked token: %d, want 401", code)
	}
}
