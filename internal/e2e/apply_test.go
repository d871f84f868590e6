package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// applyScenario is a scenario whose row fields are Chinese.
const applyScenario = `scenarios:
  - name: 值班提醒
    tz: Asia/Shanghai
    id_field: 编号
    fields: {task_id: 编号, title: 标题, task_para: 内容, cron_para: 时间, task_type: 方式}
    defaults: {方式: outbox}
`

// applyFileV1 declares a target with a secret header, a builtin target, a
// flow, a memo and a row of the Chinese scenario.
const applyFileV1 = `name: team-a
targets:
  hook:
    kind: http
    state: running
    http:
      method: POST
      url: https://hooks.example.com/cronsheet
      headers: {Authorization: Bearer first-secret, Content-Type: application/json}
  gc:
    kind: builtin
    state: running
    builtin: {action: cleanup_runs, keep_age: 86400}
flows:
  nightly:
    start: one
    schedule: daily 02:00
    steps:
      - {id: one, targets: [hook], on: {success: [two]}}
      - {id: two, targets: [gc]}
rows:
  memos:
    standup: {title: stand-up, content: Stand up, when: weekdays 09:30, channel: outbox}
    report: {content: weekly report, when: weekly fri 17:00, targets: hook}
  值班提醒:
    d1: {标题: 早班, 内容: 交接, 时间: daily 08:00, 备注: null, 次数: 3}
`

// applyBundle is a node with auth required and an admin token, and the
// binary's apply command pointed at it.
type applyBundle struct {
	t      *testing.T
	bin    string
	dir    string
	node   *process
	token  string
	secret string // a value that must never be printed
}

func setupApply(t *testing.T) *applyBundle {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	b := &applyBundle{t: t, bin: buildBinary(t), dir: t.TempDir()}
	addr := freeAddr(t)
	cfg := fmt.Sprintf("listen: %s\nauth: required\nlog_level: warn\nstore: {driver: sqlite, path: %s}\n%s",
		addr, filepath.Join(b.dir, "c.db"), applyScenario)
	b.node = newProcess(t, b.bin, b.dir, "node", addr, cfg)
	if out, code := runBinary(t, b.bin, []byte("s3cret password\n"), "user", "add", "ops", "--role", "admin", "-config", b.node.cfgPath); code != 0 {
		t.Fatalf("user add: %d %s", code, out)
	}
	cmd := exec.Command(b.bin, "token", "create", "--user", "ops", "--name", "apply", "--role", "admin", "-config", b.node.cfgPath)
	tok, err := cmd.Output()
	if err != nil {
		t.Fatalf("token create: %v", err)
	}
	b.token = strings.TrimSpace(string(tok))
	b.node.start(t)
	return b
}

// apply writes body to a file and runs cronsheet apply on it with args.
func (b *applyBundle) apply(body string, args ...string) (stdout, stderr string, code int) {
	b.t.Helper()
	path := filepath.Join(b.dir, "declared.yaml")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		b.t.Fatal(err)
	}
	cmd := exec.Command(b.bin, append([]string{"apply", "-f", path, "--server", b.node.base(), "--token", b.token}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code = 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		b.t.Fatal(err)
	}
	for _, s := range []string{"first-secret", "second-secret"} {
		if strings.Contains(out.String()+errb.String(), s) {
			b.t.Errorf("apply printed a secret:\n%s%s", out.String(), errb.String())
		}
	}
	return out.String(), errb.String(), code
}

// get reads path as JSON; a 404 is nil.
func (b *applyBundle) get(path string) map[string]any {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, b.node.base()+path, nil)
	req.Header.Set("Authorization", "Bearer "+b.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotFound {
		return nil
	}
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || resp.StatusCode != http.StatusOK {
		b.t.Fatalf("GET %s: %d %v", path, resp.StatusCode, err)
	}
	return out
}

// send makes one API call with the admin token.
func (b *applyBundle) send(method, path, body string) int {
	b.t.Helper()
	req, _ := http.NewRequest(method, b.node.base()+path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+b.token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// state is what the test compares across applies: every object's version
// and the length of the audit trail.
func (b *applyBundle) state() map[string]float64 {
	b.t.Helper()
	out := map[string]float64{}
	for _, p := range []string{"/api/v1/targets/hook", "/api/v1/targets/gc", "/api/v1/flows/nightly",
		"/api/v1/scenarios/memos/rows/standup", "/api/v1/scenarios/memos/rows/report",
		"/api/v1/scenarios/%E5%80%BC%E7%8F%AD%E6%8F%90%E9%86%92/rows/d1"} {
		if o := b.get(p); o != nil {
			out[p], _ = o["version"].(float64)
		}
	}
	audit := b.get("/api/v1/audit?limit=500")
	recs, _ := audit["records"].([]any)
	out["audit"] = float64(len(recs))
	return out
}

// lines returns the plan lines of an apply's output (the summary left out).
func lines(out string) []string {
	var ls []string
	for l := range strings.Lines(out) {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "applied:") && !strings.HasPrefix(l, "dry run:") {
			ls = append(ls, l)
		}
	}
	return ls
}

func sameLines(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s plan:\n%s\nwant:\n%s", what, strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
