package executors_test

import (
	"context"
	"errors"
	"testing"

	"cronsheet/executors"
	"cronsheet/task"
)

func TestRegistry(t *testing.T) {
	t.Parallel()

	echo := executors.ExecutorFunc(func(_ context.Context, d task.Delivery) (string, error) {
		return "sent to " + d.To, nil
	})

	t.Run("GetAndExecute", func(t *testing.T) {
		t.Parallel()
		r := executors.NewRegistry()
		r.Register(task.ChannelSMS, echo)

		e, err := r.Get(task.ChannelSMS)
		if err != nil {
			t.Fatalf("Get: %v", err)
		}
		if out, _ := e.Execute(context.Background(), task.Delivery{To: "+14155550100"}); out != "sent to +14155550100" {
			t.Errorf("output = %q", out)
		}
		out, err := r.Execute(context.Background(), task.Delivery{Channel: task.ChannelSMS, To: "x"})
		if err != nil || out != "sent to x" {
			t.Errorf("Registry.Execute = %q, %v", out, err)
		}
	})

	t.Run("UnknownChannelIsPermanent", func(t *testing.T) {
		t.Parallel()
		r := executors.NewRegistry()
		r.Register(task.ChannelSMS, echo)

		if _, err := r.Get(task.ChannelEmail); !task.IsPermanent(err) || !errors.Is(err, task.ErrInvalid) {
			t.Errorf("Get(email) err = %v, want permanent ErrInvalid", err)
		}
		if _, err := r.Execute(context.Background(), task.Delivery{Channel: "fax"}); !task.IsPermanent(err) {
			t.Errorf("Execute(fax) err = %v, want permanent", err)
		}
	})

	t.Run("RegisterPanics", func(t *testing.T) {
		t.Parallel()
		tests := []struct {
			name string
			ch   task.Channel
			e    executors.Executor
		}{
			{"Duplicate", task.ChannelSMS, echo},
			{"EmptyChannel", "", echo},
			{"NilExecutor", task.ChannelEmail, nil},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				t.Parallel()
				r := executors.NewRegistry()
				r.Register(task.ChannelSMS, echo)
				defer func() {
					if recover() == nil {
						t.Errorf("Register(%q) did not panic", tt.ch)
					}
				}()
				r.Register(tt.ch, tt.e)
			})
		}
	})
}
