package tasksapi

import (
	"time"

	"cronsheet/task"
)

// hideIdleNextFire clears t's next fire when t does not fire: disabled
// (its row switched off or in error) or done. The stored next fire lags
// behind a switch-off until a node disarms the task.
func hideIdleNextFire(t *task.Task) {
	if t.IsEnable != 1 || t.IsDone == 1 {
		t.NextFire = time.Time{}
	}
}
