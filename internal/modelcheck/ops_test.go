package modelcheck

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"cronsheet/task"
)

// operation is one kind of step the model takes, with its weight.
type operation struct {
	name   string
	weight int
	run    func(m *model)
}

// operations are every step the model draws from; kills are scheduled
// apart (see run).
var operations = []operation{
	{"create-row", 6, (*model).createRow},
	{"edit-row", 3, (*model).editRow},
	{"switch-off", 4, (*model).switchOff},
	{"switch-on", 4, (*model).switchOn},
	{"delete-row", 2, (*model).deleteRow},
	{"row-state", 3, (*model).rowState},
	{"trigger", 4, (*model).trigger},
	{"create-job", 12, (*model).createJob},
	{"create-batch", 3, (*model).createBatch},
	{"create-cron-job", 2, (*model).createCronJob},
	{"cancel-job", 8, (*model).cancelJob},
	{"block-job", 5, (*model).blockJob},
	{"unblock-job", 4, (*model).unblockJob},
	{"upsert-job", 5, (*model).upsertJob},
	{"backfill", 4, (*model).backfill},
	{"backfill-dup-ids", 2, (*model).backfillDup},
	{"backfill-parallel", 2, (*model).backfillParallel},
	{"job-state", 2, (*model).jobState},
	{"feedback", 7, (*model).feedback},
	{"sleep", 8, (*model).sleep},
}

// Bounds on what lives at once, so that deliveries stay countable.
const (
	maxLiveRows = 8
	maxLiveCron = 3
)

func (m *model) hookURL(path string) string { return m.hook.srv.URL + path }

func (m *model) liveRows() []*entity {
	var out []*entity
	for _, e := range m.rows {
		if !e.deleted {
			out = append(out, e)
		}
	}
	return out
}

func (m *model) createRow() {
	if len(m.liveRows()) >= maxLiveRows {
		m.editRow()
		return
	}
	overlap := []string{"allow", "skip", "queue"}[m.rng.IntN(3)]
	target := []string{"hook", "fb", "slow"}[m.rng.IntN(3)]
	when := []string{"every 1s", "every 2s"}[m.rng.IntN(2)]
	a := m.call("POST", "/api/v1/scenarios/memos/rows", map[string]any{"title": fmt.Sprintf("r%d", m.op),
		"content": "tick", "when": when, "targets": target, "overlap": overlap})
	var row task.Row
	if a.status == http.StatusCreated && json.Unmarshal(a.body, &row) == nil {
		m.addEntity(&entity{id: row.ID, kind: "row/" + overlap, row: true})
	}
	m.logf("create row %s %s → %s overlap %s → %d %s", when, target, row.ID, overlap, a.status, row.ID)
}

func (m *model) editRow() {
	e, ok := pick(m.rng, m.liveRows())
	if !ok {
		return
	}
	when := []string{"every 1s", "every 2s", "every 3s"}[m.rng.IntN(3)]
	a := m.call("PATCH", "/api/v1/scenarios/memos/rows/"+e.id, map[string]any{"when": when, "content": fmt.Sprintf("edit %d", m.op)})
	m.logf("edit row %s when %s → %d", e.id, when, a.status)
}

func (m *model) switchOff() {
	e, ok := pick(m.rng, m.liveRows())
	if !ok {
		return
	}
	a := m.call("PATCH", "/api/v1/scenarios/memos/rows/"+e.id, map[string]any{"active": 0})
	m.stopped(e, a, "switch-off")
	m.logf("switch off row %s → %d", e.id, a.status)
}

func (m *model) switchOn() {
	e, ok := pick(m.rng, m.liveRows())
	if !ok {
		return
	}
	a := m.call("PATCH", "/api/v1/scenarios/memos/rows/"+e.id, map[string]any{"active": 1})
	m.resumed(e, a, "switch-on")
	m.logf("switch on row %s → %d", e.id, a.status)
}

func (m *model) deleteRow() {
	e, ok := pick(m.rng, m.liveRows())
	if !ok {
		return
	}
	a := m.call("DELETE", "/api/v1/scenarios/memos/rows/"+e.id, nil)
	m.stopped(e, a, "delete")
	e.deleted = a.status/100 == 2
	m.logf("delete row %s → %d", e.id, a.status)
}

// rowState sets a row's task state through the tasks API: closed and
// stopped stop its schedule, running resumes it.
func (m *model) rowState() {
	e, ok := pick(m.rng, m.liveRows())
	if !ok {
		return
	}
	state := []string{"running", "stopped", "closed"}[m.rng.IntN(3)]
	a := m.call("PUT", "/api/v1/tasks/"+e.id+"/state", map[string]any{"state": state})
	if state == "running" {
		m.resumed(e, a, "state-running")
	} else {
		m.stopped(e, a, "state-"+state)
	}
	m.logf("set row %s state %s → %d %s", e.id, state, a.status, trim(a.body))
}

// trigger fires a row or a job by hand; the runs it answers are allowed
// to deliver whatever the entity's state.
func (m *model) trigger() {
	var e *entity
	if m.rng.IntN(2) == 0 {
		e, _ = pick(m.rng, m.liveRows())
	} else {
		e, _ = pick(m.rng, m.jobs)
	}
	if e == nil {
		return
	}
	a := m.call("POST", "/api/v1/tasks/"+e.id+"/trigger", map[string]any{})
	var ans struct {
		Runs []*task.Run `json:"runs"`
	}
	_ = json.Unmarshal(a.body, &ans)
	var ids []string
	for _, r := range ans.Runs {
		m.exempt[r.TriggerID] = true
		ids = append(ids, r.TriggerID)
	}
	if len(ids) > 0 {
		e.resumed, e.triggered = true, true
	}
	m.logf("trigger %s → %d runs %v %s", e.id, a.status, ids, trimErr(a))
}

// trimErr is an answer's body when it is not 2xx.
func trimErr(a answer) string {
	if a.status/100 == 2 {
		return ""
	}
	return trim(a.body)
}

// jobRequest is a random delayed job: to /j/ok (retries 0 or 1) or to
// /j/fail (retries 0: it ends dead after one attempt).
func (m *model) jobRequest() (map[string]any, string) {
	delay := float64(m.rng.IntN(31)) / 10
	if m.rng.IntN(4) == 0 {
		return map[string]any{"method": "POST", "name": m.hookURL("/j/fail"), "delay": delay, "max_retries": 0}, "job/fail"
	}
	return map[string]any{"method": "POST", "name": m.hookURL("/j/ok"), "delay": delay, "max_retries": m.rng.IntN(2)}, "job"
}

func (m *model) createJob() {
	req, kind := m.jobRequest()
	a := m.call("POST", "/api/v1/jobs", req)
	var v jobView
	if a.status == http.StatusCreated && json.Unmarshal(a.body, &v) == nil {
		m.addEntity(&entity{id: v.ID, kind: kind})
	}
	m.logf("create %s delay %.1fs → %d %s", kind, req["delay"], a.status, v.ID)
}

func (m *model) createBatch() {
	n := 2 + m.rng.IntN(4)
	reqs := make([]map[string]any, n)
	kinds := make([]string, n)
	for i := range reqs {
		reqs[i], kinds[i] = m.jobRequest()
	}
	a := m.call("POST", "/api/v1/jobs", reqs)
	var items []struct {
		Job *jobView `json:"job"`
	}
	var ids []string
	if a.status == http.StatusOK && json.Unmarshal(a.body, &items) == nil {
		for i, it := range items {
			if it.Job != nil && i < n {
				m.addEntity(&entity{id: it.Job.ID, kind: kinds[i]})
				ids = append(ids, it.Job.ID)
			}
		}
	}
	m.logf("create batch of %d → %d %v", n, a.status, ids)
}

func (m *model) createCronJob() {
	live := 0
	for _, e := range m.jobs {
		if e.cron && !hasStop(e) {
			live++
		}
	}
	if live >= maxLiveCron {
		m.createJob()
		return
	}
	overlap := []string{"allow", "skip", "queue"}[m.rng.IntN(3)]
	path := []string{"/j/cron", "/j/cron/slow"}[m.rng.IntN(2)]
	a := m.call("POST", "/api/v1/jobs", map[string]any{"method": "POST", "name": m.hookURL(path), "cron": "every 1s",
		"overlap": overlap, "max_retries": 0})
	var v jobView
	if a.status == http.StatusCreated && json.Unmarshal(a.body, &v) == nil {
		m.addEntity(&entity{id: v.ID, kind: "cron-job/" + overlap, cron: true})
	}
	m.logf("create cron job every 1s %s overlap %s → %d %s %s", path, overlap, a.status, v.ID, trimErr(a))
}

// hasStop reports whether e's latest stop event is a stop.
func hasStop(e *entity) bool {
	return len(e.events) > 0 && e.events[len(e.events)-1].stop
}

func (m *model) cancelJob() {
	e, ok := pick(m.rng, m.jobs)
	if !ok {
		return
	}
	a := m.call("DELETE", "/api/v1/jobs/"+e.id, nil)
	m.stopped(e, a, "cancel")
	m.logf("cancel job %s → %d %s", e.id, a.status, trimErr(a))
}

func (m *model) blockJob() {
	e, ok := pick(m.rng, m.jobs)
	if !ok {
		return
	}
	a := m.call("POST", "/api/v1/jobs/"+e.id+"/block", nil)
	m.stopped(e, a, "block")
	e.blocked = e.blocked || a.status == http.StatusOK
	m.logf("block job %s → %d %s", e.id, a.status, trimErr(a))
}

func (m *model) unblockJob() {
	e, ok := pick(m.rng, m.jobs)
	if !ok {
		return
	}
	m.unblock(e)
}

func (m *model) unblock(e *entity) {
	a := m.call("POST", "/api/v1/jobs/"+e.id+"/unblock", nil)
	m.resumed(e, a, "unblock")
	if a.status == http.StatusOK && e.blocked && !strings.HasPrefix(e.kind, "cron") {
		// A delayed job whose slot its block held fires at once when
		// unblocked, under a slot of its own; once the patrol has marked
		// the job done (its one slot is the block's), that run's trigger
		// type is backfill. It may run once more than its backfills.
		e.backfillReqs++
	}
	m.logf("unblock job %s → %d %s", e.id, a.status, trimErr(a))
}

// upsertJob puts a job under one of a few keys: a pending job under the
// key is replaced (the model checks at the end that a job that reads
// cancelled was never delivered).
func (m *model) upsertJob() {
	key := fmt.Sprintf("k%d", m.rng.IntN(4))
	req, kind := m.jobRequest()
	a := m.call("PUT", "/api/v1/jobs/by-key/"+key, req)
	var v jobView
	if a.status/100 == 2 && json.Unmarshal(a.body, &v) == nil && m.ents[v.ID] == nil {
		m.addEntity(&entity{id: v.ID, kind: kind})
	}
	m.logf("upsert %s key %s (was %s) → %d %s %s", kind, key, m.keys[key], a.status, v.ID, trimErr(a))
	if old := m.ents[m.keys[key]]; old != nil && v.ID != "" && v.ID != old.id {
		old.replaced = true
	}
	if v.ID != "" {
		m.keys[key] = v.ID
	}
}

// backfillAnswer is the part of a backfill's answer the model reads.
type backfillAnswer struct {
	Accepted []string `json:"accepted"`
}

// backfillCall backfills ids and records, for each job it accepted, a
// resume and one accepting request.
func (m *model) backfillCall(ids []string, a answer) []string {
	var ans backfillAnswer
	_ = json.Unmarshal(a.body, &ans)
	seen := map[string]bool{}
	for _, id := range ans.Accepted {
		if e := m.ents[id]; e != nil && !seen[id] {
			seen[id] = true
			e.backfillReqs++
			e.resumed = true
			m.resumed(e, a, "backfill")
		}
	}
	return ans.Accepted
}

func (m *model) backfill() {
	n := 1 + m.rng.IntN(3)
	var ids []string
	for range n {
		if e, ok := pick(m.rng, m.jobs); ok {
			ids = append(ids, e.id)
		}
	}
	if len(ids) == 0 {
		return
	}
	for i, id := range ids {
		if slices.Contains(ids[:i], id) {
			m.ents[id].multiBackfill = true // named twice in one request
		}
	}
	a := m.call("POST", "/api/v1/jobs/backfill", map[string]any{"ids": ids})
	acc := m.backfillCall(ids, a)
	m.logf("backfill %v → %d accepted %v", ids, a.status, acc)
}

// backfillDup backfills one job named twice in one request.
func (m *model) backfillDup() {
	e, ok := pick(m.rng, m.jobs)
	if !ok {
		return
	}
	ids := []string{e.id, e.id}
	e.multiBackfill = true
	a := m.call("POST", "/api/v1/jobs/backfill", map[string]any{"ids": ids})
	acc := m.backfillCall(ids, a)
	m.logf("backfill %v → %d accepted %v", ids, a.status, acc)
}

// backfillParallel backfills one job by several requests at once.
func (m *model) backfillParallel() {
	e, ok := pick(m.rng, m.jobs)
	if !ok {
		return
	}
	n := 3 + m.rng.IntN(8)
	e.multiBackfill = true
	path := "/api/v1/jobs/backfill"
	answers := m.parallel(n, func(int) answer {
		return m.rawCall("POST", path, map[string]any{"ids": []string{e.id}})
	})
	accepted := 0
	for _, a := range answers {
		m.account("POST", path, a)
		if len(m.backfillCall([]string{e.id}, a)) > 0 {
			accepted++
		}
	}
	m.logf("backfill %s by %d parallel requests → %d accepted", e.id, n, accepted)
}

// jobState sets a job's task state through the tasks API. The model
// expects the jobs rules to hold whatever it answers: it neither stops
// nor resumes the job.
func (m *model) jobState() {
	e, ok := pick(m.rng, m.jobs)
	if !ok {
		return
	}
	state := []string{"running", "stopped", "closed"}[m.rng.IntN(3)]
	a := m.call("PUT", "/api/v1/tasks/"+e.id+"/state", map[string]any{"state": state})
	if a.status/100 == 2 {
		e.tasksState = append(e.tasksState, a.recv)
	}
	m.logf("set job %s state %s → %d %s", e.id, state, a.status, trimErr(a))
}

// feedback posts a report on a run delivered to the feedback target:
// early (right after its delivery), twice, or late (after its deadline).
func (m *model) feedback() {
	m.drainHook()
	var fb []delivery
	for _, d := range m.deliveries {
		if strings.HasPrefix(d.Path, "/fb/") {
			fb = append(fb, d)
		}
	}
	if len(fb) == 0 {
		return
	}
	d := fb[len(fb)-1-m.rng.IntN(min(len(fb), 10))] // among the newest: early
	mode := []string{"early", "twice", "late"}[m.rng.IntN(3)]
	if mode == "late" {
		d = fb[m.rng.IntN(len(fb))]
		r := m.call("GET", "/api/v1/runs/"+url.PathEscape(d.TriggerID), nil)
		var run task.Run
		if r.status == http.StatusOK && json.Unmarshal(r.body, &run) == nil && run.State.Final() {
			m.sawFinal(run.TriggerID, r.recv)
		}
	}
	times := 1
	if mode == "twice" {
		times = 2
	}
	var got []int
	for range times {
		status := []int{0, 0, 1}[m.rng.IntN(3)]
		progress := m.rng.IntN(5) == 0
		m.postFeedback(d.TriggerID, status, progress)
		got = append(got, status)
	}
	m.logf("feedback %s %s statuses %v", mode, d.TriggerID, got)
}

// postFeedback posts one report and checks the answer against what the
// model knows: no final report is accepted after a final one, nor after
// the API showed the run final.
func (m *model) postFeedback(id string, status int, progress bool) {
	a := m.call("POST", "/api/v1/runs/"+url.PathEscape(id)+"/feedback", map[string]any{"status": status, "progress": progress})
	m.feedbackAnswer(id, status, progress, a)
}

// feedbackAnswer checks the answer to a report.
func (m *model) feedbackAnswer(id string, status int, progress bool, a answer) {
	if a.status != http.StatusOK {
		return
	}
	if !progress {
		if m.fbFinal[id] {
			m.violate("feedback-after-final", id, "run %s took a second final report (status %d)", id, status)
		} else if at, ok := m.final[id]; ok && at.Before(a.sent) {
			m.violate("feedback-after-final", id, "run %s took a final report after the API showed it final at %s",
				id, at.Format("15:04:05.000"))
		}
		m.fbFinal[id] = true
		m.stats.finalReports++
	}
	var run task.Run
	if json.Unmarshal(a.body, &run) == nil && run.State.Final() {
		m.sawFinal(id, a.recv)
	}
}

func (m *model) sleep() {
	d := time.Duration(100+m.rng.IntN(1400)) * time.Millisecond
	time.Sleep(d)
	m.logf("sleep %s", d)
}

// killRestart kills the node with SIGKILL, leaves it down a while, and
// starts it again.
func (m *model) killRestart() {
	m.node.kill()
	m.stats.addFaults(m.node.faultsInjected())
	at := time.Now()
	m.kills = append(m.kills, at)
	m.stats.kills++
	down := time.Duration(m.rng.IntN(1500)) * time.Millisecond
	time.Sleep(down)
	m.node.start(m.t)
	m.logf("kill -9, down %s, restarted", down)
}
