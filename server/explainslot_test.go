package server

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"cronsheet/explain/report"
	"cronsheet/task"
)

// TestExplainPastManyManualRuns: explain finds the scheduled slot before
// the one asked about by the slot, however many manual runs lie between:
// with 70 manual runs after the last scheduled slot L, a slot missed
// after L is planned from L (misfire: all replays from L's next slot),
// not from the task's first slot as if the ledger held none.
func TestExplainPastManyManualRuns(t *testing.T) {
	t.Parallel()
	b := setup(t, nil)
	b.addRow(t, map[string]any{"memo_id": "hist", "content": "x", "when": "every 1s", "channel": "outbox", "misfire": "all"})
	eventually(t, "two scheduled runs", func() bool { return len(b.runs(t, "hist")) >= 2 })
	if code := b.call(t, "PATCH", "/api/v1/scenarios/memos/rows/hist", map[string]any{"active": 0}, nil); code != 200 {
		t.Fatalf("switch the row off: %d", code)
	}
	waitTask(t, b, "hist", func(tk *task.Task) bool { return tk.IsEnable == 0 && tk.IsClaimed == 0 })
	time.Sleep(1500 * time.Millisecond) // a fire under way lands
	last, err := b.srv.store.LastSlot(t.Context(), "hist")
	if err != nil || last.IsZero() {
		t.Fatalf("LastSlot = %v, %v", last, err)
	}
	first := slices.MinFunc(b.runs(t, "hist"), func(x, y *task.Run) int { return x.Slot.Compare(y.Slot) }).Slot
	if !first.Before(last) {
		t.Fatalf("first slot %v not before last %v", first, last)
	}
	for i := range 70 {
		slot := last.Add(time.Duration(i+1) * time.Millisecond)
		r := &task.Run{TaskID: "hist", Slot: slot, Target: "outbox", TriggerID: fmt.Sprintf("manual-%d", i),
			TriggerType: task.TriggerManual, State: task.RunDone, FiredAt: slot}
		if _, err := b.srv.store.InsertRun(t.Context(), r); err != nil {
			t.Fatalf("InsertRun: %v", err)
		}
	}
	missed := last.Add(2 * time.Second)
	eventually(t, "the missed slot to pass", func() bool { return time.Now().After(missed.Add(500 * time.Millisecond)) })
	a := b.explainTask(t, "hist", missed)
	i := slices.IndexFunc(a.Checks, func(c report.Check) bool { return c.Rule == report.RuleMisfire })
	if i < 0 {
		t.Fatalf("no misfire check in %+v", a.Checks)
	}
	replayed, _ := a.Checks[i].Data["replayed"].([]any)
	want := last.Add(time.Second).UTC().Format(time.RFC3339Nano)
	if len(replayed) == 0 || fmt.Sprint(replayed[0]) != want {
		t.Errorf("misfire replays %v, want from %s (the slot after the last scheduled one); check %+v", replayed, want, a.Checks[i])
	}
}
