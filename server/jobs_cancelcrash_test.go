package server

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"cronsheet/config"
	"cronsheet/executors"
	"cronsheet/store"
	"cronsheet/store/faulty"
	"cronsheet/task"
)

// crashAfterFirstStore is a node's store that dies, as under a kill -9,
// right after the first write a cancel of job makes: once armed, the
// first InsertRun or SetTaskState of the job goes through, and from then
// on every write of the node fails (the faulty store under it fails them
// all before they are stored); reads go on, as another process would see
// the store.
type crashAfterFirstStore struct {
	store.Product
	faults *faulty.Store
	mu     sync.Mutex
	job    string    // armed for this job's cancel
	at     time.Time // when it crashed; zero before
	first  string    // the write that went through
}

func (c *crashAfterFirstStore) arm(job string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.job = job
}

// hit reports whether a write of task id is the cancel's first write.
func (c *crashAfterFirstStore) hit(id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.job != "" && c.job == id && c.at.IsZero()
}

// crash fails every later write, naming the write that went through.
func (c *crashAfterFirstStore) crash(method string) {
	c.faults.Set(faulty.Rule{Mode: faulty.Before})
	c.mu.Lock()
	defer c.mu.Unlock()
	c.at, c.first = time.Now(), method
}

func (c *crashAfterFirstStore) crashed() (time.Time, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.at, c.first
}

func (c *crashAfterFirstStore) InsertRun(ctx context.Context, r *task.Run) (bool, error) {
	hit := c.hit(r.TaskID)
	ok, err := c.Product.InsertRun(ctx, r)
	if hit {
		c.crash("InsertRun")
	}
	return ok, err
}

func (c *crashAfterFirstStore) SetTaskState(ctx context.Context, p store.TaskStateParams) (*task.Task, error) {
	hit := c.hit(p.TaskID)
	t, err := c.Product.SetTaskState(ctx, p)
	if hit {
		c.crash("SetTaskState")
	}
	return t, err
}

// triggerHook counts deliveries by their X-Cronsheet-Trigger-Id, with
// the slot their Idempotency-Key (job:slot_ms) names.
type triggerHook struct {
	srv   *httptest.Server
	mu    sync.Mutex
	slots map[string]int64 // trigger id → slot (unix ms)
}

func startTriggerHook(t *testing.T) *triggerHook {
	t.Helper()
	h := &triggerHook{slots: map[string]int64{}}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		parts := strings.Split(r.Header.Get("Idempotency-Key"), ":")
		var slot int64
		if len(parts) > 1 {
			slot, _ = strconv.ParseInt(parts[1], 10, 64)
		}
		h.mu.Lock()
		h.slots[r.Header.Get(executors.HeaderTriggerID)] = slot
		h.mu.Unlock()
	}))
	t.Cleanup(h.srv.Close)
	return h
}

// after returns the trigger ids delivered for slots after at.
func (h *triggerHook) after(at time.Time) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for id, slot := range h.slots {
		if slot > at.UnixMilli() {
			out = append(out, id)
		}
	}
	return out
}

func (h *triggerHook) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.slots)
}

// TestCronCancelKilledMidway: a node dies (every write fails from then
// on, as after a kill -9) right after the first write of a cron job's
// cancel, its client unanswered; another node on the same store never
// delivers a slot of the job after the crash, and reads it cancelled
// with a history ending cancelled (its repair appends the transition the
// kill lost). The cancel closes the job first (jobs.Service.cancelCron):
// the close alone stops it on every node. When the cancel took the job's
// slot first, the slot alone was stored, and the next node went on firing
// the slots after it. On both drivers.
func TestCronCancelKilledMidway(t *testing.T) {
	hook := startTriggerHook(t)
	path := filepath.Join(t.TempDir(), "cronsheet.db")
	node := func(id string) func(*config.Config) {
		return func(c *config.Config) {
			c.HTTP.Allow = []string{"127.0.0.0/8"}
			c.Store.Path = path
			c.NodeID = id
		}
	}
	var crashing *crashAfterFirstStore
	a := setup(t, node("node-a"), WithStoreWrapper(func(p store.Product) store.Product {
		crashing = &crashAfterFirstStore{faults: faulty.Wrap(p, 1)}
		crashing.Product = crashing.faults.AsProduct()
		return crashing
	}))
	a.runEnded = func(error) bool { return true } // a dead store may end it with an error
	var v jobView
	if code := a.call(t, "POST", "/api/v1/jobs", map[string]any{"method": "POST", "cron": "every 1s",
		"name": hook.srv.URL + "/cron"}, &v); code != http.StatusCreated {
		t.Fatalf("submit: %d", code)
	}
	eventually(t, "the cron job to fire twice", func() bool { return hook.count() >= 2 })

	crashing.arm(v.ID)
	// The client gives up as it would when the node dies under it.
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	req, _ := http.NewRequestWithContext(ctx, "DELETE", a.base+"/api/v1/jobs/"+v.ID, nil)
	if resp, err := http.DefaultClient.Do(req); err == nil {
		resp.Body.Close()
		if resp.StatusCode == http.StatusOK {
			t.Errorf("the cancel was answered 200 although the node died after its first write")
		}
	}
	cancel()
	crashAt, first := crashing.crashed()
	if crashAt.IsZero() {
		t.Fatal("the cancel made no write of the job")
	}
	t.Logf("the node died after the cancel's %s", first)
	go a.stop() // its stop overlaps the next node's start, as a restart's would

	b := setup(t, node("node-b"))
	// The next node claims what node-a held once its lease (3 s) ran out;
	// a job still armed would fire every second from then on.
	time.Sleep(7 * time.Second)
	if late := hook.after(crashAt); len(late) > 0 {
		t.Errorf("%d slots of the cancelled job delivered after the crash (trigger ids %v)", len(late), late)
	}
	j := b.job(t, v.ID)
	if j.State != task.JobCancelled {
		t.Errorf("the job reads %s after the restart, want cancelled", j.State)
	}
	eventually(t, "the job's history to end cancelled (repair)", func() bool {
		evs := b.job(t, v.ID).Events
		return len(evs) > 0 && evs[len(evs)-1].State == task.JobCancelled
	})
}
