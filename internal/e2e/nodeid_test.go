package e2e

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"cronsheet/internal/testwait"
)

// TestNodeIDTakenStopsTheFrozenProcess: two processes configured with one
// node_id. The first is frozen (SIGSTOP) past its lease, the second then
// registers the id and starts; the first, resumed (SIGCONT), delivers
// nothing more (counted at the hook by the sender's instance header) and
// exits non-zero saying why, while the second goes on delivering.
func TestNodeIDTakenStopsTheFrozenProcess(t *testing.T) {
	t.Parallel() // see procs_test.go
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bin := buildBinary(t)
	dbPath := filepath.Join(dir, "data", "cronsheet.db")
	config := func(addr string) string {
		return fmt.Sprintf(`listen: %s
node_id: shared
auth: local_dev
log_level: warn
store: {driver: sqlite, path: %s}
patrol: {interval: 100ms, lease: 2s}
fire: {backoff_base: 100ms, backoff_max: 1s}
shutdown_timeout: 2s
http: {allow: [127.0.0.0/8]}
`, addr, dbPath)
	}
	addrA, addrB := freeAddr(t), freeAddr(t)
	first := newProcess(t, bin, dir, "first", addrA, config(addrA))
	second := newProcess(t, bin, dir, "second", addrB, config(addrB))

	h := startHook(t, 0)
	first.start(t)
	createHookTarget(t, first.base(), h)
	postRow(t, first.base(), `{"title":"tick","content":"tick","when":"every 1s","targets":"hook","overlap":"allow"}`)
	testwait.For(t, 30*time.Second, "the first process's deliveries", func() bool { return h.count() >= 2 })
	firstInstance := h.all()[0].Instance
	if firstInstance == "" {
		t.Fatal("the hook sees no instance header: it cannot tell the senders apart")
	}

	if err := first.notify(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second) // past the first's lease (2s): its entry is stale
	second.start(t)
	testwait.For(t, 30*time.Second, "the second process's deliveries", func() bool {
		return countFrom(h, firstInstance, false, time.Time{}) >= 1
	})
	resumed := time.Now()
	if err := first.notify(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	code, log := first.waitExit(t, 30*time.Second)
	if code == 0 || !strings.Contains(log, "was taken by another process") {
		t.Errorf("the resumed first process exited with %d; want non-zero, saying its node id was taken. Log:\n%s", code, log)
	}
	before := countFrom(h, firstInstance, false, time.Time{})
	testwait.For(t, 30*time.Second, "the second process to deliver after the first's exit", func() bool {
		return countFrom(h, firstInstance, false, time.Time{}) >= before+2
	})
	if n := countFrom(h, firstInstance, true, resumed); n > 0 {
		t.Errorf("the first process delivered %d times after it was resumed under a node id another process held", n)
	}
	second.stop(t)
}

// countFrom counts the hook's deliveries from instance (from: true) or
// from any other sender (false) that arrived after after.
func countFrom(h *hook, instance string, from bool, after time.Time) int {
	n := 0
	for _, d := range h.all() {
		if (d.Instance == instance) == from && d.Arrived.After(after) {
			n++
		}
	}
	return n
}

// waitExit waits up to timeout for the process to exit by itself and
// returns its exit code and its log.
func (p *process) waitExit(t *testing.T, timeout time.Duration) (int, string) {
	t.Helper()
	p.mu.Lock()
	cmd := p.cmd
	p.mu.Unlock()
	if cmd == nil {
		t.Fatalf("%s is not running", p.cfgPath)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(timeout):
		_ = cmd.Process.Kill()
		<-done
		p.mu.Lock()
		p.cmd = nil
		p.mu.Unlock()
		t.Fatalf("%s did not exit within %s", p.cfgPath, timeout)
	}
	p.mu.Lock()
	p.cmd = nil
	p.mu.Unlock()
	log, _ := os.ReadFile(p.logPath)
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, string(log)
	case errors.As(err, &exit):
		return exit.ExitCode(), string(log)
	}
	t.Fatalf("wait for %s: %v", p.cfgPath, err)
	return 0, ""
}
