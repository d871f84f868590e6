package fire_test

import (
	"fmt"
	"sync"
	"testing"

	"cronsheet/fire"
	"cronsheet/task"
)

// TestConcurrentFiresShareTransactions fires many tasks at once: every slot
// is recorded exactly once and delivered once, whichever fire ends up
// writing the shared ledger transaction.
func TestConcurrentFiresShareTransactions(t *testing.T) {
	b := setup(t)
	const n = 40
	armed := make([]*task.Task, n)
	for i := range n {
		tk := newTask(fmt.Sprintf("burst-%02d", i))
		tk.TaskType = task.ChannelOutbox
		armed[i] = b.add(t, tk, node)
	}
	var wg sync.WaitGroup
	outcomes := make([]fire.Outcome, 2*n)
	for i := range 2 * n { // each slot twice: half must be duplicates
		wg.Go(func() { outcomes[i], _ = b.fire(t, b.firer, armed[i%n], slot(1)) })
	}
	wg.Wait()
	fired := 0
	for _, o := range outcomes {
		if o == fire.Fired {
			fired++
		} else if o != fire.Duplicate {
			t.Errorf("outcome %v, want Fired or Duplicate", o)
		}
	}
	if fired != n {
		t.Errorf("%d fires won, want %d (one per slot)", fired, n)
	}
	for _, tk := range armed {
		b.finalRun(t, tk.TaskID, slot(1))
		if runs := b.runs(t, tk.TaskID); len(runs) != 1 {
			t.Errorf("%s has %d runs, want 1", tk.TaskID, len(runs))
		}
	}
	msgs, err := b.store.ListOutbox(t.Context(), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != n {
		t.Errorf("outbox holds %d messages, want %d", len(msgs), n)
	}
}

// TestFireAfterStoreClosedFails: a fire that cannot reach the ledger
// reports an error (after the recorder's retries) instead of delivering.
func TestFireAfterStoreClosedFails(t *testing.T) {
	b := setup(t)
	tk := b.add(t, newTask("closed"), node)
	if err := b.store.Close(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.firer.Fire(t.Context(), fire.Params{Armed: tk, Slot: slot(1), Trigger: task.TriggerSchedule}); err == nil {
		t.Error("Fire on a closed store succeeded")
	}
}
