package modelcheck

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

	"cronsheet/task"
)

// drainHook takes the deliveries the hook recorded since the last call.
func (m *model) drainHook() {
	var ds []delivery
	ds, m.hookNext = m.hook.since(m.hookNext)
	m.deliveries = append(m.deliveries, ds...)
	m.stats.deliveries += len(ds)
	for _, d := range ds {
		if e := m.ents[d.taskID()]; e != nil && e.row {
			m.stats.rowDeliveries++
		} else {
			m.stats.jobDeliveries++
		}
	}
	for _, r := range m.hook.takeEarly() {
		a := answer{status: r.Code, body: r.Body, sent: r.Sent, recv: r.Recv}
		if r.Code == 0 {
			a.err = errors.New("early feedback call failed")
		}
		path := "/api/v1/runs/" + r.TriggerID + "/feedback"
		if m.killBetween(r.Sent, r.Recv.Add(time.Second)) {
			continue // the kill may have cut it: its answer says nothing
		}
		m.feedbackAnswer(r.TriggerID, r.Status, false, m.account("POST", path, a))
	}
}

// checkStep runs the checks that need only the deliveries: after every
// step and at the end.
func (m *model) checkStep() {
	m.drainHook()
	m.checkDuplicates()
	m.checkAfterStop()
	m.checkRerunAfterFinal()
}

// killBetween reports whether a kill happened between a and b.
func (m *model) killBetween(a, b time.Time) bool {
	for _, k := range m.kills {
		if k.After(a) && k.Before(b) {
			return true
		}
	}
	return false
}

// checkDuplicates: no trigger id is delivered twice unless a kill cut its
// call (a kill between the two arrivals). Every target and job of the
// model has no retries for a failing answer, so a repeat is a re-send.
func (m *model) checkDuplicates() {
	byTrigger := map[string][]delivery{}
	for _, d := range m.deliveries {
		byTrigger[d.TriggerID] = append(byTrigger[d.TriggerID], d)
	}
	for id, ds := range byTrigger {
		if len(ds) < 2 || id == "" {
			continue
		}
		sort.Slice(ds, func(i, j int) bool { return ds[i].Arrived.Before(ds[j].Arrived) })
		for i := 1; i < len(ds); i++ {
			if !m.killBetween(ds[i-1].Arrived, ds[i].Arrived) {
				e := m.ents[ds[i].taskID()]
				m.violate("dup-trigger:"+kindOf(e), id, "trigger %s of %s delivered at %s and again at %s with no kill between",
					id, ds[i].taskID(), ds[i-1].Arrived.Format("15:04:05.000"), ds[i].Arrived.Format("15:04:05.000"))
			}
		}
	}
}

func kindOf(e *entity) string {
	if e == nil {
		return "unknown"
	}
	return e.kind
}

// checkAfterStop: nothing is delivered after its cancel, block, close,
// switch-off or delete was answered, until a resume was sent; a delivery
// arriving within inFlightGrace of the answer counts as in flight, and
// the runs a manual trigger answered are allowed. The check's name says
// the stop and the entity's kind, with +tasks-state when the tasks API
// changed the job's state since the stop.
func (m *model) checkAfterStop() {
	for _, d := range m.deliveries {
		e := m.ents[d.taskID()]
		if e == nil || m.exempt[d.TriggerID] {
			continue
		}
		var stop *stopEvent
		for i := range e.events {
			ev := &e.events[i]
			switch {
			case ev.stop && ev.at.Add(inFlightGrace).Before(d.Arrived):
				stop = ev
			case !ev.stop && ev.at.Before(d.Arrived):
				stop = nil
			}
		}
		if stop == nil || m.resentAfterKill(d, stop.at.Add(inFlightGrace)) {
			continue
		}
		check := "after-stop:" + stop.kind + ":" + e.kind
		if m.killBetween(stop.at, d.Arrived) {
			check += "+kill"
		}
		if slices.ContainsFunc(e.tasksState, func(t time.Time) bool { return t.After(stop.at) && t.Before(d.Arrived) }) {
			check += "+tasks-state"
		}
		// The run as stored says how it came (trigger type, when it was
		// fired, its attempt and deadline), to tell a fire decided before
		// the stop from one decided after it.
		var run task.Run
		if m.node == nil { // the checks' own unit test: no node to ask
			run.Error = "not read: no node"
		} else if a := m.rawCall("GET", "/api/v1/runs/"+url.PathEscape(d.TriggerID), nil); a.status != 200 || !jsonInto(a.body, &run) {
			run.Error = fmt.Sprintf("not read: %d %v", a.status, a.err)
		}
		m.violate(check, d.TriggerID, "%s %s: trigger %s arrived %s, %s after its %s was answered at %s; "+
			"the run: %s %s, fired %s, attempt %d, deadline %s, node %s %s",
			e.kind, e.id, d.TriggerID, d.Arrived.Format("15:04:05.000"), d.Arrived.Sub(stop.at).Round(time.Millisecond),
			stop.kind, stop.at.Format("15:04:05.000"), run.TriggerType, run.State, run.FiredAt.Format("15:04:05.000"),
			run.Attempt, run.Deadline.Format("15:04:05.000"), run.Node, run.Error)
	}
}

// resentAfterKill reports whether d re-sends a call of its trigger id
// that arrived before by (in flight then) and that a kill cut: the kill
// came between the two.
func (m *model) resentAfterKill(d delivery, by time.Time) bool {
	for _, p := range m.deliveries {
		if p.TriggerID == d.TriggerID && p.Arrived.Before(by) && p.Arrived.Before(d.Arrived) && m.killBetween(p.Arrived, d.Arrived) {
			return true
		}
	}
	return false
}

// checkRerunAfterFinal: no run is delivered again once the API showed it
// final (done, dead, timeout…): a finished run is never re-run.
func (m *model) checkRerunAfterFinal() {
	for _, d := range m.deliveries {
		if at, ok := m.final[d.TriggerID]; ok && at.Add(inFlightGrace).Before(d.Arrived) {
			m.violate("rerun-after-final:"+kindOf(m.ents[d.taskID()]), d.TriggerID,
				"trigger %s delivered at %s after the API showed it final at %s", d.TriggerID,
				d.Arrived.Format("15:04:05.000"), at.Format("15:04:05.000"))
		}
	}
}

// checkEnd runs the end checks on the jobs once they are quiet: every job
// final with its events ending there, the dead list, backfills, cancelled
// jobs never delivered, and the ledger's feedback.
func (m *model) checkEnd(views map[string]jobView) {
	delivered := map[string]int{} // task id → deliveries
	byTrigger := map[string]int{}
	for _, d := range m.deliveries {
		delivered[d.taskID()]++
		byTrigger[d.TriggerID]++
	}
	dead := map[string]bool{}
	for _, e := range m.jobs {
		v, ok := views[e.id]
		if !ok {
			m.violate("job-final:"+e.kind, e.id, "job %s could not be read", e.id)
			continue
		}
		tag := m.endTag(e, v)
		if !task.JobState(v.State).Final() {
			m.violate("job-final:"+e.kind+tag, e.id, "job %s is %s after the quiet period", e.id, v.State)
		}
		if n := len(v.Events); n == 0 || v.Events[n-1].State != v.State {
			last := "none"
			if n > 0 {
				last = v.Events[n-1].State
			}
			check := "job-events-end:" + e.kind + tag
			if tag == "+kill" {
				check += ":last-" + last
			}
			m.violate(check, e.id, "job %s is %s but its last event is %s; newest events: %s; model: %s",
				e.id, v.State, last, lastEvents(v, 4), e.history())
		}
		if v.State == string(task.JobDead) {
			dead[e.id] = true
		}
		if v.State == string(task.JobCancelled) && !e.cron && !e.resumed && len(e.tasksState) == 0 && delivered[e.id] > 0 {
			m.violate("cancelled-delivered:"+e.kind, e.id, "job %s reads cancelled but was delivered %d times", e.id, delivered[e.id])
		}
		if !e.cron {
			m.checkBackfills(e, v)
		}
		m.checkRuns(e, v, byTrigger)
	}
	m.checkDeadList(dead, views)
}

// endTag qualifies an end check's name by what the job went through:
// +tasks-state when the tasks API changed its state, +multi-backfill
// when one request named it twice or several requests at once backfilled
// it, +trigger when it was triggered by hand through the tasks API,
// +replaced when an upsert replaced it, +blocked when a block was
// answered, +kill when a kill
// came within 2 s of its newest run's end.
func (m *model) endTag(e *entity, v jobView) string {
	if len(e.tasksState) > 0 {
		return "+tasks-state"
	}
	if e.multiBackfill {
		return "+multi-backfill"
	}
	if e.triggered {
		return "+trigger"
	}
	if e.replaced {
		return "+replaced"
	}
	if e.blocked {
		return "+blocked"
	}
	if r := newestRun(v); r != nil {
		for _, k := range m.kills {
			end := r.FinishedAt
			if end.IsZero() {
				end = r.FiredAt
			}
			if d := k.Sub(end); d > -2*time.Second && d < 2*time.Second {
				return "+kill"
			}
		}
	}
	return ""
}

// lastEvents describes a job's newest n events and its stops.
func lastEvents(v jobView, n int) string {
	var parts []string
	for _, ev := range v.Events[max(0, len(v.Events)-n):] {
		parts = append(parts, fmt.Sprintf("%s@%s(%s)", ev.State, ev.At.Format("15:04:05.000"), ev.TriggerID))
	}
	return strings.Join(parts, " ")
}

// history describes the stops and resumes the model recorded for e.
func (e *entity) history() string {
	var parts []string
	for _, ev := range e.events {
		parts = append(parts, fmt.Sprintf("%s@%s", ev.kind, ev.at.Format("15:04:05.000")))
	}
	for _, t := range e.tasksState {
		parts = append(parts, "tasks-state@"+t.Format("15:04:05.000"))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " ")
}

// newestRun is a job's run fired last, nil when it has none.
func newestRun(v jobView) *task.Run {
	var out *task.Run
	for _, r := range v.Runs {
		if out == nil || r.FiredAt.After(out.FiredAt) {
			out = r
		}
	}
	return out
}

// checkBackfills: a backfill re-runs a job once per request that accepted
// it, and only after its previous run ended.
func (m *model) checkBackfills(e *entity, v jobView) {
	tag := ""
	if e.multiBackfill {
		tag = "+multi-backfill"
	}
	runs := append([]*task.Run(nil), v.Runs...)
	sort.Slice(runs, func(i, j int) bool { return runs[i].FiredAt.Before(runs[j].FiredAt) })
	n := 0
	for i, r := range runs {
		if r.TriggerType != task.TriggerBackfill {
			continue
		}
		n++
		if i == 0 {
			continue
		}
		p := runs[i-1]
		if !p.State.Final() || (!p.FinishedAt.IsZero() && p.FinishedAt.After(r.FiredAt)) {
			m.violate("backfill-overlap:"+e.kind+tag, e.id, "job %s: backfill run %s fired at %s while run %s was %s (finished %s)",
				e.id, r.TriggerID, r.FiredAt.Format("15:04:05.000"), p.TriggerID, p.State, p.FinishedAt.Format("15:04:05.000"))
		}
	}
	if n > e.backfillReqs {
		m.violate("backfill-per-request:"+e.kind+tag, e.id, "job %s: %d backfill runs for %d accepting requests", e.id, n, e.backfillReqs)
	}
}

// checkRuns: the ledger's runs follow the run state machine: a done run
// was delivered; at most one final report, and a run ended by one is in
// the report's state.
func (m *model) checkRuns(e *entity, v jobView, byTrigger map[string]int) {
	for _, r := range v.Runs {
		if r.State == task.RunDone && byTrigger[r.TriggerID] == 0 {
			m.violate("ledger-done-undelivered:"+e.kind, r.TriggerID, "job %s: run %s is done but never reached the hook", e.id, r.TriggerID)
		}
		m.checkFeedback(r)
	}
}

// checkFeedback checks one run's reports.
func (m *model) checkFeedback(r *task.Run) {
	finals := 0
	var last task.Feedback
	for _, f := range r.Feedback {
		if !f.Progress {
			finals++
			last = f
		}
	}
	if finals > 1 {
		m.violate("ledger-feedback", r.TriggerID, "run %s holds %d final reports", r.TriggerID, finals)
	}
	if finals == 1 {
		if want, _ := last.Outcome(); r.State != want {
			m.violate("ledger-feedback", r.TriggerID, "run %s ended by a report of status %d is %s, want %s", r.TriggerID, last.Status, r.State, want)
		}
	}
}

// checkFeedbackRuns reads every run the model posted a final report for
// and checks its reports.
func (m *model) checkFeedbackRuns() {
	for id := range m.fbFinal {
		a := m.call("GET", "/api/v1/runs/"+url.PathEscape(id), nil)
		var r task.Run
		if a.status == 200 && jsonInto(a.body, &r) {
			m.checkFeedback(&r)
		}
	}
}

// checkDeadList: the dead list (GET /api/v1/jobs?state=dead) holds exactly
// the jobs whose state reads dead.
func (m *model) checkDeadList(dead map[string]bool, views map[string]jobView) {
	listed := map[string]bool{}
	cursor := ""
	for range 100 {
		a := m.call("GET", "/api/v1/jobs?state=dead&limit=1000&cursor="+url.QueryEscape(cursor), nil)
		var page struct {
			Jobs []jobView `json:"jobs"`
			Next string    `json:"next"`
		}
		if a.status != 200 || !jsonInto(a.body, &page) {
			m.violate("dead-list", "read", "GET dead list → %d %s", a.status, trim(a.body))
			return
		}
		for _, j := range page.Jobs {
			listed[j.ID] = true
		}
		if page.Next == "" {
			break
		}
		cursor = page.Next
	}
	for id := range dead {
		if !listed[id] {
			runState := "none"
			if r := newestRun(views[id]); r != nil {
				runState = string(r.State)
			}
			m.violate("dead-list:"+kindOf(m.ents[id])+":run-"+runState, id,
				"job %s reads dead (its newest run is %s) but the dead list misses it", id, runState)
		}
	}
	for id := range listed {
		if !dead[id] && m.ents[id] != nil {
			m.violate("dead-list:"+kindOf(m.ents[id]), id, "the dead list holds job %s, which does not read dead", id)
		}
	}
}

// describe is a violation as a line of the report.
func (v violation) describe() string {
	return fmt.Sprintf("[%s] at op %d: %s", v.check, v.op, v.detail)
}
