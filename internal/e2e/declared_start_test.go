package e2e

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDeclaredAtStart starts a node whose config names examples/declared.yaml
// (the README's example): the node makes its objects before it serves,
// as the principal declared-file, and logs the plan; a restart finds every
// object unchanged and writes nothing. A file that does not parse stops
// the start naming file:line.
func TestDeclaredAtStart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	example, err := filepath.Abs("../../examples/declared.yaml")
	if err != nil {
		t.Fatal(err)
	}
	b := buildBinary(t)
	dir := t.TempDir()
	addr := freeAddr(t)
	cfg := fmt.Sprintf("listen: %s\nauth: local_dev\nlog_level: info\nstore: {driver: sqlite, path: %s}\ndeclared: %s\n",
		addr, filepath.Join(dir, "c.db"), example)
	node := newProcess(t, b, dir, "node", addr, cfg)
	node.start(t)
	paths := []string{"/api/v1/targets/ops-hook", "/api/v1/targets/keep-runs-30d", "/api/v1/flows/nightly",
		"/api/v1/scenarios/memos/rows/standup", "/api/v1/scenarios/memos/rows/weekly-report"}
	versions := func() map[string]float64 {
		out := map[string]float64{}
		for _, p := range paths {
			var o map[string]any
			if code := getDeclared(t, node.base()+p, &o); code != http.StatusOK {
				t.Fatalf("GET %s: %d; want the declared object", p, code)
			}
			out[p], _ = o["version"].(float64)
		}
		var audit struct {
			Records []struct {
				Who string `json:"who"`
			} `json:"records"`
		}
		getDeclared(t, node.base()+"/api/v1/audit?limit=500", &audit)
		for _, r := range audit.Records {
			if r.Who != "declared-file" {
				t.Errorf("audit record by %q; want declared-file", r.Who)
			}
		}
		out["audit"] = float64(len(audit.Records))
		return out
	}
	first := versions()
	if first["audit"] != 5 {
		t.Errorf("audit records after the first start = %v; want 5", first["audit"])
	}
	node.stop(t)
	node.start(t)
	if again := versions(); !maps.Equal(again, first) {
		t.Errorf("the restart changed the node: %v, before %v", again, first)
	}
	node.stop(t)
	log, _ := os.ReadFile(node.logPath)
	for _, want := range []string{`change="create target ops-hook"`, `change="create row memos/weekly-report"`,
		`change="unchanged flow nightly"`, "declared file applied"} {
		if !strings.Contains(string(log), want) {
			t.Errorf("node log lacks %s:\n%s", want, logTail(node.logPath, 30))
		}
	}

	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: x\nrows:\n  memos:\n    r1: {when: [daily]}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	badCfg := filepath.Join(dir, "bad-config.yaml")
	if err := os.WriteFile(badCfg, []byte(strings.Replace(cfg, example, bad, 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, code := runBinary(t, b, nil, "-config", badCfg); code == 0 || !strings.Contains(out, "bad.yaml:4: rows.memos.r1.when") {
		t.Errorf("start with a bad declared file: exit %d\n%s\nwant it refused naming bad.yaml:4 and the field", code, out)
	}
	testDeclaredRefusedAtStart(t, b, dir)
}

// testDeclaredRefusedAtStart: a declared object the node refuses (an exec
// command its config does not list) is logged with the node's message,
// and the node serves anyway.
func testDeclaredRefusedAtStart(t *testing.T, b, dir string) {
	refused := filepath.Join(dir, "refused-declared.yaml")
	body := "name: x\ntargets:\n  run-it: {kind: exec, state: running, exec: {command: not-listed}}\n"
	if err := os.WriteFile(refused, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	cfg := fmt.Sprintf("listen: %s\nauth: local_dev\nstore: {driver: sqlite, path: %s}\ndeclared: %s\n",
		addr, filepath.Join(dir, "r.db"), refused)
	node := newProcess(t, b, dir, "refused", addr, cfg)
	node.start(t) // it serves
	node.stop(t)
	log, _ := os.ReadFile(node.logPath)
	if !strings.Contains(string(log), "declared file not applied in full") || !strings.Contains(string(log), "create target run-it: 400 exec.command") {
		t.Errorf("node log lacks the refusal naming the target and field:\n%s", logTail(node.logPath, 20))
	}
}

// getDeclared GETs url into v and returns the status.
func getDeclared(t *testing.T, url string, v any) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
			t.Fatal(err)
		}
	}
	return resp.StatusCode
}
