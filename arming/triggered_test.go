package arming

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"cronsheet/fire"
	"cronsheet/patrol"
	"cronsheet/task"
)

// errorCounter is a slog handler that counts the records at level error.
type errorCounter struct {
	mu   sync.Mutex
	msgs []string
}

func (c *errorCounter) Enabled(context.Context, slog.Level) bool { return true }
func (c *errorCounter) Handle(_ context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError {
		c.mu.Lock()
		c.msgs = append(c.msgs, r.Message)
		c.mu.Unlock()
	}
	return nil
}
func (c *errorCounter) WithAttrs([]slog.Attr) slog.Handler { return c }
func (c *errorCounter) WithGroup(string) slog.Handler      { return c }

func (c *errorCounter) errors() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.msgs)
}

// TestTriggeredOnlyTaskArmsQuietly: a stopped task without a schedule (a
// flow's step task, fired only by triggers) is armed and held without a
// schedule on the first publish pass, logging no error; later passes
// claim nothing more.
func TestTriggeredOnlyTaskArmsQuietly(t *testing.T) {
	b := newArmerTest(t, fire.Config{}, nil, false)
	st := b.st
	a := b.armer(t, st)
	step := &task.Task{TaskID: "flow.f.v1.a", Scenario: "flows", TaskType: task.ChannelHTTP, ExecuteType: task.Once,
		TTL: time.Second, MaxRetries: 1, Misfire: task.MisfireOnce, Targets: []string{"hook"},
		State: task.StateStopped, IsEnable: 1}
	if err := st.EnsureTask(t.Context(), step); err != nil {
		t.Fatal(err)
	}
	logs := &errorCounter{}
	pub := patrol.NewPublish(slog.New(logs), st, a, "n", time.Minute, 100, time.Now)
	for pass := range 3 {
		res, err := pub.RunOnce(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		if pass == 0 && (res.Claimed != 1 || res.Armed != 1 || res.Failed != 0) {
			t.Errorf("first pass: %+v; want the step task claimed and armed", res)
		}
		if pass > 0 && res.Claimed != 0 {
			t.Errorf("pass %d claimed %d tasks; want the step task held since the first", pass, res.Claimed)
		}
	}
	if errs := logs.errors(); len(errs) > 0 {
		t.Errorf("publish logged %d errors, want none: %q", len(errs), errs)
	}
	if !slices.Contains(a.Armed(), step.TaskID) || a.Scheduled() != 0 {
		t.Errorf("armed %v, gocron jobs %d; want the step task held without a job", a.Armed(), a.Scheduled())
	}
}
