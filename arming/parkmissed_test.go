package arming

import (
	"testing"
	"time"

	"cronsheet/fire"
	"cronsheet/internal/testwait"
	"cronsheet/task"
)

// TestMissedSlotOfAParkedTask: a task armed with a missed slot and its next
// slot beyond the arming window fires the missed slot (as a misfire) while
// the next one is parked: the missed fire does not lose the task that
// parking drops from memory.
func TestMissedSlotOfAParkedTask(t *testing.T) {
	b := newArmerTest(t, fire.Config{}, nil, true)
	a := b.armer(t, b.st)
	a.window = 5 * time.Second

	// every 1h anchored 90 minutes ago: the slot 30 minutes ago was
	// missed, the next is 30 minutes ahead, far beyond the window.
	anchor := time.Now().Add(-90 * time.Minute).Truncate(time.Second)
	tk := periodicSMS("late", "every 1h", anchor)
	tk.Misfire = task.MisfireOnce
	claimed := b.claimedTasks(t, tk)
	if err := a.Arm(t.Context(), claimed[0]); err != nil {
		t.Fatal(err)
	}
	missed := anchor.Add(time.Hour)
	testwait.For(t, 10*time.Second, "the missed slot to be delivered", func() bool { return len(b.delivered) > 0 })
	if d := <-b.delivered; !d.Slot.Equal(missed) {
		t.Errorf("delivered slot %s, want the missed %s", d.Slot, missed)
	}
}
