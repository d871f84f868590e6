package fire_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"cronsheet/executors"
	"cronsheet/fire"
	"cronsheet/store"
	"cronsheet/task"
)

// errInjected is the error a faultStore answers with.
var errInjected = errors.New("injected store error")

// fault says how a faultStore's method fails: the next before calls fail
// without writing, the next after calls write (the real method commits)
// and then fail (the outcome unknown), and every call fails without
// writing while failing is set.
type fault struct {
	mu            sync.Mutex
	before, after int
	failing       bool
	failed        int // calls failed so far
}

// take says how the next call goes: fail before writing, or write and
// then fail (neither: a plain call).
func (f *fault) take() (before, after bool) {
	if f == nil {
		return false, false
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case f.failing || f.before > 0:
		f.before = max(f.before-1, 0)
		f.failed++
		return true, false
	case f.after > 0:
		f.after--
		f.failed++
		return false, true
	}
	return false, false
}

func (f *fault) failures() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.failed
}

func (f *fault) setFailing(on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failing = on
}

// faultStore is the test's store with AcceptRun, FinishRun, UpdateRun and
// RecordFires failing as their faults say (nil: never). It embeds fire.Store only, so
// the Firer over it writes each run alone (no group commit).
type faultStore struct {
	fire.Store
	accept, finish, update, record *fault
}

func (s *faultStore) RecordFires(ctx context.Context, recs []store.FireRecord) ([]store.FireResult, error) {
	before, after := s.record.take()
	if before {
		return nil, errInjected
	}
	res, err := s.Store.RecordFires(ctx, recs)
	if after && err == nil {
		return nil, errInjected
	}
	return res, err
}

func (s *faultStore) AcceptRun(ctx context.Context, r *task.Run, status store.TaskStatusParams) (bool, error) {
	before, after := s.accept.take()
	if before {
		return false, errInjected
	}
	ok, err := s.Store.AcceptRun(ctx, r, status)
	if after && err == nil {
		return false, errInjected
	}
	return ok, err
}

func (s *faultStore) FinishRun(ctx context.Context, r *task.Run, status store.TaskStatusParams) error {
	before, after := s.finish.take()
	if before {
		return errInjected
	}
	err := s.Store.FinishRun(ctx, r, status)
	if after && err == nil {
		return errInjected
	}
	return err
}

func (s *faultStore) UpdateRun(ctx context.Context, r *task.Run) error {
	before, after := s.update.take()
	if before {
		return errInjected
	}
	err := s.Store.UpdateRun(ctx, r)
	if after && err == nil {
		return errInjected
	}
	return err
}

// receiver is an HTTP endpoint that counts the calls it receives per
// X-Cronsheet-Trigger-Id. While hold is open a call waits for it (or for
// its client to go).
type receiver struct {
	srv     *httptest.Server
	started chan string
	mu      sync.Mutex
	calls   map[string]int
	n       int // calls in all
	hold    chan struct{}
	status  func(n int) int // the answer's status for the n-th call (nil: 200)
}

func newReceiver(t *testing.T) *receiver {
	t.Helper()
	rc := &receiver{started: make(chan string, 64), calls: map[string]int{}}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		id := r.Header.Get(executors.HeaderTriggerID)
		rc.mu.Lock()
		rc.calls[id]++
		rc.n++
		n, hold, status := rc.n, rc.hold, rc.status
		rc.mu.Unlock()
		rc.started <- id
		if hold != nil {
			select {
			case <-hold:
			case <-r.Context().Done():
			}
		}
		if status != nil {
			w.WriteHeader(status(n))
		}
		_, _ = io.WriteString(w, "ok")
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

// received returns how many calls carried trigger id id.
func (rc *receiver) received(id string) int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.calls[id]
}

// total returns how many calls the receiver got.
func (rc *receiver) total() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.n
}

// awaitCall waits for the receiver's next call and returns its trigger id.
func (rc *receiver) awaitCall(t *testing.T) string {
	t.Helper()
	select {
	case id := <-rc.started:
		return id
	case <-time.After(30 * time.Second):
		t.Fatal("gave up waiting for a call at the receiver")
		return ""
	}
}

// faultBundle is a test bundle whose Firer delivers to a receiver through
// the real HTTP executor, over a faultStore, with its observers recorded.
type faultBundle struct {
	*testBundle
	rc     *receiver
	faults *faultStore
	seen   *observed
	firer  *fire.Firer
	target *task.Target
}

// setupFaults returns a faultBundle on the test driver whose target
// (id "hook") asks for feedback within feedback seconds (0: none), and
// whose Firer retries a write no delivered call waits on for persistFor
// (0: the default).
func setupFaults(t *testing.T, feedback int, persistFor time.Duration) *faultBundle {
	t.Helper()
	b := setupDriver(t)
	h, err := executors.NewHTTP(nil, executors.HTTPConfig{Allow: []string{"127.0.0.1"}})
	if err != nil {
		t.Fatalf("NewHTTP: %v", err)
	}
	t.Cleanup(h.Close)
	b.execs.Register(task.ChannelHTTP, h)
	fb := &faultBundle{testBundle: b, rc: newReceiver(t), faults: &faultStore{Store: b.store}, seen: &observed{states: map[string][]task.RunState{}}}
	fb.target = &task.Target{ID: "hook", Kind: task.ChannelHTTP, State: task.TargetRunning, FeedbackTimeout: feedback,
		HTTP: &task.HTTPTarget{Method: http.MethodPost, URL: fb.rc.srv.URL + "/hook"}}
	if err := b.store.CreateTarget(t.Context(), fb.target); err != nil {
		t.Fatalf("CreateTarget: %v", err)
	}
	fb.firer = fire.New(slog.New(slog.DiscardHandler), fire.Config{
		Node: node, BackoffBase: time.Millisecond, BackoffMax: 5 * time.Millisecond, PersistFor: persistFor,
		OnRun: fb.seen.onRun, OnFire: fb.seen.onFire,
	}, fb.faults, b.execs, nil)
	t.Cleanup(func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_ = fb.firer.Shutdown(ctx)
	})
	return fb
}

// hookTask returns an every-10s task delivered to the bundle's target.
func hookTask(id string) *task.Task { return taskWithTargets(id, "hook") }

// rescueLater has a live peer, whose clock is an hour ahead (every attempt
// deadline passed, its grace too), rescue the stranded runs and waits for
// its deliveries: a run left running is taken over and delivered again.
func (fb *faultBundle) rescueLater(t *testing.T) {
	t.Helper()
	peers := func() fire.Peers { return fire.Peers{Live: []string{node, "node-b"}} }
	later := func() time.Time { return time.Now().Add(time.Hour) }
	rescuer := fb.peerFirer(t, "node-b", peers, time.Nanosecond, later)
	if _, err := rescuer.Rescue(t.Context(), 100); err != nil {
		t.Fatalf("Rescue: %v", err)
	}
	shutdown(t, rescuer)
}

// checkOnce checks that the receiver got exactly one call, for the run
// of id's slot k, once a peer has rescued whatever was left running.
func (fb *faultBundle) checkOnce(t *testing.T, id string, k int) {
	t.Helper()
	fb.rescueLater(t)
	r := fb.run(t, id, slot(k))
	if n, all := fb.rc.received(r.TriggerID), fb.rc.total(); n != 1 || all != 1 {
		t.Errorf("receiver got %d calls for %s (%d in all), want 1", n, r.TriggerID, all)
	}
}

// count returns how many times the observers were told of state for id.
func count(states []task.RunState, state task.RunState) int {
	n := 0
	for _, s := range states {
		if s == state {
			n++
		}
	}
	return n
}

// TestAcceptRetried: a target's acceptance is written
// under the same retry policy as an outcome, and a retry of a write that
// committed though the store reported an error is recognised as stored.
// Either way the run ends accepted with its feedback deadline, the
// observers are told once, and no rescuer delivers the slot again.
func TestAcceptRetried(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		fault *fault
	}{
		{"StoreFailsBeforeWriting", &fault{before: 1}},
		{"CommittedButReportedFailure", &fault{after: 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			fb := setupFaults(t, 3600, 0)
			fb.faults.accept = c.fault
			armed := fb.add(t, hookTask("accepting"), node)
			fb.fire(t, fb.firer, armed, slot(1))
			fb.rc.awaitCall(t)
			shutdown(t, fb.firer) // waits for the delivery, its writes included
			if n := c.fault.failures(); n != 1 {
				t.Fatalf("AcceptRun failed %d times, want 1", n)
			}
			r := fb.run(t, "accepting", slot(1))
			if r.State != task.RunAccepted || r.Deadline.Before(time.Now().Add(30*time.Minute)) {
				t.Errorf("run = %s, deadline %v; want accepted, its feedback deadline an hour on", r.State, r.Deadline)
			}
			if n := count(fb.seen.of(r.TriggerID), task.RunAccepted); n != 1 {
				t.Errorf("observers told of the acceptance %d times, want 1", n)
			}
			fb.checkOnce(t, "accepting", 1)
		})
	}
}

// TestAcceptAfterTaskPurged: a run whose task is purged
// while its call is out is still stored accepted (without the task's
// status) with its feedback deadline, as finish stores an outcome.
func TestAcceptAfterTaskPurged(t *testing.T) {
	t.Parallel()
	fb := setupFaults(t, 3600, 0)
	hold := make(chan struct{})
	fb.rc.hold = hold
	armed := fb.add(t, hookTask("purged"), node)
	fb.fire(t, fb.firer, armed, slot(1))
	fb.rc.awaitCall(t)
	ctx := t.Context()
	if err := fb.store.DeleteRow(ctx, scenario, "purged"); err != nil {
		t.Fatal(err)
	}
	if err := fb.store.ReleaseTask(ctx, "purged", node); err != nil {
		t.Fatal(err)
	}
	if n, err := fb.store.PurgeDeleted(ctx); err != nil || n != 1 {
		t.Fatalf("PurgeDeleted = %d, %v", n, err)
	}
	close(hold)
	shutdown(t, fb.firer)
	r := fb.run(t, "purged", slot(1))
	if r.State != task.RunAccepted || r.Deadline.Before(time.Now().Add(30*time.Minute)) {
		t.Errorf("run whose task was purged during the call = %s, deadline %v; want accepted with its feedback deadline",
			r.State, r.Deadline)
	}
	if n := count(fb.seen.of(r.TriggerID), task.RunAccepted); n != 1 {
		t.Errorf("observers told of the acceptance %d times, want 1", n)
	}
}

// TestOutcomeOutlastsPersistFor: the outcome
// of a delivered call is retried past Config.PersistFor while the store
// fails, and stored when it comes back; a run left running would be
// delivered again by the rescuer.
func TestOutcomeOutlastsPersistFor(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name     string
		feedback int
		want     task.RunState
		fault    func(fs *faultStore) *fault
	}{
		{"Done", 0, task.RunDone, func(fs *faultStore) *fault { fs.finish = &fault{failing: true}; return fs.finish }},
		{"Accepted", 3600, task.RunAccepted, func(fs *faultStore) *fault { fs.accept = &fault{failing: true}; return fs.accept }},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			fb := setupFaults(t, c.feedback, time.Millisecond)
			flt := c.fault(fb.faults)
			armed := fb.add(t, hookTask("outage"), node)
			fb.fire(t, fb.firer, armed, slot(1))
			fb.rc.awaitCall(t)
			// Three failed tries span more than PersistFor; a delivery that
			// gave up earlier is no longer busy.
			eventually(t, "three failed tries, or the delivery's end", func() bool {
				return flt.failures() >= 3 || !fb.firer.Busy("outage")
			})
			flt.setFailing(false)
			shutdown(t, fb.firer)
			if n := flt.failures(); n < 3 {
				t.Errorf("the outcome was tried %d times before the delivery gave up, want retries until stored", n)
			}
			if r := fb.run(t, "outage", slot(1)); r.State != c.want {
				t.Errorf("run = %s after the store came back, want %s", r.State, c.want)
			}
			fb.checkOnce(t, "outage", 1)
		})
	}
}

// TestOutcomeRetryAfterCommit: a
// retry of an outcome whose write committed though the store reported an
// error (the outcome unknown) is stored again, not refused: UpdateRun and
// FinishRun never move the run's fence. A failed attempt's record and the
// final answer each committed then "failed" once: the run is done after
// two calls (the failure, its retry), the observers told of each state
// once.
func TestOutcomeRetryAfterCommit(t *testing.T) {
	t.Parallel()
	fb := setupFaults(t, 0, 0)
	fb.faults.finish, fb.faults.update = &fault{after: 1}, &fault{after: 1}
	fb.rc.status = func(n int) int {
		if n == 1 {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	}
	armed := fb.add(t, hookTask("unknown"), node)
	fb.fire(t, fb.firer, armed, slot(1))
	r := fb.finalRun(t, "unknown", slot(1))
	shutdown(t, fb.firer)
	if r.State != task.RunDone || r.Attempt != 2 {
		t.Errorf("run = %s at attempt %d, want done at attempt 2", r.State, r.Attempt)
	}
	if f, u := fb.faults.finish.failures(), fb.faults.update.failures(); f != 1 || u != 1 {
		t.Fatalf("faults injected: FinishRun %d, UpdateRun %d; want 1 each", f, u)
	}
	states := fb.seen.of(r.TriggerID)
	if count(states, task.RunFailed) != 1 || count(states, task.RunDone) != 1 {
		t.Errorf("observers told %v, want failed and done once each", states)
	}
	fb.rescueLater(t)
	if n := fb.rc.received(r.TriggerID); n != 2 {
		t.Errorf("receiver got %d calls for %s, want 2 (the failed one and its retry)", n, r.TriggerID)
	}
}

// TestOutcomeLostOnlyAtShutdownDeadline: an outcome the store keeps
// failing is retried until Shutdown's deadline, which ends the retries
// (Shutdown does not hang on it); the run stays running, owned here, and
// this node id's next process resumes it and delivers it again with the
// same trigger id (the duplicate a kill -9 during the call makes too).
func TestOutcomeLostOnlyAtShutdownDeadline(t *testing.T) {
	t.Parallel()
	fb := setupFaults(t, 0, time.Millisecond)
	fb.faults.finish = &fault{failing: true}
	armed := fb.add(t, hookTask("lost"), node)
	fb.fire(t, fb.firer, armed, slot(1))
	id := fb.rc.awaitCall(t)
	eventually(t, "two failed tries of the outcome", func() bool { return fb.faults.finish.failures() >= 2 })
	ctx, cancel := context.WithCancel(t.Context())
	cancel() // the deadline has passed
	if err := fb.firer.Shutdown(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Shutdown = %v, want its context's error", err)
	}
	if r := fb.run(t, "lost", slot(1)); r.State != task.RunRunning || r.Node != node {
		t.Fatalf("run after the shutdown = %s owned by %s, want running, owned here", r.State, r.Node)
	}
	restarted := fb.firerOf(t, node, func() []string { return []string{node} }, time.Hour)
	if n, err := restarted.Rescue(t.Context(), 100); err != nil || n != 1 {
		t.Fatalf("Rescue by the next process = %d, %v; want 1", n, err)
	}
	if r := fb.finalRun(t, "lost", slot(1)); r.State != task.RunDone {
		t.Errorf("run = %s, want done by the next process", r.State)
	}
	shutdown(t, restarted)
	if n := fb.rc.received(id); n != 2 {
		t.Errorf("receiver got %d calls for %s, want 2 (the lost outcome's call, then the resumed one)", n, id)
	}
}
