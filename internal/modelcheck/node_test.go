package modelcheck

import (
	"cronsheet/internal/testproc"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// bin is the cronsheet binary, built once for all tests of this package;
// faultBin is internal/faultnode, the same node over a store that fails
// as CRONSHEET_FAULTS says.
var (
	bin      testproc.Binary
	faultBin = testproc.Binary{Package: "cronsheet/internal/faultnode"}
)

func TestMain(m *testing.M) {
	code := m.Run()
	bin.Cleanup()
	faultBin.Cleanup()
	os.Exit(code)
}

func freeAddr(t *testing.T) string { return testproc.FreeAddr(t) }

// node is one cronsheet process on a SQLite file in a temp dir, with short
// patrols and a 2 s lease, allowed to call back to loopback; restartable
// with the same config. Its output goes to one log file across restarts.
type node struct {
	bin, cfgPath, logPath, addr string
	// faults, when set, runs faultBin with it as CRONSHEET_FAULTS, its
	// counts written to statsPath.
	faults, statsPath string
	cmd               *exec.Cmd
}

// newNode makes a node; with faults (a CRONSHEET_FAULTS value) its store
// fails as they say.
func newNode(t *testing.T, faults string) *node {
	t.Helper()
	dir := t.TempDir()
	n := &node{bin: bin.Path(t), addr: freeAddr(t), faults: faults, statsPath: filepath.Join(dir, "faults.json"),
		cfgPath: filepath.Join(dir, "cronsheet.yaml"), logPath: filepath.Join(dir, "cronsheet.log")}
	cfg := fmt.Sprintf(`listen: %s
auth: local_dev
log_level: warn
store: {driver: sqlite, path: %s}
patrol: {interval: 100ms, lease: 2s}
fire: {backoff_base: 100ms, backoff_max: 1s}
shutdown_timeout: 5s
http: {allow: [127.0.0.0/8]}
`, n.addr, filepath.Join(dir, "data", "cronsheet.db"))
	if err := os.WriteFile(n.cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		n.kill()
		if t.Failed() {
			t.Logf("node log (tail):\n%s", logTail(n.logPath, 20))
		}
	})
	return n
}

func (n *node) base() string { return "http://" + n.addr }

// start runs the process and waits until it answers /healthz.
func (n *node) start(t *testing.T) {
	t.Helper()
	logf, err := os.OpenFile(n.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command(n.bin, "-config", n.cfgPath)
	if n.faults != "" {
		cmd = exec.Command(faultBin.Path(t), "-config", n.cfgPath)
		cmd.Env = append(os.Environ(), "CRONSHEET_FAULTS="+n.faults, "CRONSHEET_FAULTS_STATS="+n.statsPath)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	n.cmd = cmd
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(n.base() + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("node did not become healthy:\n%s", logTail(n.logPath, 20))
}

// kill sends SIGKILL and reaps the process, if it runs.
func (n *node) kill() {
	if n.cmd == nil {
		return
	}
	_ = n.cmd.Process.Signal(syscall.SIGKILL)
	_ = n.cmd.Wait()
	n.cmd = nil
}

// faultsInjected returns the store faults the node's last process
// injected, by mode (none without faults): the counts it last wrote to
// statsPath.
func (n *node) faultsInjected() map[string]int {
	var s struct{ Injected map[string]int }
	b, err := os.ReadFile(n.statsPath)
	if err != nil || json.Unmarshal(b, &s) != nil {
		return nil
	}
	return s.Injected
}

// logTail returns the last n lines of the file at path.
func logTail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// delivery is one call received by the hook.
type delivery struct {
	TriggerID string
	Key       string // Idempotency-Key: <task or job id>:<slot unix ms>:<target>
	Path      string
	Arrived   time.Time
	Ended     time.Time
	Cut       bool // the sender hung up before the answer
}

// taskID is the delivery's task (or job) id, read from its idempotency key.
func (d delivery) taskID() string {
	id, _, _ := strings.Cut(d.Key, ":")
	return id
}

// hook counts every call by trigger id. Paths decide its answer: a path
// holding /fail is answered 500, one holding /slow after 1.5 s, the rest
// 200 after up to 100 ms.
type hook struct {
	srv *httptest.Server
	// feedbackTo is the node's base URL: a third of the calls on /fb/
	// paths post their final report there before they answer (early
	// feedback, beating the answer).
	feedbackTo string

	mu         sync.Mutex
	deliveries []delivery
	early      []earlyReport
}

// earlyReport is a final report the hook posted before answering.
type earlyReport struct {
	TriggerID string
	Status    int // the report's status
	Code      int // the API's answer, 0 when the call failed
	Body      []byte
	Sent      time.Time
	Recv      time.Time
}

func startHook(t *testing.T, feedbackTo string) *hook {
	t.Helper()
	h := &hook{feedbackTo: feedbackTo}
	h.srv = httptest.NewServer(http.HandlerFunc(h.serve))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hook) serve(w http.ResponseWriter, r *http.Request) {
	d := delivery{TriggerID: r.Header.Get("X-Cronsheet-Trigger-Id"), Key: r.Header.Get("Idempotency-Key"),
		Path: r.URL.Path, Arrived: time.Now()}
	_, _ = io.Copy(io.Discard, r.Body)
	if strings.HasPrefix(d.Path, "/fb/") && h.feedbackTo != "" && rand.N(3) == 0 {
		h.reportEarly(d.TriggerID)
	}
	delay := rand.N(100 * time.Millisecond)
	if strings.Contains(d.Path, "/slow") {
		delay = 1500 * time.Millisecond
	}
	select {
	case <-time.After(delay):
	case <-r.Context().Done():
		d.Cut = true
	}
	switch {
	case d.Cut:
	case strings.Contains(d.Path, "/fail"):
		w.WriteHeader(http.StatusInternalServerError)
	default:
		_, _ = io.WriteString(w, "ok")
	}
	d.Ended = time.Now()
	h.mu.Lock()
	h.deliveries = append(h.deliveries, d)
	h.mu.Unlock()
}

// reportEarly posts a final report on trigger id to the node and records
// the answer.
func (h *hook) reportEarly(id string) {
	rep := earlyReport{TriggerID: id, Status: rand.N(2), Sent: time.Now()}
	resp, err := http.Post(h.feedbackTo+"/api/v1/runs/"+id+"/feedback", "application/json",
		strings.NewReader(fmt.Sprintf(`{"status":%d}`, rep.Status)))
	if err == nil {
		rep.Body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		rep.Code = resp.StatusCode
	}
	rep.Recv = time.Now()
	h.mu.Lock()
	h.early = append(h.early, rep)
	h.mu.Unlock()
}

// takeEarly returns the early reports recorded since the last call.
func (h *hook) takeEarly() []earlyReport {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.early
	h.early = nil
	return out
}

// since returns the deliveries recorded from index i on (in the order
// they ended) and the index to ask from next.
func (h *hook) since(i int) ([]delivery, int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]delivery(nil), h.deliveries[i:]...), len(h.deliveries)
}
