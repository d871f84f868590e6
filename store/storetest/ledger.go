package storetest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"cronsheet/task"
)

func ledgerCases() []testCase {
	cases := []testCase{
		{name: "InsertOnce", fn: testInsertRunOnce},
		{name: "InsertCapsOutput", fn: testInsertRunCapsOutput},
		{name: "UpdateAndGet", fn: testUpdateRun},
		{name: "Missing", fn: testRunMissing},
		{name: "ListOrderAndPaging", fn: testListRuns},
		{name: "LastSlotIgnoresManual", fn: testLastSlot},
		{name: "UnfinishedRuns", fn: testUnfinishedRuns},
	}
	return append(cases, fireLedgerCases()...)
}

func outboxCases() []testCase {
	return []testCase{
		{name: "AddAndList", fn: testOutbox},
	}
}

// newRun returns a pending schedule run of taskID at slot for target.
func newRun(triggerID, taskID string, slot time.Time, target string) *task.Run {
	return &task.Run{TriggerID: triggerID, TaskID: taskID, Slot: slot, Target: target,
		TriggerType: task.TriggerSchedule, State: task.RunPending, Attempt: 1, Node: "node-a", FiredAt: slot}
}

func (b *bundle) insertRun(r *task.Run) bool {
	b.t.Helper()
	ok, err := b.s.InsertRun(b.ctx, r)
	b.noErr("InsertRun "+r.TriggerID, err)
	return ok
}

func testInsertRunOnce(b *bundle) {
	slot := at(time.Hour)
	if !b.insertRun(newRun("tr-1", "t1", slot, "email")) {
		b.t.Fatalf("first InsertRun = false, want true")
	}
	if b.insertRun(newRun("tr-2", "t1", slot, "email")) {
		b.t.Errorf("InsertRun of the same (task, slot, target) = true, want false")
	}
	for _, r := range []*task.Run{
		newRun("tr-3", "t1", slot, "sms"),               // another target
		newRun("tr-4", "t1", slot.Add(time.Second), ""), // another slot
		newRun("tr-5", "t2", slot, "email"),             // another task
	} {
		if !b.insertRun(r) {
			b.t.Errorf("InsertRun %s = false, want true", r.TriggerID)
		}
	}
	got, err := b.s.GetRun(b.ctx, "tr-1")
	b.noErr("GetRun", err)
	want := newRun("tr-1", "t1", slot, "email")
	if got.TaskID != want.TaskID || !got.Slot.Equal(want.Slot) || got.Target != want.Target ||
		got.TriggerType != want.TriggerType || got.State != want.State || got.Attempt != want.Attempt ||
		got.Node != want.Node || !got.FiredAt.Equal(want.FiredAt) {
		b.t.Errorf("GetRun = %+v, want %+v", got, want)
	}
	utc(b.t, "Slot", got.Slot)
	if _, err := b.s.GetRun(b.ctx, "tr-2"); err == nil {
		b.t.Errorf("the ignored duplicate tr-2 was stored")
	}
}

func testInsertRunCapsOutput(b *bundle) {
	r := newRun("tr-1", "t1", at(0), "email")
	r.Output = strings.Repeat("x", 3*task.MaxOutput)
	r.Error = strings.Repeat("e", 3*task.MaxOutput)
	b.insertRun(r)
	got, err := b.s.GetRun(b.ctx, "tr-1")
	b.noErr("GetRun", err)
	if len(got.Output) > task.MaxOutput || len(got.Error) > task.MaxOutput {
		b.t.Errorf("stored output %d and error %d bytes, cap %d", len(got.Output), len(got.Error), task.MaxOutput)
	}
}

func testUpdateRun(b *bundle) {
	r := newRun("tr-1", "t1", at(0), "email")
	r.Params = map[string]string{"who": "ann", "n": "3"}
	r.Deadline = at(time.Hour)
	r.Feedback = []task.Feedback{{At: at(time.Minute), Status: 0, Message: "half", Output: "50%", Progress: true},
		{At: at(2 * time.Minute), Status: 4, Message: "stuck"}}
	b.insertRun(r)
	b.checkRunExtras("InsertRun", r)
	// Every read carries them.
	listed, err := b.s.ListRuns(b.ctx, "t1", time.Time{}, 10)
	b.noErr("ListRuns", err)
	unfinished, err := b.s.UnfinishedRuns(b.ctx, "t1")
	b.noErr("UnfinishedRuns", err)
	for what, runs := range map[string][]*task.Run{"ListRuns": listed, "UnfinishedRuns": unfinished} {
		if len(runs) != 1 || !sameExtras(runs[0], r) {
			b.t.Errorf("%s = %s, want tr-1 with its params, deadline and feedback", what, mustJSON(runs))
		}
	}
	// UpdateRun stores params and deadline; a run value without reports
	// (read before a report came) keeps the stored ones.
	r.Params = map[string]string{"who": "bob"}
	r.Deadline = at(2 * time.Hour)
	c := *r
	c.Feedback = nil
	b.noErr("UpdateRun", b.s.UpdateRun(b.ctx, &c))
	b.checkRunExtras("UpdateRun without feedback", r)

	r.Params = nil
	r.FiredAt = at(30 * time.Second)
	r.State = task.RunDone
	r.Attempt = 2
	r.FinishedAt = at(time.Second)
	r.NextAttempt = at(time.Minute)
	r.Error = "first attempt: 503"
	r.Output = "250 OK"
	b.noErr("UpdateRun", b.s.UpdateRun(b.ctx, r))
	got, err := b.s.GetRun(b.ctx, "tr-1")
	b.noErr("GetRun", err)
	if got.State != r.State || got.Attempt != 2 || !got.FinishedAt.Equal(r.FinishedAt) ||
		!got.NextAttempt.Equal(r.NextAttempt) || got.Error != r.Error || got.Output != r.Output ||
		!got.FiredAt.Equal(r.FiredAt) {
		b.t.Errorf("after UpdateRun: %+v, want %+v", got, r)
	}
	b.checkRunExtras("UpdateRun clearing params", r)
}

// sameExtras reports whether got has want's Params, Deadline and Feedback.
func sameExtras(got, want *task.Run) bool {
	return maps.Equal(got.Params, want.Params) && got.Deadline.Equal(want.Deadline) && sameJSON(got.Feedback, want.Feedback)
}

// checkRunExtras fails unless the stored run want.TriggerID has want's
// Params, Deadline and Feedback (times in UTC).
func (b *bundle) checkRunExtras(stage string, want *task.Run) {
	b.t.Helper()
	got, err := b.s.GetRun(b.ctx, want.TriggerID)
	b.noErr(stage+": GetRun", err)
	if !sameExtras(got, want) {
		b.t.Errorf("%s: params %v deadline %v feedback %s, want %v %v %s", stage, got.Params, got.Deadline,
			mustJSON(got.Feedback), want.Params, want.Deadline, mustJSON(want.Feedback))
	}
	utc(b.t, "Deadline", got.Deadline)
	for _, f := range got.Feedback {
		utc(b.t, "Feedback.At", f.At)
	}
}

func testRunMissing(b *bundle) {
	_, err := b.s.GetRun(b.ctx, "nope")
	b.wantErr("GetRun missing", err, task.ErrNotFound)
	err = b.s.UpdateRun(b.ctx, newRun("nope", "t1", at(0), "email"))
	b.wantErr("UpdateRun missing", err, task.ErrNotFound)
}

func testListRuns(b *bundle) {
	// Inserted out of order; t2's runs must not show up.
	for _, i := range []int{3, 0, 4, 1, 2} {
		b.insertRun(newRun(fmt.Sprintf("tr-%d", i), "t1", at(time.Duration(i)*time.Hour), "email"))
	}
	b.insertRun(newRun("other", "t2", at(90*time.Minute), "email"))
	var got []string
	var before time.Time
	for range 10 {
		page, err := b.s.ListRuns(b.ctx, "t1", before, 2)
		b.noErr("ListRuns", err)
		if len(page) > 2 {
			b.t.Fatalf("page of %d runs, limit 2", len(page))
		}
		if len(page) == 0 {
			break
		}
		for _, r := range page {
			got = append(got, r.TriggerID)
		}
		before = page[len(page)-1].Slot
	}
	if want := []string{"tr-4", "tr-3", "tr-2", "tr-1", "tr-0"}; !slices.Equal(got, want) {
		b.t.Errorf("ListRuns pages = %v, want %v", got, want)
	}
}

func testLastSlot(b *bundle) {
	got, err := b.s.LastSlot(b.ctx, "t1")
	b.noErr("LastSlot", err)
	if !got.IsZero() {
		b.t.Errorf("LastSlot with no runs = %v, want zero", got)
	}
	b.insertRun(newRun("s1", "t1", at(time.Hour), "email"))
	misfire := newRun("m1", "t1", at(2*time.Hour), "email")
	misfire.TriggerType = task.TriggerMisfire
	b.insertRun(misfire)
	for i, tt := range []task.TriggerType{task.TriggerManual, task.TriggerAPI, task.TriggerBackfill} {
		r := newRun(fmt.Sprintf("x%d", i), "t1", at(time.Duration(3+i)*time.Hour), "email")
		r.TriggerType = tt
		b.insertRun(r)
	}
	b.insertRun(newRun("s9", "t9", at(9*time.Hour), "email"))
	got, err = b.s.LastSlot(b.ctx, "t1")
	b.noErr("LastSlot", err)
	if !got.Equal(at(2 * time.Hour)) {
		b.t.Errorf("LastSlot = %v, want the misfire slot %v", got, at(2*time.Hour))
	}

	// LastSlots answers the same for many tasks at once; a task without a
	// scheduled slot is absent.
	many, err := b.s.LastSlots(b.ctx, []string{"t1", "t9", "t0"})
	b.noErr("LastSlots", err)
	if len(many) != 2 || !many["t1"].Equal(at(2*time.Hour)) || !many["t9"].Equal(at(9*time.Hour)) {
		b.t.Errorf("LastSlots(t1, t9, t0) = %v, want t1 %v and t9 %v only", many, at(2*time.Hour), at(9*time.Hour))
	}
	utc(b.t, "LastSlots t1", many["t1"])
	none, err := b.s.LastSlots(b.ctx, nil)
	b.noErr("LastSlots of none", err)
	if len(none) != 0 {
		b.t.Errorf("LastSlots() = %v, want empty", none)
	}
}

func testUnfinishedRuns(b *bundle) {
	states := []task.RunState{task.RunPending, task.RunRunning, task.RunFailed, task.RunDone,
		task.RunDead, task.RunRejected, task.RunTimeout, task.RunCancelled, task.RunSkipped, task.RunAccepted}
	var want []string
	for i, st := range states {
		r := newRun(fmt.Sprintf("tr-%d", i), "t1", at(time.Duration(i)*time.Minute), "email")
		r.State = st
		b.insertRun(r)
		// An accepted run is not final, yet not resumed: the target has it.
		if !st.Final() && st != task.RunAccepted {
			want = append(want, r.TriggerID)
		}
	}
	b.insertRun(newRun("other", "t2", at(0), "email"))
	// A run that finishes leaves the set.
	done := newRun("tr-1", "t1", at(time.Minute), "email")
	done.State = task.RunDone
	b.noErr("UpdateRun", b.s.UpdateRun(b.ctx, done))
	want = slices.DeleteFunc(want, func(id string) bool { return id == "tr-1" })

	runs, err := b.s.UnfinishedRuns(b.ctx, "t1")
	b.noErr("UnfinishedRuns", err)
	var got []string
	for _, r := range runs {
		got = append(got, r.TriggerID)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		b.t.Errorf("UnfinishedRuns = %v, want %v", got, want)
	}

	// UnfinishedRunsOf answers the same for many tasks at once, each
	// task's runs oldest slot first; a task without any is absent.
	many, err := b.s.UnfinishedRunsOf(b.ctx, []string{"t1", "t2", "t0"})
	b.noErr("UnfinishedRunsOf", err)
	if len(many) != 2 || len(many["t2"]) != 1 || many["t2"][0].TriggerID != "other" {
		b.t.Errorf("UnfinishedRunsOf(t1, t2, t0) = %s, want t1's and t2's runs only", mustJSON(many))
	}
	var gotMany []string
	for i, r := range many["t1"] {
		if i > 0 && r.Slot.Before(many["t1"][i-1].Slot) {
			b.t.Errorf("UnfinishedRunsOf t1: %s before %s, want oldest slot first", r.TriggerID, many["t1"][i-1].TriggerID)
		}
		gotMany = append(gotMany, r.TriggerID)
	}
	slices.Sort(gotMany)
	if !slices.Equal(gotMany, want) {
		b.t.Errorf("UnfinishedRunsOf t1 = %v, want %v", gotMany, want)
	}
}

func testOutbox(b *bundle) {
	var ids []int64
	for i := range 5 {
		m := &task.OutboxMessage{TaskID: "t1", TriggerID: fmt.Sprintf("tr-%d", i), Channel: task.ChannelOutbox,
			To: "a@example.com", Subject: fmt.Sprintf("s%d", i), Body: "body"}
		b.noErr("AddOutbox", b.s.AddOutbox(b.ctx, m))
		if m.ID == 0 || m.CreatedAt.IsZero() {
			b.t.Fatalf("AddOutbox left ID=%d CreatedAt=%v", m.ID, m.CreatedAt)
		}
		if len(ids) > 0 && m.ID <= ids[len(ids)-1] {
			b.t.Errorf("ID %d not after %d", m.ID, ids[len(ids)-1])
		}
		ids = append(ids, m.ID)
	}
	page, err := b.s.ListOutbox(b.ctx, 0, 3)
	b.noErr("ListOutbox", err)
	if len(page) != 3 || page[0].ID != ids[4] || page[2].ID != ids[2] {
		b.t.Fatalf("first page = %d messages from %v, want ids %v", len(page), page, ids[2:])
	}
	if m := page[0]; m.TaskID != "t1" || m.TriggerID != "tr-4" || m.Channel != task.ChannelOutbox ||
		m.To != "a@example.com" || m.Subject != "s4" || m.Body != "body" || m.CreatedAt.IsZero() {
		b.t.Errorf("message = %+v", m)
	}
	rest, err := b.s.ListOutbox(b.ctx, page[2].ID, 3)
	b.noErr("ListOutbox", err)
	if len(rest) != 2 || rest[0].ID != ids[1] || rest[1].ID != ids[0] {
		b.t.Errorf("second page = %v, want ids %v newest first", rest, ids[:2])
	}
	// The same run reaching the outbox again (a resumed delivery) is stored once.
	again := &task.OutboxMessage{TaskID: "t1", TriggerID: "tr-2", Channel: task.ChannelOutbox, Body: "again"}
	b.noErr("AddOutbox again", b.s.AddOutbox(b.ctx, again))
	if again.ID != ids[2] {
		b.t.Errorf("AddOutbox of a stored trigger id gave ID %d, want the stored %d", again.ID, ids[2])
	}
	all, err := b.s.ListOutbox(b.ctx, 0, 100)
	b.noErr("ListOutbox", err)
	if len(all) != 5 {
		b.t.Errorf("outbox holds %d messages after a repeated trigger id, want 5", len(all))
	}
	// A given CreatedAt is kept.
	m := &task.OutboxMessage{TaskID: "t1", Channel: task.ChannelOutbox, CreatedAt: at(time.Hour)}
	b.noErr("AddOutbox", b.s.AddOutbox(b.ctx, m))
	if !m.CreatedAt.Equal(at(time.Hour)) {
		b.t.Errorf("CreatedAt = %v, want %v", m.CreatedAt, at(time.Hour))
	}
}
