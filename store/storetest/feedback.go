package storetest

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

func feedbackCases() []testCase {
	return []testCase{
		{name: "AcceptWhileRunning", fn: testAcceptRun},
		{name: "AcceptAfterFinalReport", fn: testAcceptAfterFinal},
		{name: "AcceptRetriedCompletesStatus", fn: testAcceptRetried},
		{name: "AcceptMissing", fn: testAcceptMissing},
		{name: "ProgressThenFinal", fn: testFeedbackDone},
		{name: "FinalFailureIsDead", fn: testFeedbackDead},
		{name: "UnknownAndFinished", fn: testFeedbackRefused},
		{name: "TooManyReports", fn: testFeedbackFull},
		{name: "FinalAppliesCallersStatus", fn: testFeedbackStatus},
	}
}

func expireCases() []testCase {
	return []testCase{
		{name: "OnlyPastDeadline", fn: testExpireAccepted},
		{name: "Limit", fn: testExpireLimit},
	}
}

func controlRaceCases(cfg config) []testCase {
	return []testCase{
		{name: "AcceptRacesFinalReport", fn: testAcceptRacesFeedback, skip: cfg.skipConcurrency},
		{name: "ConcurrentReports", fn: testConcurrentReports, skip: cfg.skipConcurrency},
	}
}

// runningRun inserts a running run of taskID to target "hook" at slot
// at(i minutes), fired then, and returns it.
func (b *bundle) runningRun(taskID string, i int) *task.Run {
	b.t.Helper()
	r := newRun(fmt.Sprintf("%s-%03d", taskID, i), taskID, at(time.Duration(i)*time.Minute), "hook")
	r.State = task.RunRunning
	if !b.insertRun(r) {
		b.t.Fatalf("InsertRun %s = false", r.TriggerID)
	}
	return r
}

// accept calls AcceptRun for r with deadline and status "accepted" and
// fails unless it accepted.
func (b *bundle) accept(r *task.Run, deadline time.Time) {
	b.t.Helper()
	r.Deadline = deadline
	ok, err := b.s.AcceptRun(b.ctx, r, store.TaskStatusParams{TaskID: r.TaskID, LastStatus: string(task.RunAccepted)})
	b.noErr("AcceptRun "+r.TriggerID, err)
	if !ok {
		b.t.Fatalf("AcceptRun %s = false, want true", r.TriggerID)
	}
}

func (b *bundle) feedback(triggerID string, fb task.Feedback) *task.Run {
	b.t.Helper()
	got, err := b.s.AddFeedback(b.ctx, store.FeedbackParams{TriggerID: triggerID, Feedback: fb,
		Status: store.TaskStatusParams{TaskID: b.getRun(triggerID).TaskID, LastStatus: string(finalState(fb))}})
	b.noErr("AddFeedback "+triggerID, err)
	return got
}

// finalState is the state a final report fb ends its run in.
func finalState(fb task.Feedback) task.RunState {
	state, _ := fb.Outcome()
	return state
}

func (b *bundle) getRun(id string) *task.Run {
	b.t.Helper()
	r, err := b.s.GetRun(b.ctx, id)
	b.noErr("GetRun "+id, err)
	return r
}

// sameRun fails unless got and want encode alike.
func (b *bundle) sameRun(what string, got, want *task.Run) {
	b.t.Helper()
	if !sameJSON(got, want) {
		b.t.Errorf("%s: run\n got: %s\nwant: %s", what, mustJSON(got), mustJSON(want))
	}
}

func testAcceptRun(b *bundle) {
	tk := b.addTask(newTask("t1", "r1"))
	r := b.runningRun("t1", 1)
	r.Attempt, r.Output, r.Error = 2, "202 Accepted", "attempt 1: 503"
	b.accept(r, at(time.Hour))

	want := *r
	want.State = task.RunAccepted
	b.sameRun("accepted run", b.getRun(r.TriggerID), &want)
	b.checkStatus("accepted", "t1", "r1", tk.Version, fireStatus{status: string(task.RunAccepted)})
	// Accepted runs are not resumed: the target has the work.
	unfinished, err := b.s.UnfinishedRuns(b.ctx, "t1")
	b.noErr("UnfinishedRuns", err)
	if len(unfinished) != 0 {
		b.t.Errorf("UnfinishedRuns = %d runs, want none: an accepted run is not resumed", len(unfinished))
	}
}

func testAcceptAfterFinal(b *bundle) {
	tk := b.addTask(newTask("t1", "r1"))
	r := b.runningRun("t1", 1)
	// The target's final report beat the HTTP response.
	done := b.feedback(r.TriggerID, task.Feedback{At: at(2 * time.Minute)})
	if done.State != task.RunDone {
		b.t.Fatalf("final report on a running run: state %s, want done", done.State)
	}
	r.Deadline = at(time.Hour)
	ok, err := b.s.AcceptRun(b.ctx, r, store.TaskStatusParams{TaskID: "t1", LastStatus: string(task.RunAccepted)})
	if ok || err != nil {
		b.t.Errorf("AcceptRun after the final report = %v, %v; want false, nil", ok, err)
	}
	b.sameRun("left alone", b.getRun(r.TriggerID), done)
	b.checkStatus("left alone", "t1", "r1", tk.Version, fireStatus{status: string(task.RunDone)})

	// Only a running run is accepted: not a pending one either.
	p := newRun("t1-pending", "t1", at(5*time.Minute), "hook")
	b.insertRun(p)
	ok, err = b.s.AcceptRun(b.ctx, p, store.TaskStatusParams{TaskID: "t1", LastStatus: string(task.RunAccepted)})
	if ok || err != nil {
		b.t.Errorf("AcceptRun of a pending run = %v, %v; want false, nil", ok, err)
	}
	if got := b.getRun(p.TriggerID); got.State != task.RunPending {
		b.t.Errorf("pending run is %s after AcceptRun, want pending", got.State)
	}
}

// testAcceptRetried: a retry of an accept whose run was stored accepted
// but whose task status was not (a driver without transactions
// interrupted between the two, or any driver's write that committed and
// reported an error) writes the status and reports true: the same write
// again, at the same fence with the same deadline, is idempotent. An
// accept with another deadline is another write's, and refused.
func testAcceptRetried(b *bundle) {
	tk := b.addTask(newTask("t1", "r1"))
	r := b.runningRun("t1", 1)
	r.Attempt, r.Output = 1, "202 Accepted"
	// The interrupted accept: the run stored accepted, the status not.
	half := *r
	half.State, half.Deadline = task.RunAccepted, at(time.Hour)
	b.noErr("UpdateRun (the accept's run write)", b.s.UpdateRun(b.ctx, &half))
	b.checkStatus("run accepted, status not written", "t1", "r1", tk.Version, fireStatus{})

	other := *r
	other.Deadline = at(2 * time.Hour)
	ok, err := b.s.AcceptRun(b.ctx, &other, store.TaskStatusParams{TaskID: "t1", LastStatus: string(task.RunAccepted)})
	if ok || err != nil {
		b.t.Errorf("AcceptRun with another deadline = %v, %v; want false, nil", ok, err)
	}
	b.accept(r, at(time.Hour)) // the retry: fails unless it reports true
	want := *r
	want.State = task.RunAccepted
	b.sameRun("accepted run after the retry", b.getRun(r.TriggerID), &want)
	b.checkStatus("after the retry", "t1", "r1", tk.Version, fireStatus{status: string(task.RunAccepted)})
}

func testAcceptMissing(b *bundle) {
	tk := b.addTask(newTask("t1", "r1"))
	_, err := b.s.AcceptRun(b.ctx, newRun("nope", "t1", at(0), "hook"), store.TaskStatusParams{TaskID: "t1", LastStatus: "accepted"})
	b.wantErr("AcceptRun of a missing run", err, task.ErrNotFound)
	b.checkStatus("missing run", "t1", "r1", tk.Version, fireStatus{})

	// A missing task: nothing is stored.
	r := b.runningRun("t1", 1)
	r.Deadline = at(time.Hour)
	_, err = b.s.AcceptRun(b.ctx, r, store.TaskStatusParams{TaskID: "gone", LastStatus: "accepted"})
	b.wantErr("AcceptRun with a missing task", err, task.ErrNotFound)
	if got := b.getRun(r.TriggerID); got.State != task.RunRunning || !got.Deadline.IsZero() {
		b.t.Errorf("run after a failed AcceptRun: state %s deadline %v, want running and none", got.State, got.Deadline)
	}
}

func testFeedbackDone(b *bundle) {
	tk := b.addTask(newTask("t1", "r1"))
	r := b.runningRun("t1", 1)
	r.Output = "202 Accepted"
	b.accept(r, at(time.Hour))

	half := task.Feedback{At: at(2 * time.Minute), Message: "half way", Output: "50%", Progress: true}
	got := b.feedback(r.TriggerID, half)
	want := *r
	want.State, want.Feedback = task.RunAccepted, []task.Feedback{half}
	b.sameRun("after a progress report", got, &want)
	b.sameRun("stored after a progress report", b.getRun(r.TriggerID), &want)
	b.checkStatus("progress", "t1", "r1", tk.Version, fireStatus{status: string(task.RunAccepted)})

	final := task.Feedback{At: at(3 * time.Minute), Status: 0, Message: "ok", Output: "all 12 rows"}
	got = b.feedback(r.TriggerID, final)
	if got.State != task.RunDone || !got.FinishedAt.Equal(final.At) || got.Output != final.Output ||
		!got.Deadline.IsZero() || !sameJSON(got.Feedback, []task.Feedback{half, final}) {
		b.t.Errorf("after the final report: %s, want done at %v, output %q, no deadline, both reports in order",
			mustJSON(got), final.At, final.Output)
	}
	utc(b.t, "Feedback.At", got.Feedback[0].At)
	b.sameRun("stored after the final report", b.getRun(r.TriggerID), got)
	b.checkStatus("done", "t1", "r1", tk.Version, fireStatus{status: string(task.RunDone)})
}

func testFeedbackDead(b *bundle) {
	tk := b.addTask(newTask("t1", "r1"))
	r1, r2 := b.runningRun("t1", 1), b.runningRun("t1", 2)
	r2.Output = "202 Accepted"
	b.accept(r1, at(time.Hour))
	b.accept(r2, at(time.Hour))

	got := b.feedback(r1.TriggerID, task.Feedback{At: at(4 * time.Minute), Status: 7, Output: "trace"})
	if got.State != task.RunDead || got.Error != "target reported status 7" || got.Output != "trace" ||
		!got.FinishedAt.Equal(at(4*time.Minute)) {
		b.t.Errorf("status 7 without a message: %s, want dead with error %q", mustJSON(got), "target reported status 7")
	}
	// Without an output the accepted run's output stays.
	got = b.feedback(r2.TriggerID, task.Feedback{At: at(5 * time.Minute), Status: 2, Message: "disk full"})
	if got.State != task.RunDead || got.Error != "disk full" || got.Output != "202 Accepted" {
		b.t.Errorf("status 2 with a message: %s, want dead, error %q, output kept", mustJSON(got), "disk full")
	}
	b.checkStatus("dead", "t1", "r1", tk.Version, fireStatus{status: string(task.RunDead)})
}

func testFeedbackRefused(b *bundle) {
	b.addTask(newTask("t1", "r1"))
	_, err := b.s.AddFeedback(b.ctx, store.FeedbackParams{TriggerID: "nope", Feedback: task.Feedback{At: at(0)}})
	b.wantErr("AddFeedback to an unknown run", err, task.ErrNotFound)

	r := b.runningRun("t1", 1)
	b.accept(r, at(time.Hour))
	done := b.feedback(r.TriggerID, task.Feedback{At: at(2 * time.Minute)})
	for _, fb := range []task.Feedback{{At: at(3 * time.Minute)}, {At: at(3 * time.Minute), Progress: true}} {
		_, err = b.s.AddFeedback(b.ctx, store.FeedbackParams{TriggerID: r.TriggerID, Feedback: fb})
		b.wantConflictSaying("AddFeedback to a done run", err, string(task.RunDone))
	}
	b.sameRun("done run after refused reports", b.getRun(r.TriggerID), done)

	dead := newRun("t1-dead", "t1", at(9*time.Minute), "hook")
	dead.State, dead.FinishedAt = task.RunDead, at(10*time.Minute)
	b.insertRun(dead)
	_, err = b.s.AddFeedback(b.ctx, store.FeedbackParams{TriggerID: dead.TriggerID, Feedback: task.Feedback{At: at(11 * time.Minute)}})
	b.wantConflictSaying("AddFeedback to a dead run", err, string(task.RunDead))
	if got := b.getRun(dead.TriggerID); len(got.Feedback) != 0 {
		b.t.Errorf("dead run took %d reports", len(got.Feedback))
	}
}

func testFeedbackFull(b *bundle) {
	b.addTask(newTask("t1", "r1"))
	r := b.runningRun("t1", 1)
	b.accept(r, at(time.Hour))
	for i := range task.MaxFeedback {
		b.feedback(r.TriggerID, task.Feedback{At: at(time.Duration(i) * time.Second), Message: fmt.Sprint(i), Progress: true})
	}
	for _, fb := range []task.Feedback{{At: at(time.Hour), Progress: true}, {At: at(time.Hour)}} {
		_, err := b.s.AddFeedback(b.ctx, store.FeedbackParams{TriggerID: r.TriggerID, Feedback: fb})
		b.wantErr(fmt.Sprintf("report %d (progress %v)", task.MaxFeedback+1, fb.Progress), err, task.ErrConflict)
	}
	got := b.getRun(r.TriggerID)
	if got.State != task.RunAccepted || len(got.Feedback) != task.MaxFeedback ||
		got.Feedback[task.MaxFeedback-1].Message != fmt.Sprint(task.MaxFeedback-1) {
		b.t.Errorf("full run: state %s with %d reports, want accepted with the first %d", got.State, len(got.Feedback), task.MaxFeedback)
	}
}

func testExpireAccepted(b *bundle) {
	t1 := b.addTask(newTask("t1", "r1"))
	t2 := b.addTask(newTask("t2", "r2"))
	a1, a2, a3 := b.runningRun("t1", 1), b.runningRun("t2", 2), b.runningRun("t1", 3)
	b.accept(a1, at(time.Hour))
	b.accept(a2, at(2*time.Hour))
	b.accept(a3, at(3*time.Hour))
	late := b.runningRun("t1", 4) // running with a past deadline: not accepted, not expired
	late.Deadline = at(time.Minute)
	b.noErr("UpdateRun", b.s.UpdateRun(b.ctx, late))
	done := newRun("t1-done", "t1", at(5*time.Minute), "hook")
	done.State, done.Deadline = task.RunDone, at(time.Minute)
	b.insertRun(done)

	now := at(150 * time.Minute)
	// The caller decides each task's status: timeout for t1's runs, t2
	// left alone.
	status := func(r *task.Run) store.TaskStatusParams {
		if r.TaskID == "t2" {
			return store.TaskStatusParams{}
		}
		return store.TaskStatusParams{TaskID: r.TaskID, LastStatus: string(task.RunTimeout)}
	}
	got, err := b.s.ExpireAccepted(b.ctx, now, 10, status)
	b.noErr("ExpireAccepted", err)
	var ids []string
	for _, r := range got {
		ids = append(ids, r.TriggerID)
		if r.State != task.RunTimeout || !r.FinishedAt.Equal(now) || r.Error == "" {
			b.t.Errorf("expired run %s: state %s finished %v error %q, want timeout at %v with a reason",
				r.TriggerID, r.State, r.FinishedAt, r.Error, now)
		}
		b.sameRun("stored expired run", b.getRun(r.TriggerID), r)
	}
	slices.Sort(ids)
	if want := []string{a1.TriggerID, a2.TriggerID}; !slices.Equal(ids, want) {
		b.t.Errorf("ExpireAccepted = %v, want %v (deadline before now, accepted)", ids, want)
	}
	for r, st := range map[*task.Run]task.RunState{a3: task.RunAccepted, late: task.RunRunning, done: task.RunDone} {
		if got := b.getRun(r.TriggerID); got.State != st {
			b.t.Errorf("run %s is %s, want %s", r.TriggerID, got.State, st)
		}
	}
	b.checkStatus("t1 expired", "t1", "r1", t1.Version, fireStatus{status: string(task.RunTimeout)})
	b.checkStatus("t2 expired, left alone", "t2", "r2", t2.Version, fireStatus{status: string(task.RunAccepted)})

	again, err := b.s.ExpireAccepted(b.ctx, now, 10, status)
	b.noErr("ExpireAccepted again", err)
	if len(again) != 0 {
		b.t.Errorf("ExpireAccepted again = %d runs, want none", len(again))
	}
	_, err = b.s.ExpireAccepted(b.ctx, now, 0, status)
	b.wantErr("ExpireAccepted with limit 0", err, task.ErrInvalid)
}

func testExpireLimit(b *bundle) {
	b.addTask(newTask("t1", "r1"))
	for i := range 5 {
		b.accept(b.runningRun("t1", i), at(time.Duration(i+1)*time.Minute))
	}
	var counts []int
	for range 4 {
		got, err := b.s.ExpireAccepted(b.ctx, at(time.Hour), 2, nil)
		b.noErr("ExpireAccepted", err)
		counts = append(counts, len(got))
	}
	if want := []int{2, 2, 1, 0}; !slices.Equal(counts, want) {
		b.t.Errorf("ExpireAccepted with limit 2, four times: %v, want %v", counts, want)
	}
}

// testFeedbackStatus: a final report applies the status its caller gives
// (here the schedule used up: done, no next fire) with the run's end and
// bumps the run's fence, so that the deliverer's later writes are
// refused; a zero status leaves the task alone.
func testFeedbackStatus(b *bundle) {
	tk := b.addTask(newTask("t1", "r1"))
	r := b.runningRun("t1", 1)
	got, err := b.s.AddFeedback(b.ctx, store.FeedbackParams{TriggerID: r.TriggerID, Feedback: task.Feedback{At: at(2 * time.Minute)},
		Status: store.TaskStatusParams{TaskID: "t1", LastStatus: string(task.RunDone), LastFire: r.Slot, Done: true, SetNextFire: true}})
	b.noErr("AddFeedback", err)
	if got.State != task.RunDone || got.Fence != r.Fence+1 {
		b.t.Errorf("after the final report: %s with fence %d, want done with fence %d", got.State, got.Fence, r.Fence+1)
	}
	b.checkStatus("schedule used up", "t1", "r1", tk.Version, fireStatus{last: r.Slot, status: string(task.RunDone), done: 1})
	r.State = task.RunDead
	r.FinishedAt = at(3 * time.Minute)
	b.wantErr("the deliverer's write after the report", b.s.UpdateRun(b.ctx, r), task.ErrFenced)
	if ok, err := b.s.AcceptRun(b.ctx, r, store.TaskStatusParams{TaskID: "t1", LastStatus: string(task.RunAccepted)}); ok || err != nil {
		b.t.Errorf("AcceptRun after the final report = %v, %v; want false, nil", ok, err)
	}
	b.checkStatus("after the deliverer's writes", "t1", "r1", tk.Version, fireStatus{last: r.Slot, status: string(task.RunDone), done: 1})

	r2 := b.runningRun("t1", 2)
	_, err = b.s.AddFeedback(b.ctx, store.FeedbackParams{TriggerID: r2.TriggerID, Feedback: task.Feedback{At: at(3 * time.Minute), Status: 1}})
	b.noErr("AddFeedback without a status", err)
	b.checkStatus("no status given", "t1", "r1", tk.Version, fireStatus{last: r.Slot, status: string(task.RunDone), done: 1})
}

// testAcceptRacesFeedback races AcceptRun against a final report on fresh
// running runs: whichever comes first, the run ends done, never accepted.
func testAcceptRacesFeedback(b *bundle) {
	b.addTask(newTask("t1", "r1"))
	const rounds = 6
	for i := range rounds {
		r := b.runningRun("t1", i)
		r.Deadline = at(time.Hour)
		var (
			wg       sync.WaitGroup
			accepted bool
			errs     [2]error
		)
		wg.Go(func() {
			accepted, errs[0] = b.s.AcceptRun(b.ctx, r, store.TaskStatusParams{TaskID: "t1", LastStatus: "accepted"})
		})
		wg.Go(func() {
			_, errs[1] = b.s.AddFeedback(b.ctx, store.FeedbackParams{TriggerID: r.TriggerID,
				Feedback: task.Feedback{At: at(time.Minute)}})
		})
		wg.Wait()
		if err := errors.Join(errs[:]...); err != nil {
			b.t.Fatalf("round %d: %v", i, err)
		}
		got := b.getRun(r.TriggerID)
		if got.State != task.RunDone || !got.Deadline.IsZero() || len(got.Feedback) != 1 {
			b.t.Errorf("round %d (accepted %v): run %s with deadline %v and %d reports, want done, none, 1",
				i, accepted, got.State, got.Deadline, len(got.Feedback))
		}
	}
}

// testConcurrentReports sends progress reports from several reporters at
// once (none is lost), then a final report from each (exactly one wins).
func testConcurrentReports(b *bundle) {
	const reporters, each = 6, 3
	b.addTask(newTask("t1", "r1"))
	r := b.runningRun("t1", 1)
	b.accept(r, at(time.Hour))
	errs := make([]error, reporters)
	var wg sync.WaitGroup
	for w := range reporters {
		wg.Go(func() {
			for i := range each {
				_, err := b.s.AddFeedback(b.ctx, store.FeedbackParams{TriggerID: r.TriggerID, Feedback: task.Feedback{
					At: at(time.Duration(w*each+i) * time.Second), Message: fmt.Sprintf("w%d-%d", w, i), Progress: true}})
				if err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	b.noErr("progress reports", errors.Join(errs...))
	if got := b.getRun(r.TriggerID); len(got.Feedback) != reporters*each {
		b.t.Fatalf("%d progress reports stored, want %d", len(got.Feedback), reporters*each)
	}

	wins := make([]bool, reporters)
	for w := range reporters {
		wg.Go(func() {
			_, err := b.s.AddFeedback(b.ctx, store.FeedbackParams{TriggerID: r.TriggerID,
				Feedback: task.Feedback{At: at(time.Minute), Status: w}})
			switch {
			case err == nil:
				wins[w] = true
			case !errors.Is(err, task.ErrConflict):
				errs[w] = err
			}
		})
	}
	wg.Wait()
	b.noErr("final reports", errors.Join(errs...))
	winner := slices.Index(wins, true)
	if n := len(slices.DeleteFunc(slices.Clone(wins), func(w bool) bool { return !w })); n != 1 {
		b.t.Fatalf("%d final reports taken, want exactly 1", n)
	}
	got := b.getRun(r.TriggerID)
	want := task.RunDone
	if winner != 0 {
		want = task.RunDead
	}
	if got.State != want || len(got.Feedback) != reporters*each+1 || got.Feedback[len(got.Feedback)-1].Status != winner {
		b.t.Errorf("after the final reports: %s with %d reports, want %s with %d, the last from reporter %d",
			got.State, len(got.Feedback), want, reporters*each+1, winner)
	}
}
