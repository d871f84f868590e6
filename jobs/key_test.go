package jobs

import (
	"context"
	"errors"
	"strings"
	"testing"

	"cronsheet/fire"
	"cronsheet/task"
)

// noTrigger is a Trigger for tests that fire nothing.
func noTrigger(context.Context, fire.TriggerParams) ([]*task.Run, error) {
	return nil, errors.New("no trigger in this test")
}

// TestKeyRepeatMustBeSameRequest: a submission under a key a job holds
// gets that job back when it is the same request (the key and wait aside,
// and a default given explicitly), and is a conflict naming the key when
// any field that defines the job differs; the job is left as it was.
func TestKeyRepeatMustBeSameRequest(t *testing.T) {
	ctx := t.Context()
	svc := New(Deps{Store: testStore(t), Trigger: noTrigger})
	defer svc.Close()
	first, err := svc.Submit(ctx, jobRequest("http://127.0.0.1:9/k", "k1"))
	if err != nil || !first.Created {
		t.Fatalf("first submit: %+v, %v", first, err)
	}
	same := jobRequest("http://127.0.0.1:9/k", "k1")
	retries := task.DefaultJobRetry
	same.MaxRetries = &retries
	same.Method = " post "
	again, err := svc.Submit(ctx, same)
	if err != nil || again.ID != first.ID || again.Created {
		t.Fatalf("same request again: %+v, %v; want job %s, not created", again, err, first.ID)
	}
	ten := 10.0
	for name, change := range map[string]func(r *Request){
		"name":   func(r *Request) { r.Name += "2" },
		"params": func(r *Request) { r.Params = []byte(`"other"`) },
		"delay":  func(r *Request) { r.Delay = &ten },
		"ttl":    func(r *Request) { r.TTL = &ten },
		"cron":   func(r *Request) { r.Delay, r.Cron = nil, "every 5m" },
	} {
		r := jobRequest("http://127.0.0.1:9/k", "k1")
		change(&r)
		v, err := svc.Submit(ctx, r)
		if !errors.Is(err, task.ErrConflict) || task.CodeOf(err) != task.CodeAlreadyExists ||
			!strings.HasPrefix(err.Error(), "key: job "+first.ID+` holds key "k1"`) {
			t.Errorf("%s differs: %+v, %v; want a conflict naming the key and job %s", name, v, err, first.ID)
		}
	}
	if got, err := svc.Get(ctx, first.ID); err != nil || got.Name != "http://127.0.0.1:9/k" || got.State != task.JobPending {
		t.Errorf("the key's job after the refusals = %+v, %v; want it unchanged", got, err)
	}
}

// TestUpsertSaysWhetherItCreated: an upsert under a new key creates the
// job (Replaced empty); under a held key it replaces the holder and names
// it.
func TestUpsertSaysWhetherItCreated(t *testing.T) {
	ctx := t.Context()
	svc := New(Deps{Store: testStore(t), Trigger: noTrigger})
	defer svc.Close()
	created, err := svc.Upsert(ctx, "nightly", jobRequest("http://127.0.0.1:9/u", ""))
	if err != nil || created.Replaced != "" || !created.Created {
		t.Fatalf("upsert of a new key: %+v, %v; want it created, nothing replaced", created, err)
	}
	replacing, err := svc.Upsert(ctx, "nightly", jobRequest("http://127.0.0.1:9/u", ""))
	if err != nil || replacing.Replaced != created.ID || replacing.ID == created.ID {
		t.Fatalf("upsert of a held key: %+v, %v; want a new job replacing %s", replacing, err, created.ID)
	}
}
