package jobs

import (
	"context"
	"errors"
	"sync"
	"testing"

	"cronsheet/task"
)

// crashStore dies, as under a kill -9, right after the first write of
// job armed (its slot taken, or its replace): every later InsertRun and
// ReplaceJob fails before it is stored.
type crashStore struct {
	Store
	mu      sync.Mutex
	armed   string
	crashed bool
}

// write runs fn unless the store died; the first write of the armed job
// goes through and kills it.
func (c *crashStore) write(id string, fn func() error) error {
	c.mu.Lock()
	dead, first := c.crashed, c.armed != "" && c.armed == id
	c.crashed = c.crashed || first
	c.mu.Unlock()
	if dead {
		return errors.New("injected: the process died")
	}
	return fn()
}

func (c *crashStore) InsertRun(ctx context.Context, r *task.Run) (ok bool, err error) {
	err = c.write(r.TaskID, func() (err error) { ok, err = c.Store.InsertRun(ctx, r); return err })
	return ok, err
}

func (c *crashStore) ReplaceJob(ctx context.Context, key, oldID string, t *task.Task) error {
	return c.write(oldID, func() error { return c.Store.ReplaceJob(ctx, key, oldID, t) })
}

// TestCronReplaceKilledMidway: a node killed after the first write of a
// cron job's replace (Upsert under its key) leaves the old job closed,
// so it never fires again: the replace closes it first and takes its
// slot after (upsertOnce). When the slot was taken first, the old job
// was left running, its newest run reading cancelled. On both drivers.
func TestCronReplaceKilledMidway(t *testing.T) {
	ctx := t.Context()
	st := &crashStore{Store: testStore(t)}
	svc := New(Deps{Store: st, Trigger: noTrigger, RepairAfter: -1})
	defer svc.Close()
	req := Request{Method: "POST", Name: "http://127.0.0.1:9/cron", Cron: "every 1h", Key: "nightly"}
	old, err := svc.Submit(ctx, req)
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	st.mu.Lock()
	st.armed = old.ID
	st.mu.Unlock()
	req.Name = "http://127.0.0.1:9/cron2"
	if v, err := svc.Upsert(ctx, "nightly", req); err == nil {
		t.Logf("the replace was answered %+v although the node died midway", v)
	}
	got, err := st.GetTask(ctx, old.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != task.StateClosed {
		t.Errorf("the old cron job is %s after a replace killed midway; want closed (it would go on firing)", got.State)
	}
}
