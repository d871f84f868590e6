// Job events and the key races of the jobs suite (RunJobs): events in
// order and bounded, one winner among callers racing for a key, and
// listing jobs.

package storetest

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// sameEvents fails unless got and want hold the same events in the same
// order (At to the millisecond, in UTC).
func (b *bundle) sameEvents(what string, got, want []store.JobEvent) {
	b.t.Helper()
	if len(got) != len(want) {
		b.t.Errorf("%s: %d events, want %d\n got: %s\nwant: %s", what, len(got), len(want), mustJSON(got), mustJSON(want))
		return
	}
	for i := range got {
		g, w := got[i], want[i]
		utc(b.t, what+": At", g.At)
		if !g.At.Equal(w.At) {
			b.t.Errorf("%s: event %d at %s, want %s", what, i, g.At.Format(time.RFC3339Nano), w.At.Format(time.RFC3339Nano))
		}
		g.At, w.At = time.Time{}, time.Time{}
		if g != w {
			b.t.Errorf("%s: event %d = %s, want %s", what, i, mustJSON(g), mustJSON(w))
		}
	}
}

func (b *bundle) jobEvents(jobID string, limit int) []store.JobEvent {
	b.t.Helper()
	evs, err := b.jobs().JobEvents(b.ctx, jobID, limit)
	b.noErr(fmt.Sprintf("JobEvents(%s, %d)", jobID, limit), err)
	return evs
}

func testJobEvents(b *bundle) {
	jobs := b.jobs()
	b.createJob(newJob("j1", ""))
	b.createJob(newJob("j2", ""))
	e := []store.JobEvent{
		{JobID: "j1", At: at(time.Second + time.Millisecond), State: task.JobPending, Reason: "created"},
		{JobID: "j2", At: at(2 * time.Second), State: task.JobPending},
		{JobID: "j1", At: at(3*time.Second + 7*time.Millisecond), State: task.JobRunning, TriggerID: "tr-1", Attempt: 1},
		{JobID: "j1", At: at(4 * time.Second), State: task.JobFailed, TriggerID: "tr-1", Attempt: 1, Reason: "503 from the target"},
		// Two at the same instant keep the order they were added in.
		{JobID: "j1", At: at(5 * time.Second), State: task.JobRunning, TriggerID: "tr-2", Attempt: 2},
		{JobID: "j1", At: at(5 * time.Second), State: task.JobDone, TriggerID: "tr-2", Attempt: 2},
	}
	b.noErr("AddJobEvents", jobs.AddJobEvents(b.ctx, e[:4]))
	b.noErr("AddJobEvents of none", jobs.AddJobEvents(b.ctx, nil))
	b.noErr("AddJobEvents again", jobs.AddJobEvents(b.ctx, e[4:]))

	j1 := []store.JobEvent{e[0], e[2], e[3], e[4], e[5]}
	b.sameEvents("JobEvents(j1)", b.jobEvents("j1", 10), j1)
	b.sameEvents("JobEvents(j1) at most 2", b.jobEvents("j1", 2), j1[:2])
	b.sameEvents("JobEvents(j2)", b.jobEvents("j2", store.MaxJobEvents), e[1:2])
	b.sameEvents("JobEvents of an unknown job", b.jobEvents("nope", 10), nil)
}

func testJobEventBounds(b *bundle) {
	jobs := b.jobs()
	b.createJob(newJob("j1", ""))
	for _, limit := range []int{0, -1, store.MaxJobEvents + 1} {
		_, err := jobs.JobEvents(b.ctx, "j1", limit)
		b.wantErr(fmt.Sprintf("JobEvents with limit %d", limit), err, task.ErrInvalid)
	}
	many := make([]store.JobEvent, store.MaxStatusBatch+1)
	for i := range many {
		many[i] = store.JobEvent{JobID: "j1", At: at(time.Duration(i) * time.Millisecond), State: task.JobPending}
	}
	b.wantErr("AddJobEvents over the batch bound", jobs.AddJobEvents(b.ctx, many), task.ErrInvalid)
	b.sameEvents("after a refused batch", b.jobEvents("j1", 10), nil)
}

// raceJobs is how many callers the job races run at once.
const raceJobs = 8

// race runs fn(i) for i in [0, raceJobs) at once and returns their errors.
func race(fn func(i int) error) []error {
	errs := make([]error, raceJobs)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range raceJobs {
		wg.Go(func() {
			<-start
			errs[i] = fn(i)
		})
	}
	close(start)
	wg.Wait()
	return errs
}

// oneWinner checks that exactly one of errs is nil and every other is
// task.ErrConflict; it returns the winner's index.
func (b *bundle) oneWinner(what string, errs []error) int {
	b.t.Helper()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			b.t.Errorf("%s: callers %d and %d both won", what, winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, task.ErrConflict):
			b.t.Errorf("%s: caller %d: %v, want %v", what, i, err, task.ErrConflict)
		}
	}
	if winner < 0 {
		b.t.Fatalf("%s: nobody won", what)
	}
	return winner
}

// testCreateSameKey: callers create jobs with the same key at once: one
// gets it, the others store nothing.
func testCreateSameKey(b *bundle) {
	errs := race(func(i int) error { return b.jobs().CreateJob(b.ctx, newJob(fmt.Sprintf("c%d", i), "k")) })
	w := b.oneWinner("CreateJob", errs)
	b.wantKeyHeldBy("after the race", "k", fmt.Sprintf("c%d", w))
	for i := range raceJobs {
		if i != w {
			b.wantNoTask("loser", fmt.Sprintf("c%d", i))
		}
	}
}

// testReplaceSameKey: callers replace the same job at once: one replaces
// it, the others store nothing.
func testReplaceSameKey(b *bundle) {
	b.createJob(newJob("j0", "k"))
	errs := race(func(i int) error {
		return b.jobs().ReplaceJob(b.ctx, "k", "j0", newJob(fmt.Sprintf("r%d", i), "k"))
	})
	w := b.oneWinner("ReplaceJob", errs)
	winner := fmt.Sprintf("r%d", w)
	b.wantKeyHeldBy("after the race", "k", winner)
	if old := b.getTask("j0"); old.Job == nil || old.Job.ReplacedBy != winner || old.Version != 2 {
		b.t.Errorf("j0 after the race = %s, want replaced by %s, version 2", mustJSON(old), winner)
	}
	for i := range raceJobs {
		if i != w {
			b.wantNoTask("loser", fmt.Sprintf("r%d", i))
		}
	}
}

// testListJobs: ListJobs pages every job once, newest first by
// (created_at, task_id), and no row's task; a bad limit is ErrInvalid.
func testListJobs(b *bundle) {
	jobs := b.jobs()
	b.addTask(newTask("row-task", "r1"))
	var want []*task.Task
	for _, id := range []string{"j3", "j1", "j5", "j2", "j4"} {
		b.createJob(newJob(id, ""))
		got, err := b.s.GetTask(b.ctx, id)
		b.noErr("GetTask "+id, err)
		want = append(want, got)
	}
	slices.SortFunc(want, func(x, y *task.Task) int {
		if c := y.CreatedAt.Compare(x.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(y.TaskID, x.TaskID)
	})
	var got []string
	var after store.JobCursor
	for page := 0; page < 10; page++ {
		ts, err := jobs.ListJobs(b.ctx, store.ListJobsParams{After: after, Limit: 2})
		b.noErr("ListJobs", err)
		for _, t := range ts {
			if t.Job == nil || t.Scenario != task.JobScenario {
				b.t.Errorf("ListJobs returned %s of scenario %q, not a job", t.TaskID, t.Scenario)
			}
			got = append(got, t.TaskID)
			after = store.JobCursor{CreatedAt: t.CreatedAt, TaskID: t.TaskID}
		}
		if len(ts) < 2 {
			break
		}
	}
	var wantIDs []string
	for _, t := range want {
		wantIDs = append(wantIDs, t.TaskID)
	}
	if !slices.Equal(got, wantIDs) {
		b.t.Errorf("ListJobs pages = %v, want %v", got, wantIDs)
	}
	for _, limit := range []int{0, store.MaxListJobs + 1} {
		if _, err := jobs.ListJobs(b.ctx, store.ListJobsParams{Limit: limit}); !errors.Is(err, task.ErrInvalid) {
			b.t.Errorf("ListJobs limit %d: err = %v, want ErrInvalid", limit, err)
		}
	}
}
