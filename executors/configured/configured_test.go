package configured

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"cronsheet/config"
	"cronsheet/task"
)

// memOutbox keeps the outbox messages in memory.
type memOutbox struct{ msgs []*task.OutboxMessage }

func (m *memOutbox) AddOutbox(_ context.Context, msg *task.OutboxMessage) error {
	m.msgs = append(m.msgs, msg)
	return nil
}

// TestChecksFollowConfig: what a target or a job may name follows the
// configuration, and a job's errors name the job's fields.
func TestChecksFollowConfig(t *testing.T) {
	cfg := config.Default()
	cfg.Exec.Commands = map[string]config.ExecCommand{"hello": {Path: "/bin/echo"}}
	x, err := New(slog.New(slog.DiscardHandler), &memOutbox{}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	tests := []struct {
		name  string
		job   task.Job
		field string // "" when allowed
	}{
		{"ListedCommand", task.Job{Method: task.JobEXEC, Name: "hello"}, ""},
		{"UnlistedCommand", task.Job{Method: task.JobEXEC, Name: "rm"}, "name"},
		{"PublicHost", task.Job{Method: task.JobPOST, Name: "https://93.184.215.14/"}, ""},
		{"LoopbackHost", task.Job{Method: task.JobPOST, Name: "http://127.0.0.1:9/"}, "name"},
		{"KafkaWithoutBrokers", task.Job{Method: task.JobKafka, Name: "topic"}, "method"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := x.CheckJob(&task.Task{Job: &tt.job})
			var ve *task.ValidationError
			switch {
			case tt.field == "" && err != nil:
				t.Errorf("CheckJob = %v, want it allowed", err)
			case tt.field != "" && (!errors.As(err, &ve) || ve.Field != tt.field):
				t.Errorf("CheckJob = %v, want a validation error of field %q", err, tt.field)
			}
		})
	}
	if err := x.CheckTarget(&task.Target{Kind: task.ChannelExec, Exec: &task.ExecTarget{Command: "rm"}}); err == nil {
		t.Error("CheckTarget allowed an exec command the config does not list")
	}
}

// TestOutboxMode: in outbox mode (the default) email and SMS deliveries
// are kept in the outbox, not sent; kafka deliveries without brokers are
// refused for good.
func TestOutboxMode(t *testing.T) {
	box := &memOutbox{}
	x, err := New(slog.New(slog.DiscardHandler), box, config.Default())
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	for ch, to := range map[task.Channel]string{task.ChannelEmail: "a@example.com", task.ChannelSMS: "+15005550006"} {
		if _, err := x.Registry.Execute(t.Context(), task.Delivery{Channel: ch, TaskID: "t", To: to}); err != nil {
			t.Errorf("%s in outbox mode: %v", ch, err)
		}
	}
	if len(box.msgs) != 2 {
		t.Errorf("outbox holds %d messages, want 2", len(box.msgs))
	}
	if _, err := x.Registry.Execute(t.Context(), task.Delivery{Channel: task.ChannelKafka}); !task.IsPermanent(err) {
		t.Errorf("kafka without brokers = %v, want a permanent error", err)
	}
}

// TestBadConfigFails: an executor that cannot be built fails New, naming
// its key.
func TestBadConfigFails(t *testing.T) {
	cfg := config.Default()
	cfg.Exec.Commands = map[string]config.ExecCommand{"rel": {Path: "relative/path"}}
	if _, err := New(slog.New(slog.DiscardHandler), &memOutbox{}, cfg); err == nil {
		t.Fatal("New accepted an exec command with a relative path")
	}
}
