package modelcheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"cronsheet/task"
)

// inFlightGrace is how long after a stop was answered a delivery may still
// arrive at the hook and count as in flight: the node may have sent it
// just before it answered, and on a loaded machine the request can reach
// the hook after the answer reached the client.
const inFlightGrace = 250 * time.Millisecond

// stopEvent is a change of an entity's permission to deliver: a stop
// (cancel, block, switch-off, delete, state closed or stopped) from the
// moment its answer was received, or a resume (unblock, backfill,
// switch-on, state running) from the moment its request was sent.
type stopEvent struct {
	at   time.Time
	stop bool
	kind string
}

// entity is a row or a job the model created.
type entity struct {
	id   string
	kind string // row/<overlap>, job, job/fail, cron-job/<overlap>
	cron bool   // a cron job
	row  bool
	// events are the entity's stops and resumes, in the order they happened.
	events []stopEvent
	// tasksState are the times a PUT /api/v1/tasks/:id/state was answered
	// for it (jobs: the tasks API is not a way around the jobs rules).
	tasksState []time.Time
	// resumed: backfilled or triggered by hand, so a cancelled final state
	// may follow deliveries.
	resumed bool
	// triggered: a manual trigger answered runs for it.
	triggered bool
	// multiBackfill: one request named it twice, or several requests at
	// once backfilled it.
	multiBackfill bool
	// replaced: an upsert put another job under its key.
	replaced bool
	// blocked: a block of it was answered 200.
	blocked bool
	// backfillReqs counts the backfill requests that accepted it.
	backfillReqs int
	// deleted: a row whose delete was answered; no step picks it again.
	deleted bool
}

// opRecord is one line of the operation log.
type opRecord struct {
	n    int
	at   time.Duration
	desc string
}

// model is one seed's run: the node, the hook, what was created, what the
// API answered, and the violations found.
type model struct {
	t      *testing.T
	seed   uint64
	rng    *rand.Rand
	node   *node
	hook   *hook
	client *http.Client
	began  time.Time

	ents    map[string]*entity
	rows    []*entity
	jobs    []*entity
	keys    map[string]string // upsert key → its current job id
	exempt  map[string]bool   // trigger ids a manual trigger answered: allowed anywhere
	kills   []time.Time
	fbFinal map[string]bool      // trigger ids a final feedback was accepted for
	final   map[string]time.Time // trigger id → when the API first showed it final

	log        []opRecord
	op         int
	nOps       int
	violations []violation
	seen       map[string]bool

	deliveries []delivery
	hookNext   int
	stats      stats
}

// violation is one broken invariant, named by its check.
type violation struct {
	check  string
	op     int
	detail string
}

// stats are a run's figures.
type stats struct {
	ops, kills, deliveries, requests int
	// rowDeliveries and jobDeliveries split deliveries by what sent them;
	// finalReports counts the final feedback reports the API accepted.
	rowDeliveries, jobDeliveries, finalReports int
	// faults counts the store faults injected (a run with faults on),
	// by mode (before, after).
	faults  map[string]int
	byCheck map[string]int
}

// addFaults adds a process's fault counts, by mode, to s.
func (s *stats) addFaults(by map[string]int) {
	for mode, n := range by {
		if s.faults == nil {
			s.faults = map[string]int{}
		}
		s.faults[mode] += n
	}
}

// add sums o into s.
func (s *stats) add(o stats) {
	s.ops += o.ops
	s.kills += o.kills
	s.deliveries += o.deliveries
	s.requests += o.requests
	s.rowDeliveries += o.rowDeliveries
	s.jobDeliveries += o.jobDeliveries
	s.finalReports += o.finalReports
	s.addFaults(o.faults)
	for c, n := range o.byCheck {
		s.byCheck[c] += n
	}
}

// String is the figures as one line.
func (s stats) String() string {
	return fmt.Sprintf("%d operations, %d API requests, %d kills, %d deliveries (%d of rows, %d of jobs), "+
		"%d final feedback reports accepted, store faults injected: %s, violations by check: %s", s.ops, s.requests,
		s.kills, s.deliveries, s.rowDeliveries, s.jobDeliveries, s.finalReports, formatChecks(s.faults), formatChecks(s.byCheck))
}

func newModel(t *testing.T, seed uint64) *model {
	return &model{t: t, seed: seed, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		client: &http.Client{Timeout: 30 * time.Second}, ents: map[string]*entity{}, keys: map[string]string{},
		exempt: map[string]bool{}, fbFinal: map[string]bool{}, final: map[string]time.Time{}, seen: map[string]bool{},
		stats: stats{byCheck: map[string]int{}}}
}

// logf appends a line to the operation log.
func (m *model) logf(format string, args ...any) {
	m.log = append(m.log, opRecord{n: m.op, at: time.Since(m.began), desc: fmt.Sprintf(format, args...)})
}

// violate records a violation once per dedup key.
func (m *model) violate(check, dedup, format string, args ...any) {
	if m.seen[check+"|"+dedup] {
		return
	}
	m.seen[check+"|"+dedup] = true
	m.stats.byCheck[check]++
	m.violations = append(m.violations, violation{check: check, op: m.op, detail: fmt.Sprintf(format, args...)})
}

// answer is one API answer: status (0 when the call failed), body, and
// when it was sent and received.
type answer struct {
	status     int
	body       []byte
	sent, recv time.Time
	err        error
}

// call makes one API call and accounts for it.
func (m *model) call(method, path string, body any) answer {
	return m.account(method, path, m.rawCall(method, path, body))
}

// rawCall makes one API call and touches nothing of the model's: the
// parallel operations make theirs with it, then account for each.
func (m *model) rawCall(method, path string, body any) answer {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			panic(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, m.node.base()+path, rd)
	if err != nil {
		panic(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	a := answer{sent: time.Now()}
	resp, err := m.client.Do(req)
	if err != nil {
		a.recv, a.err = time.Now(), err
		return a
	}
	a.body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	a.recv, a.status = time.Now(), resp.StatusCode
	return a
}

// account counts a call; a 5xx or a failed call (the node runs while
// operations are made) is a violation of check http-5xx.
func (m *model) account(method, path string, a answer) answer {
	m.stats.requests++
	switch {
	case a.err != nil:
		m.violate("http-5xx", fmt.Sprintf("%d", m.op), "%s %s: %v", method, path, a.err)
	case a.status >= 500:
		m.violate("http-5xx", fmt.Sprintf("%d", m.op), "%s %s → %d %s", method, path, a.status, trim(a.body))
	}
	return a
}

func trim(b []byte) string {
	s := strings.TrimSpace(string(b))
	if len(s) > 160 {
		s = s[:160] + "…"
	}
	return s
}

// jobView is the part of a job's view the model reads.
type jobView struct {
	ID     string      `json:"id"`
	State  string      `json:"state"`
	Runs   []*task.Run `json:"runs"`
	Events []struct {
		State     string    `json:"state"`
		TriggerID string    `json:"trigger_id"`
		At        time.Time `json:"at"`
	} `json:"events"`
}

// getJob reads a job; ok false when it could not be read.
func (m *model) getJob(id string) (jobView, bool) {
	a := m.call("GET", "/api/v1/jobs/"+id, nil)
	var v jobView
	if a.status != http.StatusOK || json.Unmarshal(a.body, &v) != nil {
		return v, false
	}
	for _, r := range v.Runs {
		if r.State.Final() {
			m.sawFinal(r.TriggerID, a.recv)
		}
	}
	return v, true
}

// sawFinal records that the API showed run id final at t.
func (m *model) sawFinal(id string, t time.Time) {
	if _, ok := m.final[id]; !ok {
		m.final[id] = t
	}
}

// pick returns a random element of s, nil when s is empty.
func pick[T any](r *rand.Rand, s []T) (T, bool) {
	var zero T
	if len(s) == 0 {
		return zero, false
	}
	return s[r.IntN(len(s))], true
}

// addEntity records a created row or job.
func (m *model) addEntity(e *entity) {
	m.ents[e.id] = e
	if e.row {
		m.rows = append(m.rows, e)
	} else {
		m.jobs = append(m.jobs, e)
	}
}

// stopped records a stop answered at a.recv when the answer is 2xx.
func (m *model) stopped(e *entity, a answer, kind string) {
	if a.status/100 == 2 {
		e.events = append(e.events, stopEvent{at: a.recv, stop: true, kind: kind})
	}
}

// resumed records a resume sent at a.sent when the answer is 2xx.
func (m *model) resumed(e *entity, a answer, kind string) {
	if a.status/100 == 2 {
		e.events = append(e.events, stopEvent{at: a.sent, kind: kind})
	}
}

// parallel runs n calls at once and returns their answers.
func (m *model) parallel(n int, fn func(i int) answer) []answer {
	out := make([]answer, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { out[i] = fn(i) })
	}
	wg.Wait()
	return out
}
