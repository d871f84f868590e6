package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"testing"
	"time"

	"cronsheet/store/sqlite"
	"cronsheet/task"
)

// The binary is built once for all tests of this package (see TestMain).
var (
	binOnce sync.Once
	binPath string
	binErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		_ = os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// TestCrashSafety runs the real binary, arms tasks firing every second,
// kills it with SIGKILL mid-run, restarts it, stops it with SIGTERM, and
// proves from the ledger and the outbox that no slot was delivered twice and
// that, with misfire: once, every slot was either fired or covered by the
// misfire fire that followed the downtime.
func TestCrashSafety(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bin := buildBinary(t)
	addr := freeAddr(t)
	dbPath := filepath.Join(dir, "data", "cronsheet.db")
	cfg := fmt.Sprintf(`listen: %s
log_level: warn
store: {driver: sqlite, path: %s}
patrol: {interval: 100ms, lease: 2s}
fire: {backoff_base: 100ms, backoff_max: 1s}
shutdown_timeout: 5s
`, addr, dbPath)
	cfgPath := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(dir, "cronsheet.log")
	start := func() *exec.Cmd {
		logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			t.Fatal(err)
		}
		defer logf.Close()
		cmd := exec.Command(bin, "-config", cfgPath)
		cmd.Stdout, cmd.Stderr = logf, logf
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		waitHealthy(t, "http://"+addr)
		return cmd
	}

	first := start()
	var ids []string
	for i := range 3 {
		row := postRow(t, "http://"+addr, fmt.Sprintf(`{"title":"t%d","content":"tick %d","when":"every 1s","channel":"outbox","misfire":"once"}`, i, i))
		ids = append(ids, row.ID)
	}
	time.Sleep(3500 * time.Millisecond)
	if err := first.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = first.Wait()
	time.Sleep(2500 * time.Millisecond) // slots pass while no node runs

	second := start()
	time.Sleep(5 * time.Second) // old claims expire (lease 2s), misfires fire, ticking resumes
	if err := second.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := second.Wait(); err != nil {
		log, _ := os.ReadFile(logPath)
		t.Fatalf("graceful stop: %v\n%s", err, log)
	}

	st, err := sqlite.Open(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	for _, id := range ids {
		// SIGTERM released the claims, so another node can take over at once.
		if tk, err := st.GetTask(ctx, id); err != nil || tk.IsClaimed != 0 {
			t.Errorf("task %s after graceful stop: claimed=%v err=%v, want released", id, tk != nil && tk.IsClaimed == 1, err)
		}
	}
	outbox, err := st.ListOutbox(ctx, 0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	delivered := map[string]int{} // trigger id → deliveries
	for _, m := range outbox {
		delivered[m.TriggerID]++
	}
	for _, id := range ids {
		runs, err := st.ListRuns(ctx, id, time.Time{}, 10000)
		if err != nil {
			t.Fatal(err)
		}
		checkLedger(t, id, runs, delivered)
	}
}

func checkLedger(t *testing.T, id string, runs []*task.Run, delivered map[string]int) {
	t.Helper()
	sort.Slice(runs, func(i, j int) bool { return runs[i].Slot.Before(runs[j].Slot) })
	if len(runs) < 5 {
		t.Fatalf("task %s: only %d runs", id, len(runs))
	}
	seen := map[time.Time]bool{}
	misfires := 0
	for i, r := range runs {
		if seen[r.Slot] {
			t.Errorf("task %s: slot %s fired twice", id, r.Slot)
		}
		seen[r.Slot] = true
		if r.State != task.RunDone {
			t.Errorf("task %s: run %s at %s is %s, want done", id, r.TriggerID, r.Slot, r.State)
		}
		if n := delivered[r.TriggerID]; n != 1 {
			t.Errorf("task %s: run %s at %s delivered %d times", id, r.TriggerID, r.Slot, n)
		}
		if r.FiredAt.Before(r.Slot) {
			t.Errorf("task %s: slot %s fired early at %s", id, r.Slot, r.FiredAt)
		}
		if r.TriggerType == task.TriggerMisfire {
			misfires++
		}
		if i == 0 {
			continue
		}
		gap := r.Slot.Sub(runs[i-1].Slot)
		if gap%time.Second != 0 {
			t.Errorf("task %s: slots %s and %s are not whole seconds apart", id, runs[i-1].Slot, r.Slot)
		}
		// A gap means slots were missed; with misfire once they are covered
		// by one misfire fire of the latest missed slot.
		if gap > time.Second && r.TriggerType != task.TriggerMisfire {
			t.Errorf("task %s: slots between %s and %s lost (next run is %s, not a misfire)",
				id, runs[i-1].Slot, r.Slot, r.TriggerType)
		}
	}
	if misfires != 1 {
		t.Errorf("task %s: %d misfire runs, want 1 for one downtime", id, misfires)
	}
}

// buildBinary builds cronsheet once per test binary run.
func buildBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "cronsheet-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "cronsheet")
		if out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

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
