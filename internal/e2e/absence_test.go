package e2e

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestAbsenceAlertAfterDowntime runs the real binary with a task that
// watches for absence (alert_absent 10s), kills it with SIGKILL, keeps it
// down past the absence bound, and restarts it: the pager hook receives
// exactly one absence alert, for the first slot missed during the
// downtime, whether the restart's arming or its absence watch sees it
// first; no alert arrives while the task fires on time.
func TestAbsenceAlertAfterDowntime(t *testing.T) {
	t.Parallel() // see procs_test.go
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bin := buildBinary(t)
	addr := freeAddr(t)
	cfg := fmt.Sprintf(`listen: %s
auth: local_dev
log_level: warn
store: {driver: sqlite, path: %s}
patrol: {interval: 100ms, lease: 2s}
fire: {backoff_base: 100ms, backoff_max: 1s}
shutdown_timeout: 5s
http: {allow: [127.0.0.0/8]}
`, addr, filepath.Join(dir, "data", "cronsheet.db"))
	node := newProcess(t, bin, dir, "cronsheet", addr, cfg)
	h := startHook(t, 0)
	node.start(t)
	createHookTarget(t, node.base(), h)
	mustCall(t, "POST", node.base()+"/api/v1/targets", map[string]any{"id": "pager", "kind": "http", "state": "running",
		"http": map[string]any{"method": "POST", "url": h.srv.URL + "/alert/{{task_id}}"}}, nil)
	row := postRow(t, node.base(), `{"title":"beat","content":"heartbeat","when":"every 2s","targets":"hook",`+
		`"misfire":"skip","alert":"pager","alert_absent":"10s"}`)
	alerts := func() []delivery {
		var out []delivery
		for _, d := range h.all() {
			if strings.HasPrefix(d.Path, "/alert/") {
				out = append(out, d)
			}
		}
		return out
	}
	time.Sleep(5 * time.Second) // fires on time
	node.kill(t)
	killedAt := time.Now()
	if n := len(alerts()); n != 0 {
		t.Fatalf("%d alerts while the task fired on time", n)
	}
	time.Sleep(13 * time.Second) // past the absence bound, no node running
	node.start(t)
	deadline := time.Now().Add(15 * time.Second)
	for len(alerts()) == 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(6 * time.Second) // more absence watches and patrols: nothing more may come
	node.stop(t)

	got := alerts()
	if len(got) != 1 {
		t.Fatalf("the pager got %d alerts, want exactly 1: %+v", len(got), got)
	}
	a := got[0]
	if a.taskID() != row.ID || !strings.HasSuffix(a.Key, ":absent:pager") {
		t.Errorf("alert key %q, want task %s, target absent:pager", a.Key, row.ID)
	}
	// The first slot missed: after the last one fired before the kill (it
	// ticks every 2s), and no later than 2s after the kill.
	if s := a.slot(); s.Before(killedAt.Add(-2*time.Second)) || s.After(killedAt.Add(2*time.Second)) {
		t.Errorf("alert for slot %s, want the first slot missed after the kill at %s", s.Format(time.RFC3339Nano), killedAt.Format(time.RFC3339Nano))
	}
	var last time.Time
	for _, d := range h.all() {
		if d.taskID() == row.ID && strings.HasPrefix(d.Path, "/t/") && d.Arrived.Before(killedAt) && d.slot().After(last) {
			last = d.slot()
		}
	}
	if last.IsZero() || !a.slot().Equal(last.Add(2*time.Second)) {
		t.Errorf("alert for slot %s, want the slot after the last delivered before the kill (%s)", a.slot(), last)
	}
}
