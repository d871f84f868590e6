package server

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"cronsheet/config"
	"cronsheet/executors"
	"cronsheet/task"
)

// holdHook is a callback endpoint that records each call (by task, from
// the Idempotency-Key) and holds it until its task is let go.
type holdHook struct {
	srv      *httptest.Server
	mu       sync.Mutex
	calls    map[string][]time.Time
	gates    map[string]chan struct{}
	triggers map[string]int // calls per trigger id
}

func startHoldHook(t *testing.T) *holdHook {
	t.Helper()
	h := &holdHook{calls: map[string][]time.Time{}, gates: map[string]chan struct{}{}, triggers: map[string]int{}}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, _, _ := strings.Cut(r.Header.Get("Idempotency-Key"), ":")
		h.mu.Lock()
		h.calls[id] = append(h.calls[id], time.Now())
		h.triggers[r.Header.Get(executors.HeaderTriggerID)]++
		gate := h.gateLocked(id)
		h.mu.Unlock()
		select {
		case <-gate:
		case <-r.Context().Done():
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(h.srv.Close)
	t.Cleanup(func() { // the held calls end before the server closes
		h.mu.Lock()
		defer h.mu.Unlock()
		for id, g := range h.gates {
			select {
			case <-g:
			default:
				close(g)
			}
			delete(h.gates, id)
		}
	})
	return h
}

func (h *holdHook) gateLocked(id string) chan struct{} {
	g := h.gates[id]
	if g == nil {
		g = make(chan struct{})
		h.gates[id] = g
	}
	return g
}

// letGo lets the held calls of task id, and all later ones, through.
func (h *holdHook) letGo(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	close(h.gateLocked(id))
}

// callsWith returns how many calls carried trigger id tr.
func (h *holdHook) callsWith(tr string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.triggers[tr]
}

// callsOf returns when the calls of task id arrived.
func (h *holdHook) callsOf(id string) []time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]time.Time(nil), h.calls[id]...)
}

// TestQueuedSlotsEndWithTheirTask: a task under overlap queue whose first
// delivery is held at the hook queues its next slot (one: the slots after
// it are recorded skipped with the reason). When the task is
// cancelled (a cron job), switched off (a row) or paused or closed (the
// task state), its queued run ends cancelled while the held delivery
// still runs, and no call reaches the hook after the change was answered.
func TestQueuedSlotsEndWithTheirTask(t *testing.T) {
	h := startHoldHook(t)
	b := setup(t, func(c *config.Config) { c.HTTP.Allow = []string{"127.0.0.0/8"} })
	target := map[string]any{"id": "hold", "kind": "http", "state": "running",
		"http": map[string]any{"method": "POST", "url": h.srv.URL + "/row"}}
	if code := b.call(t, "POST", "/api/v1/targets", target, nil); code != http.StatusCreated {
		t.Fatalf("create target: status %d", code)
	}
	row := func(id string) string {
		addRow(t, b, id, "hold", map[string]any{"when": "every 1s", "overlap": "queue"})
		return id
	}
	for _, c := range []struct {
		name   string
		create func() string
		stop   func(id string) // answered when it returns
	}{
		{"JobCancelled", func() string {
			var v jobView
			if code := b.call(t, "POST", "/api/v1/jobs", map[string]any{"method": "POST", "cron": "every 1s",
				"overlap": "queue", "name": h.srv.URL + "/job"}, &v); code != http.StatusCreated {
				t.Fatalf("submit: status %d", code)
			}
			return v.ID
		}, func(id string) {
			if code := b.call(t, "DELETE", "/api/v1/jobs/"+id, nil, nil); code != http.StatusOK {
				t.Fatalf("cancel: status %d", code)
			}
		}},
		{"RowSwitchedOff", func() string { return row("off") }, func(id string) {
			if code := b.call(t, "PATCH", "/api/v1/scenarios/memos/rows/"+id, map[string]any{"active": 0}, nil); code != http.StatusOK {
				t.Fatalf("switch off: status %d", code)
			}
		}},
		{"TaskPaused", func() string { return row("paused") }, func(id string) {
			if code := b.call(t, "PUT", "/api/v1/tasks/"+id+"/state", map[string]string{"state": "stopped"}, nil); code != http.StatusOK {
				t.Fatalf("pause: status %d", code)
			}
		}},
		{"TaskClosed", func() string { return row("closed") }, func(id string) {
			if code := b.call(t, "PUT", "/api/v1/tasks/"+id+"/state", map[string]string{"state": "closed"}, nil); code != http.StatusOK {
				t.Fatalf("close: status %d", code)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			id := c.create()
			eventually(t, "the first delivery of "+id+" to reach the hook", func() bool { return len(h.callsOf(id)) > 0 })
			eventually(t, "a slot of "+id+" to queue and a later one to be skipped", func() bool {
				runs := b.runs(t, id)
				return countState(runs, task.RunPending) == 1 && slices.ContainsFunc(runs, func(r *task.Run) bool {
					return r.State == task.RunSkipped && strings.Contains(r.Error, "queue holds one")
				})
			})
			c.stop(id)
			answered := time.Now()
			var runs []*task.Run
			eventually(t, "the queued runs of "+id+" to end while the first is held", func() bool {
				runs = b.runs(t, id)
				return countState(runs, task.RunPending) == 0
			})
			n := 0
			for _, r := range runs {
				if r.State == task.RunCancelled && strings.Contains(r.Error, "while this run was queued") {
					n++
				}
			}
			if n != 1 {
				t.Errorf("%d queued runs cancelled, want the one queued: %s", n, statesOf(runs))
			}
			h.letGo(id)
			eventually(t, "every run of "+id+" to end", func() bool {
				runs = b.runs(t, id)
				return !slices.ContainsFunc(runs, func(r *task.Run) bool { return !r.State.Final() })
			})
			calls := h.callsOf(id)
			for _, at := range calls {
				if at.After(answered) {
					t.Errorf("a call reached the hook %s after the change was answered", at.Sub(answered))
				}
			}
			if len(calls) != 1 {
				t.Errorf("%d calls reached the hook, want 1 (the held one); runs: %s", len(calls), statesOf(runs))
			}
		})
	}
}

func countState(runs []*task.Run, s task.RunState) int {
	n := 0
	for _, r := range runs {
		if r.State == s {
			n++
		}
	}
	return n
}

func statesOf(runs []*task.Run) string {
	var parts []string
	for _, r := range runs {
		parts = append(parts, string(r.State)+"("+r.Error+")")
	}
	return strings.Join(parts, ", ")
}

// TestQueuedRunRescuedIsDelivered: the node delivering a task under
// overlap queue and retries 0 stops while its first delivery is held and
// a slot is queued (the queue holds one). The node that takes the runs
// over delivers the queued run once, at attempt 1: it was never
// attempted. The held run,
// cut by the stop, was attempted: with no retry left it ends dead.
func TestQueuedRunRescuedIsDelivered(t *testing.T) {
	h := startHoldHook(t)
	dbPath := filepath.Join(t.TempDir(), "cronsheet.db")
	node := func(id string) *testBundle {
		return setup(t, func(c *config.Config) {
			c.Store.Path, c.NodeID, c.HTTP.Allow = dbPath, id, []string{"127.0.0.0/8"}
			c.ShutdownTimeout = 500 * time.Millisecond
		})
	}
	a := node("node-a")
	target := map[string]any{"id": "hold", "kind": "http", "state": "running",
		"http": map[string]any{"method": "POST", "url": h.srv.URL + "/row"}}
	if code := a.call(t, "POST", "/api/v1/targets", target, nil); code != http.StatusCreated {
		t.Fatalf("create target: status %d", code)
	}
	addRow(t, a, "q", "hold", map[string]any{"when": "every 1s", "overlap": "queue"}) // retries 0
	eventually(t, "the first delivery to reach the hook", func() bool { return len(h.callsOf("q")) > 0 })
	var queued []*task.Run
	eventually(t, "a slot to queue", func() bool {
		queued = queued[:0]
		for _, r := range a.runs(t, "q") {
			if r.State == task.RunPending {
				queued = append(queued, r)
			}
		}
		return len(queued) == 1
	})
	b := node("node-b")
	a.stop() // cuts the held delivery; the queued runs stay pending, node-a's
	h.letGo("q")
	for _, q := range queued {
		var r *task.Run
		eventually(t, "queued run "+q.TriggerID+" to end", func() bool {
			r = b.run(t, q.TriggerID)
			return r.State.Final()
		})
		if r.State != task.RunDone || r.Attempt != 1 || r.Node != "node-b" {
			t.Errorf("queued run %s = %s at attempt %d by %s (%s), want done at attempt 1 by node-b",
				q.TriggerID, r.State, r.Attempt, r.Node, r.Error)
		}
		if n := h.callsWith(q.TriggerID); n != 1 {
			t.Errorf("queued run %s reached the hook %d times, want 1", q.TriggerID, n)
		}
	}
}
