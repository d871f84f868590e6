package storetest

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// DumpTargets checks a driver's store.Dumper on targets: RestoreTarget and
// DumpTargets. A target comes back exactly as restored (version and times
// kept, not set anew), a stored id is left alone, and the dump walks the ids
// in order.
func DumpTargets(t *testing.T, s store.Product) {
	t.Helper()
	ctx := t.Context()
	at := func(d time.Duration) time.Time { return time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC).Add(d) }
	want := []*task.Target{
		{ID: "a.http", Name: "callback", Kind: task.ChannelHTTP, State: task.TargetRunning, FeedbackTimeout: 30,
			HTTP: &task.HTTPTarget{Method: "POST", URL: "https://example.com/{{.task_id}}",
				Headers: map[string]string{"X-A": "1"}, Body: "b", Timeout: 5},
			Version: 7, CreatedAt: at(0), UpdatedAt: at(time.Hour + 123*time.Millisecond)},
		{ID: "b-exec", Kind: task.ChannelExec, State: task.TargetPaused, Exec: &task.ExecTarget{Command: "backup"},
			Version: 1, CreatedAt: at(time.Minute), UpdatedAt: at(time.Minute)},
		{ID: "c_builtin", Kind: task.ChannelBuiltin, State: task.TargetPreset,
			Builtin: &task.BuiltinTarget{Action: task.BuiltinPauseTask, Tasks: []string{"t1", "t2"}},
			Version: 3, CreatedAt: at(2 * time.Minute), UpdatedAt: at(3 * time.Minute)},
		{ID: "d.kafka", Kind: task.ChannelKafka, State: task.TargetRunning, Kafka: &task.KafkaTarget{Topic: "t", Value: "v"},
			Version: 2, CreatedAt: at(4 * time.Minute), UpdatedAt: at(5 * time.Minute)},
	}
	for _, i := range []int{2, 0, 3, 1} { // not in id order
		ok, err := s.RestoreTarget(ctx, want[i])
		if err != nil || !ok {
			t.Fatalf("RestoreTarget %s = %v, %v; want inserted", want[i].ID, ok, err)
		}
	}
	// A stored id is left as it is, whatever the dump says.
	again := *want[0]
	again.Name, again.Version = "other", 9
	if ok, err := s.RestoreTarget(ctx, &again); err != nil || ok {
		t.Errorf("RestoreTarget of a stored id = %v, %v; want false, nil", ok, err)
	}
	if _, err := s.RestoreTarget(ctx, &task.Target{Kind: task.ChannelExec}); !errors.Is(err, task.ErrInvalid) {
		t.Errorf("RestoreTarget without id = %v, want task.ErrInvalid", err)
	}
	// A target created afterwards is dumped too; one that is restored over
	// it is not stored.
	if err := s.CreateTarget(ctx, &task.Target{ID: "e", Kind: task.ChannelExec, State: task.TargetRunning,
		Exec: &task.ExecTarget{Command: "x"}}); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.RestoreTarget(ctx, &task.Target{ID: "e", Kind: task.ChannelExec, Version: 5}); err != nil || ok {
		t.Errorf("RestoreTarget over a created target = %v, %v; want false, nil", ok, err)
	}
	var got []*task.Target
	if err := s.DumpTargets(ctx, func(tg *task.Target) error { got = append(got, tg); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want)+1 || got[len(want)].ID != "e" || got[len(want)].Version != 1 {
		t.Fatalf("DumpTargets = %d targets, want %d and e at version 1 last", len(got), len(want)+1)
	}
	for i, w := range want {
		if !reflect.DeepEqual(got[i], w) {
			t.Errorf("dumped target %d = %+v\nwant %+v", i, got[i], w)
		}
		if g, err := s.GetTarget(ctx, w.ID); err != nil || !reflect.DeepEqual(g, w) {
			t.Errorf("GetTarget %s = %+v, %v\nwant %+v", w.ID, g, err, w)
		}
	}
	// A version below 1 is stored as 1.
	if ok, err := s.RestoreTarget(ctx, &task.Target{ID: "f", Kind: task.ChannelExec, Exec: &task.ExecTarget{Command: "y"}}); err != nil || !ok {
		t.Fatalf("RestoreTarget f = %v, %v", ok, err)
	}
	if g, err := s.GetTarget(ctx, "f"); err != nil || g.Version != 1 || !g.CreatedAt.IsZero() {
		t.Errorf("GetTarget f = %+v, %v; want version 1, no times", g, err)
	}
	stop := errors.New("stop")
	n := 0
	err := s.DumpTargets(ctx, func(*task.Target) error { n++; return stop })
	if !errors.Is(err, stop) || n != 1 {
		t.Errorf("DumpTargets stopping at once = %v after %d calls, want stop after 1", err, n)
	}
}
