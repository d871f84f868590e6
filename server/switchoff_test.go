package server

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cronsheet/config"
	"cronsheet/executors"
	"cronsheet/store"
	"cronsheet/task"
)

// heldSyncStore holds the sync patrol's listing of edited rows while held
// is set: a row edit then reaches its task only through the request that
// made it.
type heldSyncStore struct {
	store.Product
	mu      sync.Mutex
	held    chan struct{} // closed to let the listing go; nil while not held
	blocked chan struct{} // closed when a held listing waits
}

func (s *heldSyncStore) ListUnfetchedRows(ctx context.Context, limit int) ([]*task.Row, error) {
	s.mu.Lock()
	held, blocked := s.held, s.blocked
	s.mu.Unlock()
	if held != nil {
		select {
		case <-blocked:
		default:
			close(blocked)
		}
		select {
		case <-held:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return s.Product.ListUnfetchedRows(ctx, limit)
}

// hold stops the sync patrol at its next listing until the returned
// function is called; blocked is closed once it waits there.
func (s *heldSyncStore) hold() (blocked <-chan struct{}, release func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.held, s.blocked = make(chan struct{}), make(chan struct{})
	held := s.held
	return s.blocked, func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		close(held)
		s.held = nil
	}
}

// TestRowSwitchOffHoldsAtItsAnswer: a row switched off (a PATCH of its
// active field to 0, a bulk deactivate, a delete) has its task disabled before
// the request is answered, not when the sync patrol gets to it: with the
// patrol held, no fire that starts after the answer delivers (a fire
// that read the task before it may).
func TestRowSwitchOffHoldsAtItsAnswer(t *testing.T) {
	var (
		mu         sync.Mutex
		deliveries = map[string]time.Time{} // trigger id → arrival
	)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		deliveries[r.Header.Get(executors.HeaderTriggerID)] = time.Now()
		mu.Unlock()
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(hook.Close)
	held := &heldSyncStore{}
	b := setup(t, func(c *config.Config) { c.HTTP.Allow = []string{"127.0.0.0/8"} },
		func(s *Server) { held.Product = s.store; s.store = held })
	target := map[string]any{"id": "tick", "kind": "http", "state": "running",
		"http": map[string]any{"method": "POST", "url": hook.URL + "/tick"}}
	if code := b.call(t, "POST", "/api/v1/targets", target, nil); code != http.StatusCreated {
		t.Fatalf("create target: status %d", code)
	}
	for _, c := range []struct {
		name string
		off  func(id string)
	}{
		{"Patch", func(id string) {
			if code := b.call(t, "PATCH", "/api/v1/scenarios/memos/rows/"+id, map[string]any{"active": 0}, nil); code != http.StatusOK {
				t.Fatalf("switch off: status %d", code)
			}
		}},
		{"Bulk", func(id string) {
			var ans struct{ OK int }
			body := map[string]any{"action": "deactivate", "ids": []string{id}}
			if code := b.call(t, "POST", "/api/v1/scenarios/memos/rows/bulk", body, &ans); code != http.StatusOK || ans.OK != 1 {
				t.Fatalf("bulk deactivate: status %d, %+v", code, ans)
			}
		}},
		{"Delete", func(id string) { // DeleteRow retires the task with the row
			if code := b.call(t, "DELETE", "/api/v1/scenarios/memos/rows/"+id, nil, nil); code != http.StatusNoContent {
				t.Fatalf("delete: status %d", code)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			id := "tick-" + c.name
			addRow(t, b, id, "tick", map[string]any{"when": "every 1s"})
			eventually(t, "a delivery of "+id, func() bool { return len(b.runs(t, id)) > 0 })
			blocked, release := held.hold()
			<-blocked // the patrol cannot sync the edit
			c.off(id)
			answered := time.Now()
			time.Sleep(2500 * time.Millisecond) // two slots or more after the answer
			release()
			mu.Lock()
			var late []string
			for tr, at := range deliveries {
				if at.After(answered) {
					late = append(late, tr)
				}
			}
			mu.Unlock()
			for _, tr := range late {
				if r := b.run(t, tr); r.TaskID == id && r.FiredAt.After(answered) {
					t.Errorf("run %s of %s fired %s after the switch-off was answered and was delivered",
						tr, id, r.FiredAt.Sub(answered))
				}
			}
			if c.name != "Delete" {
				waitTask(t, b, id, func(tk *task.Task) bool { return tk.IsEnable == 0 })
			}
		})
	}
}

// failingSyncStore fails every ApplySync while failing is set: a row's
// switch-off then cannot reach its task at the request.
type failingSyncStore struct {
	store.Product
	failing atomic.Bool
}

func (s *failingSyncStore) ApplySync(ctx context.Context, p store.ApplySyncParams) error {
	if s.failing.Load() {
		return errors.New("injected: sync refused")
	}
	return s.Product.ApplySync(ctx, p)
}

// TestRowSwitchOffAnswerSaysWhatHolds: the answer to PATCH {"active":0}
// shows the row switched off: is_active 0 and is_fetched 1 when its task
// was disabled at the request; is_active 0 with is_fetched 0 (the task's
// side pending) when that write failed. Before, both answered is_active 1
// until the next sync.
func TestRowSwitchOffAnswerSaysWhatHolds(t *testing.T) {
	fs := &failingSyncStore{}
	b := setup(t, nil, func(s *Server) { fs.Product = s.store; s.store = fs })
	for _, c := range []struct {
		name        string
		fail        bool
		wantFetched int
	}{{"Synced", false, 1}, {"Pending", true, 0}} {
		t.Run(c.name, func(t *testing.T) {
			id := "off-" + c.name
			b.addRow(t, map[string]any{"memo_id": id, "content": "x", "when": "daily 03:00", "channel": "outbox"})
			fs.failing.Store(c.fail)
			defer fs.failing.Store(false)
			var row task.Row
			if code := b.call(t, "PATCH", "/api/v1/scenarios/memos/rows/"+id, map[string]any{"active": 0}, &row); code != http.StatusOK {
				t.Fatalf("switch off: status %d", code)
			}
			if row.IsActive != task.RowInactive || row.IsFetched != c.wantFetched {
				t.Errorf("answer: is_active %d, is_fetched %d; want 0 and %d", row.IsActive, row.IsFetched, c.wantFetched)
			}
		})
	}
}
