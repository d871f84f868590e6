package e2e

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// runBinary runs the built binary with args and returns its combined
// output and exit code.
func runBinary(t *testing.T, bin string, stdin []byte, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return out.String(), ee.ExitCode()
	case err != nil:
		t.Fatalf("run %v: %v", args, err)
	}
	return out.String(), 0
}

func TestHelp(t *testing.T) {
	t.Parallel() // see procs_test.go
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	out, code := runBinary(t, bin, nil, "-h")
	if code != 0 || !strings.Contains(out, "cronsheet export") || !strings.Contains(out, "cronsheet import") ||
		!strings.Contains(out, "-config") {
		t.Errorf("cronsheet -h = %d:\n%s\nwant 0 and the subcommands and flags", code, out)
	}
	if out, code := runBinary(t, bin, nil, "apply", "-h"); code != 0 || !strings.Contains(out, "-dry-run") || !strings.Contains(out, "-prune") {
		t.Errorf("cronsheet apply -h = %d:\n%s\nwant 0 and its flags", code, out)
	}
	for _, sub := range []string{"export", "import"} {
		if out, code := runBinary(t, bin, nil, sub, "-h"); code != 0 || !strings.Contains(out, "-config") {
			t.Errorf("cronsheet %s -h = %d:\n%s\nwant 0 and its flags", sub, code, out)
		}
	}
	if out, code := runBinary(t, bin, nil, "exprot"); code != 2 || !strings.Contains(out, `unknown subcommand "exprot"`) {
		t.Errorf("cronsheet exprot = %d:\n%s\nwant 2 naming it", code, out)
	}
}

// TestImportPrintsEveryCount loads a dump with one record of each kind
// through the binary, twice: the first run stores each, the second none,
// and both say so per kind, the outbox included.
func TestImportPrintsEveryCount(t *testing.T) {
	t.Parallel() // see procs_test.go
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	dir := t.TempDir()
	cfgPath := filepath.Join(dir, "config.yaml")
	cfg := "store: {driver: sqlite, path: " + filepath.Join(dir, "c.db") + "}\n"
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	dump := []byte(strings.Join([]string{
		`{"kind":"target","target":{"id":"hook","kind":"http","state":"running","http":{"method":"POST","url":"https://example.com/h"},"version":1}}`,
		`{"kind":"row","row":{"scenario":"memos","id":"r1","fields":{"title":"t"},"is_fetched":1,"is_active":1,"version":1}}`,
		`{"kind":"audit","audit":{"id":7,"scenario":"memos","row_id":"r1","action":"create","who":"ann","at":"2026-03-01T08:00:00Z","old":null,"new":{"title":"t"}}}`,
		`{"kind":"job_event","job_event":{"job_id":"j1","at":"2026-03-01T08:00:00Z","state":"pending"}}`,
		`{"kind":"outbox","message":{"id":3,"task_id":"t1","trigger_id":"tr1","channel":"outbox","body":"hi","created_at":"2026-03-01T08:00:00Z"}}`,
	}, "\n") + "\n")
	want := []string{
		"read 1 targets, 1 rows, 1 audit records, 0 tasks, 1 job events, 0 runs, 1 outbox messages",
		"stored 1 targets, 1 rows, 1 audit records, 0 tasks, 1 job events, 0 runs, 1 outbox messages",
	}
	out, code := runBinary(t, bin, dump, "import", "-config", cfgPath)
	for _, w := range want {
		if code != 0 || !strings.Contains(out, w) {
			t.Errorf("first import = %d:\n%s\nwant %q", code, out, w)
		}
	}
	out, code = runBinary(t, bin, dump, "import", "-config", cfgPath)
	if w := "stored 0 targets, 0 rows, 0 audit records, 0 tasks, 0 job events, 0 runs, 0 outbox messages"; code != 0 || !strings.Contains(out, w) {
		t.Errorf("second import = %d:\n%s\nwant %q", code, out, w)
	}
	out, code = runBinary(t, bin, nil, "export", "-config", cfgPath, "-o", filepath.Join(dir, "out.jsonl"))
	if w := "exported 1 targets, 1 rows, 1 audit records, 0 tasks, 1 job events, 0 runs, 1 outbox messages"; code != 0 || !strings.Contains(out, w) {
		t.Errorf("export = %d:\n%s\nwant %q", code, out, w)
	}
}
