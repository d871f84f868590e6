package server

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"cronsheet/config"
	"cronsheet/executors"
	"cronsheet/task"
)

// diskFullFS is the size of the tmpfs the disk-full test puts the SQLite
// file on. A fresh store takes well under 1 MiB, but its write-ahead log
// grows to 10,000 pages (40 MiB, the writer's wal_autocheckpoint) before
// it is checkpointed and reused from its start, and a running node fills
// it in seconds: on 4 MiB the node filled the disk by itself once the
// filler was gone. 64 MiB holds the file, a full WAL and its -shm.
const diskFullFS = "64m"

// mountTmpfs mounts a tmpfs of size under a temporary directory and
// returns it; the cleanup unmounts it. It skips the test when the process
// is not root or the mount is refused (a container without CAP_SYS_ADMIN):
// CI runs as root.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipped: mounting a size-limited tmpfs for the disk-full test needs root (CI runs as root)")
	}
	dir := filepath.Join(t.TempDir(), "fs")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("skipped: mount -t tmpfs -o size=%s failed (%v: %s); the disk-full test needs a size-limited filesystem", size, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// fillFS writes path until the filesystem answers ENOSPC, in big then
// page-sized chunks, so not one free block is left.
func fillFS(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, size := range []int{256 << 10, 4 << 10, 512} {
		buf := make([]byte, size)
		for {
			if _, err := f.Write(buf); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					t.Fatalf("fill %s: %v", path, err)
				}
				break
			}
		}
	}
}

// countHook is a callback endpoint that answers 200 and counts the calls
// per trigger id and per Idempotency-Key.
type countHook struct {
	srv      *httptest.Server
	mu       sync.Mutex
	triggers map[string]int
	keys     map[string]int
}

func startCountHook(t *testing.T) *countHook {
	t.Helper()
	h := &countHook{triggers: map[string]int{}, keys: map[string]int{}}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.triggers[r.Header.Get(executors.HeaderTriggerID)]++
		h.keys[r.Header.Get("Idempotency-Key")]++
		h.mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

// counts returns a copy of the calls per trigger id and per key.
func (h *countHook) counts() (triggers, keys map[string]int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	triggers, keys = map[string]int{}, map[string]int{}
	for k, v := range h.triggers {
		triggers[k] = v
	}
	for k, v := range h.keys {
		keys[k] = v
	}
	return triggers, keys
}

// TestDiskFull puts the node's SQLite file on a 64 MiB tmpfs (diskFullFS)
// and fills the filesystem with a filler file until ENOSPC. While it is
// full: writes through the API, the web table's rows and the jobs API
// answer 503 code unavailable naming the full disk; reads (a row, a task,
// its runs, the table and its page) answer 200; /healthz and the status
// say the store's disk is full; the tasks stay running. When the filler
// is removed the node recovers with no restart: /healthz is healthy,
// writes work, both tasks fire again, and the slots that came while the
// disk was full are in the ledger as misfires (misfire: all, every one of
// them; misfire: once, the latest), each delivered once at the hook.
func TestDiskFull(t *testing.T) {
	if testDriver() == "mongo" {
		t.Skip("skipped: the disk-full test is about the SQLite file's filesystem")
	}
	dir := mountTmpfs(t, diskFullFS)
	h := startCountHook(t)
	b := setup(t, func(c *config.Config) {
		c.Store.Path = filepath.Join(dir, "cronsheet.db")
		c.HTTP.Allow = []string{"127.0.0.0/8"}
	})
	target := map[string]any{"id": "hook", "kind": "http", "state": "running",
		"http": map[string]any{"method": "POST", "url": h.srv.URL}}
	if code := b.call(t, "POST", "/api/v1/targets", target, nil); code != http.StatusCreated {
		t.Fatalf("create target: status %d", code)
	}
	addRow(t, b, "all", "hook", map[string]any{"when": "every 1s", "misfire": "all"})
	addRow(t, b, "once", "hook", map[string]any{"when": "every 1s", "misfire": "once"})
	for _, id := range []string{"all", "once"} {
		eventually(t, id+"'s first deliveries", func() bool { return doneRuns(b.runs(t, id)) >= 2 })
	}

	fillFS(t, filepath.Join(dir, "filler"))
	full := time.Now()

	// (a) Writes answer 503 naming the cause. The first writes after the
	// fill may still fit in blocks SQLite had already taken (the WAL only
	// grows here), so wait for the first refusal; from then on every
	// door refuses.
	var refused errorAnswer
	eventually(t, "a write refused for disk full", func() bool {
		refused = errorAnswer{}
		return b.call(t, "POST", "/api/v1/scenarios/memos/rows", map[string]any{"memo_id": "new",
			"content": strings.Repeat("x", 8000), "when": "every 1h", "targets": "hook"}, &refused) == http.StatusServiceUnavailable
	})
	wantDiskFull(t, "create row", http.StatusServiceUnavailable, refused)
	for _, w := range []struct {
		name, method, path string
		body               any
	}{
		{"edit row", "PATCH", "/api/v1/scenarios/memos/rows/all", map[string]any{"content": "edited"}},
		{"create target", "POST", "/api/v1/targets", map[string]any{"id": "t2", "kind": "http", "state": "running",
			"http": map[string]any{"method": "POST", "url": h.srv.URL}}},
		{"submit job", "POST", "/api/v1/jobs", map[string]any{"method": "POST", "cron": "every 1h", "name": h.srv.URL}},
		{"pause task", "PUT", "/api/v1/tasks/all/state", map[string]string{"state": "stopped"}},
	} {
		var a errorAnswer
		wantDiskFull(t, w.name, b.call(t, w.method, w.path, w.body, &a), a)
	}

	// A bulk action answers 200 with each row's outcome: the row's is 503.
	var bulk struct {
		Results []struct {
			Status int    `json:"status"`
			Error  string `json:"error"`
		} `json:"results"`
	}
	if code := b.call(t, "POST", "/api/v1/scenarios/memos/rows/bulk", map[string]any{"action": "deactivate",
		"ids": []string{"once"}}, &bulk); code != http.StatusOK || len(bulk.Results) != 1 ||
		bulk.Results[0].Status != http.StatusServiceUnavailable || !strings.Contains(bulk.Results[0].Error, "disk is full") {
		t.Errorf("bulk deactivate while the disk is full: status %d, %+v; want the row's outcome 503 naming the full disk", code, bulk)
	}

	// (b) Reads go on.
	for _, p := range []string{"/api/v1/scenarios/memos/rows/all", "/api/v1/tasks/all", "/api/v1/runs?task_id=all",
		"/api/v1/scenarios/memos/table?draw=1&start=0&length=10", "/api/v1/targets", "/"} {
		if p == "/" && len(b.srv.missingAssets) > 0 {
			continue // a checkout without the vendored files answers its pages 503 (pages_test.go)
		}
		if code := b.call(t, "GET", p, nil, nil); code != http.StatusOK {
			t.Errorf("GET %s while the disk is full: status %d, want 200", p, code)
		}
	}
	// /healthz and the status name the cause.
	eventually(t, "/healthz saying the disk is full", func() bool {
		code, body := getBody(t, b.base+"/healthz")
		return code == http.StatusServiceUnavailable && strings.Contains(body, "disk is full")
	})
	var st struct {
		Store struct {
			OK    bool   `json:"ok"`
			Error string `json:"error"`
		} `json:"store"`
	}
	if code := b.call(t, "GET", "/api/v1/status", nil, &st); code != http.StatusServiceUnavailable || st.Store.OK ||
		!strings.Contains(st.Store.Error, "disk is full") {
		t.Errorf("status while full: %d, store %+v; want 503, ok false naming the full disk", code, st.Store)
	}
	// Stay full until both tasks' fires failed: a fire the store cannot
	// take disarms its task (reconcile releases it, publish arms it again
	// once writes work), so the slots of the outage are misfires. The
	// space may come back at once then: a fire of a task's next slot
	// started while the failed one was still retrying waits for it and is
	// not recorded after it (arming's in-flight gate), so the ledger's
	// last slot stays before the failed one.
	var armed struct {
		Armed int `json:"armed"`
	}
	eventually(t, "both tasks disarmed by their failed fires", func() bool {
		b.call(t, "GET", "/api/v1/status", nil, &armed) // 503 while full, with the body
		return armed.Armed == 0
	})
	// (c) The tasks stay running (nothing disabled, closed or done).
	for _, id := range []string{"all", "once"} {
		if tk := getTask(t, b, id); tk.State != task.StateRunning || tk.IsDone != 0 {
			t.Errorf("task %s while full: state %q, done %d; want running, not done", id, tk.State, tk.IsDone)
		}
	}

	// (e) Space returns: the node recovers by itself.
	if err := os.Remove(filepath.Join(dir, "filler")); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	eventually(t, "/healthz healthy again", func() bool {
		code, _ := getBody(t, b.base+"/healthz")
		return code == http.StatusOK
	})
	addRow(t, b, "after", "hook", map[string]any{"when": "every 1h"})

	// (d) No slot lost: "all" has every slot from its first to one after
	// the space came back, each once; the ones that came while the disk
	// was full fired as misfires. "once" fired its latest missed slot.
	var runs []*task.Run
	eventually(t, "all's ledger past the outage", func() bool {
		runs = b.runs(t, "all")
		return len(runs) > 0 && runs[0].Slot.After(back.Add(time.Second)) && doneRuns(runs) == len(runs)
	})
	checkEverySlot(t, "all", runs, full)
	var onceRuns []*task.Run
	eventually(t, "once's misfire", func() bool {
		onceRuns = b.runs(t, "once")
		return hasTrigger(onceRuns, task.TriggerMisfire) && doneRuns(onceRuns) == len(onceRuns)
	})
	triggers, keys := h.counts()
	for _, r := range append(runs, onceRuns...) {
		if n := triggers[r.TriggerID]; n != 1 {
			t.Errorf("run %s (%s, slot %s) delivered %d times, want once", r.TriggerID, r.TaskID, r.Slot, n)
		}
	}
	for k, n := range keys {
		if n != 1 {
			t.Errorf("Idempotency-Key %q delivered %d times, want once", k, n)
		}
	}
	eventually(t, "both tasks armed again", func() bool {
		return b.call(t, "GET", "/api/v1/status", nil, &armed) == http.StatusOK && armed.Armed >= 2
	})
}

// errorAnswer is an API error body.
type errorAnswer struct {
	Error string `json:"error"`
	Code  string `json:"code"`
}

// wantDiskFull checks a write's answer: 503, code unavailable, a message
// naming the full disk.
func wantDiskFull(t *testing.T, what string, code int, a errorAnswer) {
	t.Helper()
	if code != http.StatusServiceUnavailable || a.Code != string(task.CodeServiceUnavailable) ||
		!strings.Contains(a.Error, "disk is full") {
		t.Errorf("%s while the disk is full: status %d, %+v; want 503 unavailable naming the full disk", what, code, a)
	}
}

// getBody GETs url and returns its status and body.
func getBody(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(raw)
}

// getTask reads task id through the API.
func getTask(t *testing.T, b *testBundle, id string) *task.Task {
	t.Helper()
	var raw json.RawMessage
	if code := b.call(t, "GET", "/api/v1/tasks/"+id, nil, &raw); code != http.StatusOK {
		t.Fatalf("get task %s: status %d", id, code)
	}
	var tk task.Task
	if err := json.Unmarshal(raw, &tk); err != nil {
		t.Fatalf("decode task %s: %v", id, err)
	}
	return &tk
}

// doneRuns counts the runs that ended done.
func doneRuns(runs []*task.Run) int {
	n := 0
	for _, r := range runs {
		if r.State == task.RunDone {
			n++
		}
	}
	return n
}

func hasTrigger(runs []*task.Run, tt task.TriggerType) bool {
	for _, r := range runs {
		if r.TriggerType == tt {
			return true
		}
	}
	return false
}

// checkEverySlot checks that runs hold one run per second from the
// oldest slot to the newest, none twice, and that some slot after full
// fired as a misfire.
func checkEverySlot(t *testing.T, id string, runs []*task.Run, full time.Time) {
	t.Helper()
	runs = slices.Clone(runs)
	slices.SortFunc(runs, func(a, b *task.Run) int { return b.Slot.Compare(a.Slot) }) // newest first
	misfires := 0
	for i := len(runs) - 1; i > 0; i-- {
		if gap := runs[i-1].Slot.Sub(runs[i].Slot); gap != time.Second {
			t.Errorf("%s: slot %s follows %s (gap %s): a slot is missing or twice", id, runs[i-1].Slot, runs[i].Slot, gap)
		}
	}
	for _, r := range runs {
		if r.TriggerType == task.TriggerMisfire && r.Slot.After(full) {
			misfires++
		}
	}
	if misfires == 0 {
		t.Errorf("%s: no slot after the fill was fired as a misfire; runs %v", id, slotsOf(runs))
	}
}

func slotsOf(runs []*task.Run) []string {
	var out []string
	for _, r := range runs {
		out = append(out, r.Slot.Format("15:04:05")+" "+string(r.TriggerType)+" "+string(r.State))
	}
	return out
}
