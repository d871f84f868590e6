package mongo_test

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"

	"cronsheet/store"
	"cronsheet/store/mongo"
	"cronsheet/store/storetest"
	"cronsheet/task"
)

// TestJobsConformance runs storetest.RunJobs with its concurrency cases on
// any server, FerretDB included: this driver decides both races (callers
// taking one key, callers replacing one job) by a unique _id (job_keys,
// job_moves), which holds on FerretDB v1, not by findOneAndUpdate. A case
// that needs findOneAndUpdate to be atomic would need suiteOptions here.
func TestJobsConformance(t *testing.T) {
	uri := testURI(t)
	storetest.RunJobs(t, func(t *testing.T) store.Product {
		return keepOpen{openTemp(t, uri)}
	})
}

// newJob returns a delayed job holding key (none when "").
func newJob(id, key string) *task.Task {
	return &task.Task{
		TaskID: id, Scenario: task.JobScenario, TaskType: task.ChannelHTTP, ExecuteType: task.Once,
		TTL: 30 * time.Second, MaxRetries: 3, Misfire: task.MisfireOnce, Targets: []string{task.JobTargetID},
		State: task.StateRunning, IsEnable: 1,
		Job: &task.Job{Method: task.JobPOST, Name: "https://example.com/" + id, Key: key,
			DueAt: time.Date(2026, 3, 1, 9, 30, 0, 123e6, time.UTC)},
	}
}

// wantHolder fails unless JobByKey(key) is job id ("" = task.ErrNotFound).
func wantHolder(t *testing.T, s *mongo.Store, what, key, id string) {
	t.Helper()
	got, err := s.JobByKey(t.Context(), key)
	switch {
	case id == "" && !errors.Is(err, task.ErrNotFound):
		t.Errorf("%s: JobByKey(%q) = %v, %v; want task.ErrNotFound", what, key, got, err)
	case id != "" && err != nil:
		t.Errorf("%s: JobByKey(%q): %v, want job %s", what, key, err, id)
	case id != "" && got.TaskID != id:
		t.Errorf("%s: JobByKey(%q) = job %s, want %s", what, key, got.TaskID, id)
	}
}

// race runs fn(i) for i in [0, n) at once and returns the index of the one
// that returned nil, failing t unless exactly one did and the others
// returned task.ErrConflict.
func race(t *testing.T, n int, fn func(i int) error) int {
	t.Helper()
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = fn(i)
		})
	}
	close(start)
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Errorf("callers %d and %d both won", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, task.ErrConflict):
			t.Errorf("caller %d: %v, want task.ErrConflict", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("nobody won")
	}
	return winner
}

// TestJobRacesHoldOnAnyServer races callers taking the same key, then
// replacing its holder, round after round on one store (storetest's cases
// race once on an empty one). It runs on FerretDB too: both races are
// decided by a unique _id (job_keys, job_moves), which holds there.
func TestJobRacesHoldOnAnyServer(t *testing.T) {
	s := openTemp(t, testURI(t))
	ctx := t.Context()
	const n = 8
	for round := range 3 {
		key := fmt.Sprintf("k%d", round)
		w := race(t, n, func(i int) error { return s.CreateJob(ctx, newJob(fmt.Sprintf("c%d-%d", round, i), key)) })
		winner := fmt.Sprintf("c%d-%d", round, w)
		wantHolder(t, s, "after the create race", key, winner)
		for i := range n {
			if _, err := s.GetTask(ctx, fmt.Sprintf("c%d-%d", round, i)); (i == w) != (err == nil) {
				t.Errorf("create race %d: GetTask of caller %d: %v (winner %d)", round, i, err, w)
			}
		}

		w = race(t, n, func(i int) error {
			return s.ReplaceJob(ctx, key, winner, newJob(fmt.Sprintf("r%d-%d", round, i), key))
		})
		next := fmt.Sprintf("r%d-%d", round, w)
		wantHolder(t, s, "after the replace race", key, next)
		old, err := s.GetTask(ctx, winner)
		if err != nil || old.Job == nil || old.Job.ReplacedBy != next || old.Job.Key != "" ||
			old.State != task.StateClosed || old.Version != 2 {
			t.Errorf("replace race %d: old job = %+v, %v; want closed, replaced by %s, version 2", round, old, err, next)
		}
		for i := range n {
			if _, err := s.GetTask(ctx, fmt.Sprintf("r%d-%d", round, i)); (i == w) != (err == nil) {
				t.Errorf("replace race %d: GetTask of caller %d: %v (winner %d)", round, i, err, w)
			}
		}
	}
}

// TestJobCrashes stages what a crash between two writes of CreateJob and
// ReplaceJob leaves, and checks that the key stays with exactly one job
// and that the next reader of the key finishes or undoes the step.
func TestJobCrashes(t *testing.T) {
	uri := testURI(t)
	ctx := t.Context()
	clock := func(s *mongo.Store) *time.Time {
		now := time.Now()
		mongo.SetClock(s, func() time.Time { return now })
		return &now
	}
	insert := func(t *testing.T, s *mongo.Store, coll string, doc bson.D) {
		t.Helper()
		if _, err := mongo.Collection(s, coll).InsertOne(ctx, doc); err != nil {
			t.Fatal(err)
		}
	}
	must := func(t *testing.T, what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	wantConflict := func(t *testing.T, what string, err error) {
		t.Helper()
		if !errors.Is(err, task.ErrConflict) {
			t.Fatalf("%s: %v, want task.ErrConflict", what, err)
		}
	}

	t.Run("CreateJobBeforeItsTask", func(t *testing.T) {
		s := openTemp(t, uri)
		now := clock(s)
		// The key was taken for j0, whose task was never stored.
		insert(t, s, "job_keys", bson.D{{Key: "_id", Value: "k"}, {Key: "task_id", Value: "j0"},
			{Key: "at", Value: now.UnixMilli()}})
		wantHolder(t, s, "key of a missing job", "k", "")
		wantConflict(t, "CreateJob within the grace", s.CreateJob(ctx, newJob("j1", "k")))
		if _, err := s.GetTask(ctx, "j1"); !errors.Is(err, task.ErrNotFound) {
			t.Errorf("GetTask j1 after the conflict: %v, want task.ErrNotFound", err)
		}
		*now = now.Add(mongo.ClaimGrace(s) + time.Second)
		must(t, "CreateJob after the grace", s.CreateJob(ctx, newJob("j1", "k")))
		wantHolder(t, s, "taken over", "k", "j1")
	})

	t.Run("ReplaceJobBeforeTheNewTask", func(t *testing.T) {
		s := openTemp(t, uri)
		now := clock(s)
		must(t, "CreateJob", s.CreateJob(ctx, newJob("j0", "k")))
		// The move to j1 was recorded, j1 never stored.
		insert(t, s, "job_moves", bson.D{{Key: "_id", Value: "j0"}, {Key: "key", Value: "k"},
			{Key: "to", Value: "j1"}, {Key: "at", Value: now.UnixMilli()}})
		wantHolder(t, s, "pending move", "k", "j0")
		wantConflict(t, "ReplaceJob within the grace", s.ReplaceJob(ctx, "k", "j0", newJob("j2", "k")))
		*now = now.Add(mongo.ClaimGrace(s) + time.Second)
		wantHolder(t, s, "abandoned move", "k", "j0")
		must(t, "ReplaceJob after the grace", s.ReplaceJob(ctx, "k", "j0", newJob("j2", "k")))
		wantHolder(t, s, "replaced", "k", "j2")
		if old, err := s.GetTask(ctx, "j0"); err != nil || old.Job.ReplacedBy != "j2" || old.Version != 2 {
			t.Errorf("j0 = %+v, %v; want replaced by j2 at version 2", old, err)
		}
	})

	// stageNewTask leaves j0 holding k, the move to j1 recorded and j1
	// stored: a crash after step 3 of ReplaceJob.
	stageNewTask := func(t *testing.T, s *mongo.Store) {
		t.Helper()
		now := clock(s)
		must(t, "CreateJob", s.CreateJob(ctx, newJob("j0", "k")))
		insert(t, s, "job_moves", bson.D{{Key: "_id", Value: "j0"}, {Key: "key", Value: "k"},
			{Key: "to", Value: "j1"}, {Key: "at", Value: now.UnixMilli()}})
		ok, err := s.RestoreTask(ctx, store.TaskDump{Task: newJob("j1", "k")}) // k stays with j0
		if err != nil || !ok {
			t.Fatalf("RestoreTask j1 = %v, %v", ok, err)
		}
	}
	checkMoved := func(t *testing.T, s *mongo.Store) {
		t.Helper()
		old, err := s.GetTask(ctx, "j0")
		if err != nil || old.Job.ReplacedBy != "j1" || old.Job.Key != "" || old.State != task.StateClosed || old.Version != 2 {
			t.Errorf("j0 = %+v, %v; want closed, without its key, replaced by j1, version 2", old, err)
		}
		wantHolder(t, s, "again", "k", "j1")
	}

	t.Run("ReplaceJobAfterTheNewTask", func(t *testing.T) {
		s := openTemp(t, uri)
		stageNewTask(t, s)
		wantHolder(t, s, "finished by JobByKey", "k", "j1")
		checkMoved(t, s)
	})

	t.Run("ReplaceJobAfterClosingTheOld", func(t *testing.T) {
		s := openTemp(t, uri)
		stageNewTask(t, s)
		_, err := mongo.Collection(s, "time_task").UpdateOne(ctx, bson.D{{Key: "task_id", Value: "j0"}},
			bson.D{{Key: "$set", Value: bson.D{{Key: "job.key", Value: ""}, {Key: "job.replaced_by", Value: "j1"},
				{Key: "state", Value: task.StateClosed}, {Key: "version", Value: 2}}}})
		must(t, "close j0", err)
		// The next replace of the old job finishes the move first.
		err = s.ReplaceJob(ctx, "k", "j0", newJob("j2", "k"))
		wantConflict(t, "ReplaceJob of the replaced job", err)
		checkMoved(t, s)
		// And CreateJob with the key sees it held.
		wantConflict(t, "CreateJob with the key", s.CreateJob(ctx, newJob("j3", "k")))
		must(t, "ReplaceJob of the new holder", s.ReplaceJob(ctx, "k", "j1", newJob("j2", "k")))
		wantHolder(t, s, "replaced again", "k", "j2")
	})
}

// TestJobDumpRestore moves jobs to another store: Task.Job comes back (DueAt
// to the millisecond) and a job holding a key holds it there too.
func TestJobDumpRestore(t *testing.T) {
	uri := testURI(t)
	ctx := t.Context()
	src, dst := openTemp(t, uri), openTemp(t, uri)
	j1, j2 := newJob("j1", "k1"), newJob("j2", "")
	for _, j := range []*task.Task{j1, j2} {
		if err := src.CreateJob(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	if err := src.ReplaceJob(ctx, "k1", "j1", newJob("j3", "k1")); err != nil {
		t.Fatal(err)
	}
	var dumped []store.TaskDump
	if err := src.DumpTasks(ctx, func(d store.TaskDump) error { dumped = append(dumped, d); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(dumped) != 3 {
		t.Fatalf("dumped %d tasks, want 3", len(dumped))
	}
	for _, d := range dumped {
		if ok, err := dst.RestoreTask(ctx, d); err != nil || !ok {
			t.Fatalf("RestoreTask %s = %v, %v", d.Task.TaskID, ok, err)
		}
	}
	wantHolder(t, dst, "restored", "k1", "j3")
	for _, d := range dumped {
		got, err := dst.GetTask(ctx, d.Task.TaskID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Job == nil || !reflect.DeepEqual(*got.Job, *d.Task.Job) || got.Job.DueAt.Nanosecond() != 123e6 {
			t.Errorf("restored %s: job %+v, want %+v", got.TaskID, got.Job, d.Task.Job)
		}
	}
	if old, _ := dst.GetTask(ctx, "j1"); old.Job.ReplacedBy != "j3" || old.Job.Key != "" || old.State != task.StateClosed {
		t.Errorf("restored j1 = %+v, want closed, replaced by j3", old.Job)
	}
}
