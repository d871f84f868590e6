package storetest

import (
	"errors"
	"fmt"
	"sync"
	"time"

	"cronsheet/store"
	"cronsheet/task"
)

// createJobWithEvent creates job id (holding key when not "") with a
// "submitted" event.
func (b *bundle) createJobWithEvent(id, key string) {
	b.t.Helper()
	b.noErr("CreateJob "+id, b.s.CreateJob(b.ctx, newJob(id, key)))
	b.noErr("AddJobEvents "+id, b.s.AddJobEvents(b.ctx, []store.JobEvent{{JobID: id, At: at(0), State: task.JobPending}}))
}

func testPruneJobs(b *bundle) {
	// done: fired, its run done, the task done.
	b.createJobWithEvent("done", "k-done")
	b.insertRun(finishedRun("done", 1, task.RunDone, at(0)))
	b.noErr("SetTaskStatus", b.s.SetTaskStatus(b.ctx, store.TaskStatusParams{TaskID: "done", Done: true}))
	// cancelled: closed before it fired.
	b.createJobWithEvent("cancelled", "k-cancelled")
	_, err := b.s.SetTaskState(b.ctx, store.TaskStateParams{TaskID: "cancelled", State: task.StateClosed, Now: at(0)})
	b.noErr("SetTaskState closed", err)
	// pending: waiting for its instant.
	b.createJobWithEvent("pending", "k-pending")
	// retrying: done flag set but a run still failed (not final).
	b.createJobWithEvent("retrying", "")
	b.insertRun(finishedRun("retrying", 1, task.RunFailed, time.Time{}))
	b.noErr("SetTaskStatus", b.s.SetTaskStatus(b.ctx, store.TaskStatusParams{TaskID: "retrying", Done: true}))

	if n := b.pass(store.RetainJobs, future(), 3); n != 2 {
		b.t.Errorf("pruned %d jobs, want 2 (done, cancelled)", n)
	}
	for _, id := range []string{"done", "cancelled"} {
		if _, err := b.s.GetTask(b.ctx, id); !errors.Is(err, task.ErrNotFound) {
			b.t.Errorf("GetTask(%s) after pruning = %v, want ErrNotFound", id, err)
		}
		if evs, err := b.s.JobEvents(b.ctx, id, 10); err != nil || len(evs) != 0 {
			b.t.Errorf("JobEvents(%s) after pruning = %v, %v; want none", id, evs, err)
		}
		if _, err := b.s.JobByKey(b.ctx, "k-"+id); !errors.Is(err, task.ErrNotFound) {
			b.t.Errorf("JobByKey(k-%s) after pruning = %v, want ErrNotFound", id, err)
		}
	}
	b.expectRuns([]string{"done-01"}, []string{"retrying-01"})
	for _, id := range []string{"pending", "retrying"} {
		b.getTask(id)
	}
	if j, err := b.s.JobByKey(b.ctx, "k-pending"); err != nil || j.TaskID != "pending" {
		b.t.Errorf("JobByKey(k-pending) = %v, %v; want job pending", j, err)
	}
	if evs, err := b.s.JobEvents(b.ctx, "pending", 10); err != nil || len(evs) != 1 {
		b.t.Errorf("JobEvents(pending) = %v, %v; want its one event", evs, err)
	}
	// A freed key takes a new job.
	b.noErr("CreateJob with a freed key", b.s.CreateJob(b.ctx, newJob("again", "k-done")))
	// By age: a job updated after Before stays.
	if n := b.pass(store.RetainJobs, store.Cursor{At: at(-time.Hour)}, 3); n != 0 {
		b.t.Errorf("pruned %d jobs created after Before, want 0", n)
	}
}

// testPruneJobsCutoffMillisecond: a job the count bound's cutoff (an
// item's position) puts before it, last updated in the cutoff's own
// millisecond, is beyond the bound and goes: the millisecond cannot order
// the update and the cutoff job's creation, and keeping the job let jobs
// of one millisecond leave the count bound slack. A bare time (the age
// bound) comes before every item of its millisecond: a job updated in it
// stays.
func testPruneJobsCutoffMillisecond(b *bundle) {
	b.createJobWithEvent("a-old", "")
	b.createJobWithEvent("b-new", "")
	cut, err := b.s.RetentionCutoff(b.ctx, store.RetainJobs, 1)
	b.noErr("RetentionCutoff", err)
	if cut.ID != "b-new" {
		b.t.Fatalf("RetentionCutoff(jobs, 1) = %v, want job b-new's position", cut)
	}
	_, err = b.s.SetTaskState(b.ctx, store.TaskStateParams{TaskID: "a-old", State: task.StateClosed, Now: cut.At})
	b.noErr("SetTaskState closed", err)
	if n := b.pass(store.RetainJobs, store.Cursor{At: cut.At}, 3); n != 0 {
		b.t.Errorf("by age, before the millisecond a-old was last updated in: pruned %d jobs, want 0", n)
	}
	if n := b.pass(store.RetainJobs, cut, 3); n != 1 {
		b.t.Errorf("by count, keeping 1: pruned %d jobs, want 1 (a-old)", n)
	}
	if _, err := b.s.GetTask(b.ctx, "b-new"); err != nil {
		b.t.Errorf("GetTask(b-new) = %v, want the job kept", err)
	}
}

func (b *bundle) addOutbox(i int) {
	b.t.Helper()
	m := &task.OutboxMessage{TaskID: "t1", TriggerID: fmt.Sprintf("tr-%03d", i), Channel: task.ChannelEmail,
		To: "a@example.com", Subject: "s", Body: "b", CreatedAt: at(time.Duration(i/2) * time.Second)}
	b.noErr("AddOutbox", b.s.AddOutbox(b.ctx, m))
}

func testPruneOutboxCount(b *bundle) {
	for i := range 10 { // two messages per second: ties in age
		b.addOutbox(i)
	}
	cut, err := b.s.RetentionCutoff(b.ctx, store.RetainOutbox, 3)
	b.noErr("RetentionCutoff", err)
	if n := b.pass(store.RetainOutbox, cut, 3); n != 7 {
		b.t.Errorf("pruned %d messages, want 7", n)
	}
	left, err := b.s.ListOutbox(b.ctx, 0, 100)
	b.noErr("ListOutbox", err)
	var got []string
	for _, m := range left {
		got = append(got, m.TriggerID)
	}
	if fmt.Sprint(got) != "[tr-009 tr-008 tr-007]" {
		b.t.Errorf("outbox after keeping 3 = %v, want the newest three", got)
	}
}

func testPruneAudit(b *bundle) {
	for i := range 5 {
		rec := &store.AuditRecord{Scenario: scenario, RowID: "r1", Action: store.AuditUpdate, Who: "ann",
			At: at(time.Duration(i) * time.Hour)}
		b.noErr("AddAudit", b.s.AddAudit(b.ctx, rec))
	}
	if n := b.pass(store.RetainAudit, store.Cursor{At: at(2 * time.Hour)}, 100); n != 2 {
		b.t.Errorf("pruned %d audit records, want 2", n)
	}
	left, err := b.s.ListAudit(b.ctx, scenario, "r1", 0, 100)
	b.noErr("ListAudit", err)
	if len(left) != 3 || !left[len(left)-1].At.Equal(at(2*time.Hour)) {
		b.t.Errorf("audit after pruning before hour 2: %d records, want 3 from hour 2", len(left))
	}
}

func testPruneExecutions(b *bundle) {
	for i, st := range []task.ExecState{task.ExecSuccess, task.ExecRunning, task.ExecFailure, task.ExecInterrupted} {
		e := sampleExecution(fmt.Sprintf("x%d", i), "nightly", at(time.Duration(i)*time.Minute))
		e.State = st
		b.noErr("CreateExecution", b.s.CreateExecution(b.ctx, e))
	}
	if n := b.pass(store.RetainFlowExecutions, future(), 2); n != 3 {
		b.t.Errorf("pruned %d executions, want 3 (all but the running one)", n)
	}
	if _, err := b.s.GetExecution(b.ctx, "x1"); err != nil {
		b.t.Errorf("GetExecution(x1, running) = %v, want it kept", err)
	}
	if _, err := b.s.GetExecution(b.ctx, "x0"); !errors.Is(err, task.ErrNotFound) {
		b.t.Errorf("GetExecution(x0, success) = %v, want ErrNotFound", err)
	}
}

// testPruneConcurrent runs two passes over the same outbox at once: every
// message goes, and the two counts add up to the number there was.
func testPruneConcurrent(b *bundle) {
	const n = 120
	for i := range n {
		b.addOutbox(i)
	}
	var wg sync.WaitGroup
	counts := make([]int, 2)
	errs := make([]error, 2)
	for w := range 2 {
		wg.Go(func() {
			p := store.PruneParams{Kind: store.RetainOutbox, Before: future(), Limit: 7}
			for {
				res, err := b.s.Prune(b.ctx, p)
				if err != nil {
					errs[w] = err
					return
				}
				counts[w] += res.Deleted
				if res.Examined < p.Limit {
					return
				}
				p.After = res.Next
			}
		})
	}
	wg.Wait()
	b.noErr("concurrent Prune", errors.Join(errs...))
	if counts[0]+counts[1] != n {
		b.t.Errorf("two passes counted %d + %d deleted, want %d in all", counts[0], counts[1], n)
	}
	if left, err := b.s.ListOutbox(b.ctx, 0, 10); err != nil || len(left) != 0 {
		b.t.Errorf("outbox after two passes: %d messages (%v), want none", len(left), err)
	}
}

func testPruneInvalid(b *bundle) {
	for _, p := range []store.PruneParams{
		{Kind: "rows", Before: future(), Limit: 10},
		{Kind: store.RetainRuns, Before: future(), Limit: 0},
		{Kind: store.RetainRuns, Before: future(), Limit: store.MaxPruneBatch + 1},
	} {
		if _, err := b.s.Prune(b.ctx, p); !errors.Is(err, task.ErrInvalid) {
			b.t.Errorf("Prune(%+v) = %v, want ErrInvalid", p, err)
		}
	}
	if _, err := b.s.RetentionCutoff(b.ctx, store.RetainAudit, 0); !errors.Is(err, task.ErrInvalid) {
		b.t.Errorf("RetentionCutoff(keep 0) = %v, want ErrInvalid", err)
	}
}
