package task_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"cronsheet/task"
)

func TestTruncate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		n    int
		want string
	}{
		{"Short", "hello", 10, "hello"},
		{"Exact", "hello", 5, "hello"},
		{"Cut", strings.Repeat("a", 40), 20, strings.Repeat("a", 20-len("…[truncated]")) + "…[truncated]"},
		{"TinyLimit", "hello world", 3, "hel"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := task.Truncate(tt.in, tt.n)
			if got != tt.want || len(got) > tt.n {
				t.Errorf("Truncate(%q, %d) = %q, want %q (at most %d bytes)", tt.in, tt.n, got, tt.want, tt.n)
			}
		})
	}
}

func TestSameSchedule(t *testing.T) {
	t.Parallel()
	base := task.Task{CronPara: "every 1m", TZ: "UTC", ExecuteType: task.Periodic, Misfire: task.MisfireOnce,
		StartTime: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), TaskPara: "a"}
	same := base
	same.TaskPara, same.Version = "b", 7 // content and bookkeeping do not matter
	if !base.SameSchedule(&same) {
		t.Error("a content edit changed the schedule")
	}
	sameInstant := base
	sameInstant.StartTime = base.StartTime.In(time.FixedZone("X", 3600))
	if !base.SameSchedule(&sameInstant) {
		t.Error("the same start instant in another zone counts as a change")
	}
	for name, mod := range map[string]func(*task.Task){
		"CronPara":    func(x *task.Task) { x.CronPara = "every 2m" },
		"TZ":          func(x *task.Task) { x.TZ = "Asia/Shanghai" },
		"ExecuteType": func(x *task.Task) { x.ExecuteType = task.Once },
		"Misfire":     func(x *task.Task) { x.Misfire = task.MisfireAll },
		"StartTime":   func(x *task.Task) { x.StartTime = x.StartTime.Add(time.Second) },
		"EndTime":     func(x *task.Task) { x.EndTime = time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC) },
	} {
		other := base
		mod(&other)
		if base.SameSchedule(&other) {
			t.Errorf("a change of %s went unnoticed", name)
		}
	}
}

func TestErrorClassification(t *testing.T) {
	t.Parallel()
	base := errors.New("boom")
	perm := fmt.Errorf("send: %w", task.Permanent(base))
	if !task.IsPermanent(perm) || !errors.Is(perm, base) {
		t.Errorf("Permanent: IsPermanent=%v, wraps base=%v", task.IsPermanent(perm), errors.Is(perm, base))
	}
	if task.IsPermanent(base) || task.Permanent(nil) != nil || task.RetryAfter(nil, time.Second) != nil {
		t.Error("plain or nil errors misclassified")
	}
	later := fmt.Errorf("twilio: %w", task.RetryAfter(base, 7*time.Second))
	if d, ok := task.RetryDelay(later); !ok || d != 7*time.Second || task.IsPermanent(later) {
		t.Errorf("RetryDelay = %v, %v; want 7s, true and not permanent", d, ok)
	}
	if _, ok := task.RetryDelay(base); ok {
		t.Error("RetryDelay found a delay on a plain error")
	}
	inv := fmt.Errorf("row: %w", task.Invalid("when", "bad %q", "x"))
	var ve *task.ValidationError
	if !errors.Is(inv, task.ErrInvalid) || !errors.As(inv, &ve) || ve.Field != "when" || ve.Error() != `when: bad "x"` {
		t.Errorf("Invalid: %v (%+v)", inv, ve)
	}
}

func TestEnums(t *testing.T) {
	t.Parallel()
	if !task.Once.Valid() || task.ExecuteType("daily").Valid() {
		t.Error("ExecuteType.Valid")
	}
	if !task.MisfireAll.Valid() || task.Misfire("later").Valid() {
		t.Error("Misfire.Valid")
	}
	if !task.ChannelSMS.Valid() || task.Channel("fax").Valid() {
		t.Error("Channel.Valid")
	}
	for _, s := range []task.RunState{task.RunDone, task.RunDead, task.RunRejected, task.RunTimeout, task.RunCancelled, task.RunSkipped} {
		if !s.Final() {
			t.Errorf("%s is not final", s)
		}
	}
	for _, s := range []task.RunState{task.RunPending, task.RunRunning, task.RunFailed} {
		if s.Final() {
			t.Errorf("%s is final", s)
		}
	}
}
