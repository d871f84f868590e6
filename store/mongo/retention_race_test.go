package mongo_test

import (
	"errors"
	"testing"
	"time"

	"cronsheet/store"
	"cronsheet/store/mongo"
	"cronsheet/task"
)

// TestPruneJobsSparesBackfilledJob: a job retention pass that found a
// closed job without live runs, and then meets a backfill's fire of that
// job before its delete (the fire's run recorded, its status written, as
// fire.Trigger records it), leaves the job and the backfill's run alone:
// SQLite checks and deletes in one transaction, MongoDB has none, so the
// delete re-checks that no fire was recorded since the pass read the job.
func TestPruneJobsSparesBackfilledJob(t *testing.T) {
	ctx := t.Context()
	s := openTemp(t, testURI(t))
	past := time.Now().Add(-48 * time.Hour).Truncate(time.Millisecond)
	j := &task.Task{TaskID: "j", Scenario: task.JobScenario, TaskType: task.ChannelHTTP, TaskPara: "job j",
		ExecuteType: task.Once, TZ: "UTC", TTL: 30 * time.Second, Misfire: task.MisfireOnce,
		Targets: []string{task.JobTargetID}, State: task.StateRunning, Anchor: past, IsEnable: 1,
		Job: &task.Job{Method: "POST", Name: "http://127.0.0.1:9/j", DueAt: past}}
	if err := s.CreateJob(ctx, j); err != nil {
		t.Fatal(err)
	}
	if _, err := s.SetTaskState(ctx, store.TaskStateParams{TaskID: "j", State: task.StateClosed, Now: past}); err != nil {
		t.Fatal(err)
	}
	now := time.Now().Truncate(time.Millisecond)
	backfill := &task.Run{TriggerID: "tr_backfill", TaskID: "j", Slot: past.Add(time.Millisecond), Target: task.JobTargetID,
		TriggerType: task.TriggerBackfill, State: task.RunRunning, Attempt: 1, Node: "n", Fence: 1, FiredAt: now,
		NextAttempt: now.Add(time.Minute)}
	fired := false
	mongo.OnPruneJobsChecked(s, func() {
		if fired {
			return
		}
		fired = true
		ok, err := s.RecordFire(ctx, backfill, store.TaskStatusParams{TaskID: "j", LastFire: backfill.Slot})
		if err != nil || !ok {
			t.Errorf("record the backfill's fire: %v, %v", ok, err)
		}
	})
	res, err := s.Prune(ctx, store.PruneParams{Kind: store.RetainJobs, Before: store.Cursor{At: now.Add(time.Hour)}, Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if !fired {
		t.Fatalf("the pass examined %d jobs and never came to its delete", res.Examined)
	}
	if _, err := s.GetTask(ctx, "j"); err != nil {
		t.Errorf("the backfilled job after the pass: %v; want it kept (deleted %d)", err, res.Deleted)
	}
	if _, err := s.GetRun(ctx, backfill.TriggerID); err != nil {
		t.Errorf("the backfill's run after the pass: %v; want it kept", err)
	}
	// The next pass sees the live run and leaves the job too.
	if res, err := s.Prune(ctx, store.PruneParams{Kind: store.RetainJobs, Before: store.Cursor{At: now.Add(time.Hour)}, Limit: 10}); err != nil || res.Deleted != 0 {
		t.Errorf("a pass while the backfill runs: %+v, %v; want nothing deleted", res, err)
	}
	if _, err := s.GetTask(ctx, "j"); errors.Is(err, task.ErrNotFound) {
		t.Errorf("the job went while its backfill runs")
	}
}
