package executors_test

import (
	"context"
	"testing"

	"cronsheet/executors"
)

// TestHTTPIdempotencyKeyPerTarget: one slot's deliveries to two targets
// carry different Idempotency-Keys, each the ledger's key
// task:slot:target.
func TestHTTPIdempotencyKeyPerTarget(t *testing.T) {
	t.Parallel()
	b := setupHook(t, nil)
	h := newHTTP(t, loopbackAllowed())
	keys := map[string]string{}
	for _, id := range []string{"hook-a", "hook-b"} {
		d := httpDelivery("POST", b.srv.URL+"/hook")
		d.Target.ID = id
		if _, err := h.Execute(context.Background(), d); err != nil {
			t.Fatalf("Execute to %s: %v", id, err)
		}
		keys[id] = d.LedgerKey()
	}
	reqs := b.requests()
	if len(reqs) != 2 {
		t.Fatalf("endpoint received %d requests, want 2", len(reqs))
	}
	a, c := reqs[0].Header.Get(executors.HeaderIdempotencyKey), reqs[1].Header.Get(executors.HeaderIdempotencyKey)
	if a == c {
		t.Errorf("both targets got Idempotency-Key %q, want one per target", a)
	}
	if want := "task-1:1772872200000:hook-a"; keys["hook-a"] != want || a != want {
		t.Errorf("Idempotency-Key = %q (Delivery says %q), want %q", a, keys["hook-a"], want)
	}
}
