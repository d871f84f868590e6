package server

import (
	"fmt"
	"testing"
	"time"

	"cronsheet/config"
	"cronsheet/internal/testwait"
	"cronsheet/task"
)

// TestRetentionPatrolRunsOnTheNode: a node whose retention keeps 2 outbox
// messages prunes the rest on its own, and counts them in /metrics.
func TestRetentionPatrolRunsOnTheNode(t *testing.T) {
	b := setup(t, func(c *config.Config) {
		c.Retention.Interval = time.Second
		c.Retention.Outbox = config.RetentionRule{MaxCount: 2}
	})
	ctx := t.Context()
	for i := range 5 {
		m := &task.OutboxMessage{TaskID: "t1", TriggerID: fmt.Sprintf("tr-%d", i), Channel: task.ChannelEmail, To: "a@example.com"}
		if err := b.srv.store.AddOutbox(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	testwait.For(t, time.Minute, "the outbox pruned to 2 messages", func() bool {
		ms, err := b.srv.store.ListOutbox(ctx, 0, 10)
		return err == nil && len(ms) == 2
	})
	ms, _ := b.srv.store.ListOutbox(ctx, 0, 10)
	if ms[0].TriggerID != "tr-4" || ms[1].TriggerID != "tr-3" {
		t.Errorf("outbox kept %s, %s; want the newest two, tr-4 and tr-3", ms[0].TriggerID, ms[1].TriggerID)
	}
	if got := scrapeCounters(t, b, "cronsheet_retention_deleted_total")["kind=outbox"]; got != 3 {
		t.Errorf("cronsheet_retention_deleted_total{kind=outbox} = %v, want 3", got)
	}
}
