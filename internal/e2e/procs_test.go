package e2e

import (
	"cronsheet/internal/testproc"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The tests of this package run their own processes on their own temp
// directories, ports and hooks. The single-node ones spend most of their
// time waiting for wall-clock slots and leases, so they call t.Parallel
// and run beside each other (go test's -parallel, GOMAXPROCS by default).
// The three-node ones (TestCluster, TestClusterCC, TestClusterStall) stay
// serial: they run first, with no other test of the package beside them,
// as their leases and timeouts are sized for.

// bin is the cronsheet binary, built once for all tests of this package;
// faultBin is internal/faultnode (the same node over a store that fails
// as CRONSHEET_FAULTS says), built when a test asks for it.
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

// buildBinary returns the cronsheet binary, built on the first call.
func buildBinary(t *testing.T) string { return bin.Path(t) }

func freeAddr(t *testing.T) string { return testproc.FreeAddr(t) }

func waitHealthy(t *testing.T, base string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		resp, err := http.Get(base + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s did not become healthy", base)
}

// process is one cronsheet process started from a config file, restartable
// with the same config; its output is appended to one log file across
// restarts. t.Cleanup kills it if the test left it running.
type process struct {
	bin, cfgPath, logPath, addr string
	env                         []string // added to the test's environment

	mu     sync.Mutex
	cmd    *exec.Cmd
	starts int // how many times it was started
}

// newProcess writes cfg to dir/name.yaml and returns the process that will
// run it; addr is its listen address.
func newProcess(t *testing.T, bin, dir, name, addr, cfg string) *process {
	t.Helper()
	p := &process{bin: bin, addr: addr,
		cfgPath: filepath.Join(dir, name+".yaml"), logPath: filepath.Join(dir, name+".log")}
	if err := os.WriteFile(p.cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.killIfRunning()
		if t.Failed() {
			t.Logf("%s log (tail):\n%s", name, logTail(p.logPath, 15))
		}
	})
	return p
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

// base is the process's HTTP base URL.
func (p *process) base() string { return "http://" + p.addr }

// start runs the process and waits until it answers /healthz.
func (p *process) start(t *testing.T) {
	t.Helper()
	logf, err := os.OpenFile(p.logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	cmd := exec.Command(p.bin, "-config", p.cfgPath)
	if len(p.env) > 0 {
		cmd.Env = append(os.Environ(), p.env...)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	p.cmd = cmd
	p.starts++
	p.mu.Unlock()
	waitHealthy(t, p.base())
}

// pid is the running process's id, 0 when it is not running.
func (p *process) pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// kill sends SIGKILL and reaps the process.
func (p *process) kill(t *testing.T) {
	t.Helper()
	if err := p.signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
}

// stop sends SIGTERM and waits for a graceful exit.
func (p *process) stop(t *testing.T) {
	t.Helper()
	if err := p.signal(syscall.SIGTERM); err != nil {
		log, _ := os.ReadFile(p.logPath)
		t.Fatalf("graceful stop: %v\n%s", err, log)
	}
}

// signal sends sig to the running process and waits for it to exit.
func (p *process) signal(sig syscall.Signal) error {
	p.mu.Lock()
	cmd := p.cmd
	p.cmd = nil
	p.mu.Unlock()
	if cmd == nil {
		return fmt.Errorf("%s is not running", p.cfgPath)
	}
	if err := cmd.Process.Signal(sig); err != nil {
		return err
	}
	err := cmd.Wait()
	if sig == syscall.SIGKILL {
		return nil // killed: the exit status says so
	}
	return err
}

// notify sends sig (SIGSTOP, SIGCONT) to the running process without
// waiting for anything.
func (p *process) notify(sig syscall.Signal) error {
	p.mu.Lock()
	cmd := p.cmd
	p.mu.Unlock()
	if cmd == nil {
		return fmt.Errorf("%s is not running", p.cfgPath)
	}
	return cmd.Process.Signal(sig)
}

// killIfRunning is the cleanup: no process outlives its test.
func (p *process) killIfRunning() {
	p.mu.Lock()
	cmd := p.cmd
	p.cmd = nil
	p.mu.Unlock()
	if cmd != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
}
