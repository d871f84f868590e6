package server

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cronsheet/config"
	"cronsheet/task"
)

// jobHook is a real callback endpoint for jobs: it records each call's
// job (from the Idempotency-Key) and body, and answers with status().
type jobHook struct {
	srv    *httptest.Server
	status atomic.Int32
	mu     sync.Mutex
	calls  []jobCall
}

type jobCall struct {
	job, body string
	key       string // the Idempotency-Key: job:slot[:target]
	at        time.Time
}

func startJobHook(t *testing.T) *jobHook {
	t.Helper()
	h := &jobHook{}
	h.status.Store(http.StatusOK)
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		key := r.Header.Get("Idempotency-Key")
		job, _, _ := strings.Cut(key, ":")
		h.mu.Lock()
		h.calls = append(h.calls, jobCall{job: job, body: string(b), key: key, at: time.Now()})
		h.mu.Unlock()
		w.WriteHeader(int(h.status.Load()))
		fmt.Fprintf(w, "hello %s", job)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

// callsOf returns the calls made for job.
func (h *jobHook) callsOf(job string) []jobCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []jobCall
	for _, c := range h.calls {
		if c.job == job {
			out = append(out, c)
		}
	}
	return out
}

// jobView is the part of a job's answer the tests read.
type jobView struct {
	ID         string         `json:"id"`
	State      task.JobState  `json:"state"`
	Result     string         `json:"result"`
	Error      string         `json:"error"`
	Attempts   int            `json:"attempts"`
	Created    bool           `json:"created"`
	ReplacedBy string         `json:"replaced_by"`
	Runs       []*task.Run    `json:"runs"`
	Events     []jobEventView `json:"events"`
	Run        *task.Run      `json:"run"`
	DueAt      time.Time      `json:"due_at"`
	NextFire   time.Time      `json:"next_fire"`
}

type jobEventView struct {
	State  task.JobState `json:"state"`
	Reason string        `json:"reason"`
}

func (b *testBundle) job(t *testing.T, id string) jobView {
	t.Helper()
	var v jobView
	if code := b.call(t, "GET", "/api/v1/jobs/"+id, nil, &v); code != http.StatusOK {
		t.Fatalf("get job %s: status %d", id, code)
	}
	return v
}

func (b *testBundle) waitJob(t *testing.T, id string, want task.JobState) jobView {
	t.Helper()
	var v jobView
	eventually(t, "job "+id+" to be "+string(want), func() bool {
		v = b.job(t, id)
		return v.State == want
	})
	return v
}

func setupJobs(t *testing.T) (*testBundle, *jobHook) {
	h := startJobHook(t)
	b := setup(t, func(c *config.Config) {
		c.HTTP.Allow = []string{"127.0.0.0/8"}
		c.Fire.BackoffBase = 20 * time.Millisecond
		c.Fire.BackoffMax = 100 * time.Millisecond
	})
	return b, h
}

// TestJobsDoneMeans checks the jobs API end to end: a delayed POST job
// hits its hook once, no sooner than its delay, and reads done; with wait
// the submission returns the hook's answer; a job whose hook keeps
// failing ends dead after 5 retries and says why.
func TestJobsDoneMeans(t *testing.T) {
	b, h := setupJobs(t)

	submitted := time.Now()
	var v jobView
	code := b.call(t, "POST", "/api/v1/jobs", map[string]any{
		"method": "POST", "delay": 2, "name": h.srv.URL + "/hook", "params": `{"a":1}`}, &v)
	if code != http.StatusCreated || v.ID == "" || v.State != task.JobPending {
		t.Fatalf("submit: status %d, %+v", code, v)
	}
	done := b.waitJob(t, v.ID, task.JobDone)
	calls := h.callsOf(v.ID)
	if len(calls) != 1 || calls[0].body != `{"a":1}` || calls[0].at.Before(submitted.Add(2*time.Second)) {
		t.Fatalf("hook calls = %+v, want one with the params as body, at least 2s after submission", calls)
	}
	if !strings.Contains(done.Result, "hello "+v.ID) || done.Attempts != 1 {
		t.Errorf("done job = %+v, want the hook's answer as result", done)
	}

	// wait: the answer is the result.
	var waited jobView
	code = b.call(t, "POST", "/api/v1/jobs", map[string]any{
		"method": "GET", "delay": 0, "name": h.srv.URL + "/q", "params": "x=1", "wait": 10}, &waited)
	if code != http.StatusCreated || waited.State != task.JobDone || !strings.Contains(waited.Result, "HTTP 200: hello "+waited.ID) {
		t.Errorf("submit with wait: status %d, %+v; want done with the hook's answer", code, waited)
	}

	// A hook that keeps failing: dead after 1 + 5 attempts, with the reason.
	h.status.Store(http.StatusInternalServerError)
	var failing jobView
	b.call(t, "POST", "/api/v1/jobs", map[string]any{"method": "POST", "name": h.srv.URL + "/fail"}, &failing)
	dead := b.waitJob(t, failing.ID, task.JobDead)
	if dead.Attempts != 6 || !strings.Contains(dead.Error, "500") || len(h.callsOf(failing.ID)) != 6 {
		t.Errorf("dead job = %+v with %d calls; want 6 attempts and the 500 as reason", dead, len(h.callsOf(failing.ID)))
	}
	retries := 0
	for _, e := range dead.Events {
		if e.State == task.JobFailed && strings.Contains(e.Reason, "500") {
			retries++
		}
	}
	if retries != 5 {
		t.Errorf("transitions = %+v, want 5 failed attempts with their reason", dead.Events)
	}

	// The status shows the dead job and its last error; /metrics counts.
	var st struct {
		Store struct {
			OK bool `json:"ok"`
		} `json:"store"`
		Dead       []string `json:"dead"`
		LastErrors []struct {
			TaskID string `json:"task_id"`
			Error  string `json:"error"`
		} `json:"last_errors"`
	}
	if code := b.call(t, "GET", "/api/v1/status", nil, &st); code != http.StatusOK || !st.Store.OK ||
		!slices.Contains(st.Dead, failing.ID) || len(st.LastErrors) == 0 || st.LastErrors[0].TaskID != failing.ID {
		t.Errorf("status: %d %+v, want the dead job and its error", code, st)
	}
	resp, err := http.Get(b.base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metricsText, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{`cronsheet_fires_total{kind="http",trigger_type="schedule"}`, `cronsheet_run_outcomes_total{kind="http",state="dead"} 1`,
		"cronsheet_trigger_lag_seconds_bucket", `cronsheet_job_transitions_total`} {
		if !strings.Contains(string(metricsText), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}

	// Dead letters, filtered.
	var page struct {
		Jobs []jobView `json:"jobs"`
	}
	if code := b.call(t, "GET", "/api/v1/jobs?state=dead&method=post&name=/fail", nil, &page); code != http.StatusOK ||
		len(page.Jobs) != 1 || page.Jobs[0].ID != failing.ID {
		t.Errorf("dead letters: %d %+v, want the failing job", code, page)
	}
	if b.call(t, "GET", "/api/v1/jobs?state=dead&name=/nothing-like-it", nil, &page); len(page.Jobs) != 0 {
		t.Errorf("dead letters filtered by another name = %+v, want none", page.Jobs)
	}
	resp, err = http.Get(b.base + "/api/v1/jobs/dead.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if n := strings.Count(string(lines), "\n"); n != 1 || !strings.Contains(string(lines), failing.ID) {
		t.Errorf("dead.jsonl = %q, want one line with the failing job", lines)
	}

	// Backfill the dead job once the hook is fixed: done.
	h.status.Store(http.StatusOK)
	var ans struct {
		Accepted []string `json:"accepted"`
	}
	if code := b.call(t, "POST", "/api/v1/jobs/backfill", map[string]any{"state": "dead"}, &ans); code != http.StatusAccepted ||
		len(ans.Accepted) != 1 || ans.Accepted[0] != failing.ID {
		t.Fatalf("backfill: status %d, %+v", code, ans)
	}
	back := b.waitJob(t, failing.ID, task.JobDone)
	if back.Run == nil || back.Run.TriggerType != task.TriggerBackfill {
		t.Errorf("backfilled job = %+v, want done by a backfill run", back)
	}
	// The status lists it dead no more.
	var after status
	if code := b.call(t, "GET", "/api/v1/status", nil, &after); code != http.StatusOK || slices.Contains(after.Dead, failing.ID) {
		t.Errorf("status after the backfill: %d, dead %v; want %s not listed", code, after.Dead, failing.ID)
	}
}

// TestJobsCancelRacesFire: cancels sent around the instant jobs fire end
// each job either cancelled (never called) or done (called once), never
// both.
func TestJobsCancelRacesFire(t *testing.T) {
	b, h := setupJobs(t)
	skipOnFerretDB(t, b, "the race must show both outcomes within 95 ms around each instant; "+
		"in one run on FerretDB every cancel won (20 of 20), so the case proves nothing there")
	const n = 20
	ids := make([]string, n)
	due := make([]time.Time, n)
	for i := range ids {
		var v struct {
			ID    string    `json:"id"`
			DueAt time.Time `json:"due_at"`
		}
		b.call(t, "POST", "/api/v1/jobs", map[string]any{"method": "POST", "delay": 1, "name": h.srv.URL + "/race"}, &v)
		ids[i], due[i] = v.ID, v.DueAt
	}
	// Each cancel is sent around its job's instant: from 40ms before to
	// 150ms after, so some win and some lose: under -race on a busy
	// machine a fire reaches the ledger some tens of milliseconds after
	// its instant, and a cancel sent before that still wins.
	var mu sync.Mutex
	cancelled := map[string]bool{}
	var wg sync.WaitGroup
	for i, id := range ids {
		at := due[i].Add(time.Duration(i*10-40) * time.Millisecond)
		wg.Go(func() {
			time.Sleep(time.Until(at))
			req, _ := http.NewRequest("DELETE", b.base+"/api/v1/jobs/"+id, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Errorf("cancel %s: %v", id, err)
				return
			}
			resp.Body.Close()
			switch resp.StatusCode {
			case http.StatusOK:
				mu.Lock()
				cancelled[id] = true
				mu.Unlock()
			case http.StatusConflict:
			default:
				t.Errorf("cancel %s: status %d", id, resp.StatusCode)
			}
		})
	}
	wg.Wait()
	for _, id := range ids {
		want := task.JobDone
		if cancelled[id] {
			want = task.JobCancelled
		}
		b.waitJob(t, id, want)
	}
	time.Sleep(500 * time.Millisecond) // a late fire would show now
	for _, id := range ids {
		calls := len(h.callsOf(id))
		if cancelled[id] && calls != 0 || !cancelled[id] && calls != 1 {
			t.Errorf("job %s: cancelled %v, hook called %d times", id, cancelled[id], calls)
		}
		if v := b.job(t, id); cancelled[id] != (v.State == task.JobCancelled) {
			t.Errorf("job %s: cancelled %v but state %s", id, cancelled[id], v.State)
		}
	}
	t.Logf("%d of %d cancelled in time", len(cancelled), n)
	if len(cancelled) == 0 || len(cancelled) == n {
		t.Errorf("%d of %d cancels won: the race needs both outcomes to show that each is exclusive", len(cancelled), n)
	}
}

// TestJobsKeysBlockBatch: upsert by key replaces a pending job; a repeated
// submission with the key returns it; a blocked job does not run until
// unblocked; a batch answers each job; bad bodies get the field.
func TestJobsKeysBlockBatch(t *testing.T) {
	b, h := setupJobs(t)
	var a, c jobView
	body := map[string]any{"method": "POST", "delay": 60, "name": h.srv.URL + "/k"}
	if code := b.call(t, "PUT", "/api/v1/jobs/by-key/nightly", body, &a); code != http.StatusCreated || a.State != task.JobPending {
		t.Fatalf("upsert 1: %d %+v", code, a)
	}
	if code := b.call(t, "PUT", "/api/v1/jobs/by-key/nightly", body, &c); code != http.StatusOK || c.ID == a.ID {
		t.Fatalf("upsert 2: %d %+v", code, c)
	}
	if old := b.job(t, a.ID); old.State != task.JobCancelled || old.ReplacedBy != c.ID {
		t.Errorf("replaced job = %+v, want cancelled, replaced by %s", old, c.ID)
	}
	// A long poll on a job that stays pending ends cleanly at its wait.
	var polled jobView
	if code := b.call(t, "GET", "/api/v1/jobs/"+c.ID+"?wait=0.3", nil, &polled); code != http.StatusOK || polled.State != task.JobPending {
		t.Errorf("long poll: %d %+v, want the pending job after the wait", code, polled)
	}
	var again jobView
	body["key"] = "nightly"
	if code := b.call(t, "POST", "/api/v1/jobs", body, &again); code != http.StatusOK || again.ID != c.ID || again.Created {
		t.Errorf("repeat with key: %d %+v, want job %s, not created", code, again, c.ID)
	}

	var blk jobView
	b.call(t, "POST", "/api/v1/jobs", map[string]any{"method": "POST", "delay": 0.5, "name": h.srv.URL + "/blocked"}, &blk)
	if code := b.call(t, "POST", "/api/v1/jobs/"+blk.ID+"/block", nil, &blk); code != http.StatusOK || blk.State != task.JobBlocked {
		t.Fatalf("block: %d %+v", code, blk)
	}
	time.Sleep(1500 * time.Millisecond)
	if n := len(h.callsOf(blk.ID)); n != 0 || b.job(t, blk.ID).State != task.JobBlocked {
		t.Fatalf("blocked job ran %d times", n)
	}
	b.call(t, "POST", "/api/v1/jobs/"+blk.ID+"/unblock", nil, nil)
	b.waitJob(t, blk.ID, task.JobDone)
	// A job that already ran can be neither blocked nor unblocked.
	for _, verb := range []string{"block", "unblock"} {
		if code := b.call(t, "POST", "/api/v1/jobs/"+blk.ID+"/"+verb, nil, nil); code != http.StatusConflict {
			t.Errorf("%s of a job that ran: status %d, want 409", verb, code)
		}
	}
	if v := b.job(t, blk.ID); v.State != task.JobDone {
		t.Errorf("job after refused block/unblock: %s, want done", v.State)
	}

	var items []struct {
		Job   *jobView `json:"job"`
		Error string   `json:"error"`
		Field string   `json:"field"`
	}
	batch := []map[string]any{
		{"method": "POST", "name": h.srv.URL + "/b1"},
		{"method": "TELNET", "name": "x"},
		{"method": "GET", "name": h.srv.URL + "/b3", "delay": -1},
	}
	if code := b.call(t, "POST", "/api/v1/jobs", batch, &items); code != http.StatusOK || len(items) != 3 {
		t.Fatalf("batch: %d %+v", code, items)
	}
	if items[0].Job == nil || items[1].Field != "method" || items[2].Field != "delay" {
		t.Errorf("batch answers = %+v", items)
	}
	for _, bad := range []struct {
		body  any
		field string
	}{
		{map[string]any{"name": "http://x/"}, "method"},
		{map[string]any{"method": "POST", "name": "http://x/", "colour": 1}, "colour"},
		{map[string]any{"method": "POST", "name": "http://x/", "delay": "soon"}, "delay"},
		{map[string]any{"method": "POST", "name": "http://x/", "delay": 1, "cron": "every 1m"}, "delay"},
		{map[string]any{"method": "EXEC", "name": "rm"}, "name"},
		{map[string]any{"method": "POST", "name": "http://169.254.169.254/latest"}, "name"},
		{map[string]any{"method": "POST", "name": "http://x/", "at": "0001-01-01T00:00:00Z"}, "at"},
		{map[string]any{"method": "POST", "name": "http://x/", "at": "1969-12-31T23:59:59Z"}, "at"},
	} {
		var e struct {
			Field string `json:"field"`
		}
		if code := b.call(t, "POST", "/api/v1/jobs", bad.body, &e); code != http.StatusBadRequest || e.Field != bad.field {
			t.Errorf("bad body %v: status %d field %q, want 400 on %s", bad.body, code, e.Field, bad.field)
		}
	}
}

// TestJobsFlowLimits: a burst of jobs in one cc group never runs more
// than its limit at once, a host's token bucket spaces its calls, and
// every job still runs (none is dropped).
func TestJobsFlowLimits(t *testing.T) {
	var inFlight, maxInFlight atomic.Int32
	var mu sync.Mutex
	var starts []time.Time
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		for {
			m := maxInFlight.Load()
			if n <= m || maxInFlight.CompareAndSwap(m, n) {
				break
			}
		}
		mu.Lock()
		starts = append(starts, time.Now())
		mu.Unlock()
		time.Sleep(50 * time.Millisecond)
		inFlight.Add(-1)
	}))
	defer slow.Close()
	b := setup(t, func(c *config.Config) {
		c.HTTP.Allow = []string{"127.0.0.0/8"}
		// 127.0.0.1 gets 20 calls a second after a burst of 2.
		c.Flow.Hosts = map[string]config.FlowHost{"127.0.0.1": {Rate: 20, Burst: 2}}
	})
	const n = 12
	batch := make([]map[string]any, n)
	for i := range batch {
		batch[i] = map[string]any{"method": "POST", "name": slow.URL + "/cc", "cc": map[string]any{"group": "reports", "limit": 2}}
	}
	var items []struct {
		Job *jobView `json:"job"`
	}
	if code := b.call(t, "POST", "/api/v1/jobs", batch, &items); code != http.StatusOK || len(items) != n {
		t.Fatalf("batch: status %d, %d answers", code, len(items))
	}
	for _, it := range items {
		b.waitJob(t, it.Job.ID, task.JobDone)
	}
	if m := maxInFlight.Load(); m > 2 || m < 1 {
		t.Errorf("at most %d calls ran at once; the cc limit is 2", m)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(starts) != n {
		t.Fatalf("%d calls, want %d: none dropped, none repeated", len(starts), n)
	}
	// The bucket holds 2 tokens and refills one per 50ms: n calls need at
	// least (n-2) refills. (A lower bound only: it can't fail by slowness.
	// The starts are seen at the hook, where a connection's set-up can
	// delay the first by tens of milliseconds more than the last; without
	// the bucket, the cc limit alone would span (n/2-1)×50ms = 250ms.)
	if span := starts[n-1].Sub(starts[0]); span < time.Duration(n-2)*50*time.Millisecond-80*time.Millisecond {
		t.Errorf("%d calls spanned %v; a 20/s bucket of 2 needs at least %v", n, span, time.Duration(n-2)*50*time.Millisecond)
	}
}

// TestJobsCronCancelRacesFire: cancelling a cron job takes its current
// slot in the ledger, so a fire racing the cancel either delivers that
// slot or finds it cancelled, never both, and no later slot is delivered.
// Cancels land before the first slot and after some slots: both occur.
func TestJobsCronCancelRacesFire(t *testing.T) {
	b, h := setupJobs(t)
	const n = 12
	type cronJob struct {
		id      string
		created time.Time
	}
	jobs := make([]cronJob, n)
	for i := range jobs {
		var v jobView
		if code := b.call(t, "POST", "/api/v1/jobs", map[string]any{"method": "POST", "cron": "every 1s",
			"overlap": "allow", "name": h.srv.URL + "/cron"}, &v); code != http.StatusCreated {
			t.Fatalf("submit: %d", code)
		}
		jobs[i] = cronJob{v.ID, time.Now()}
	}
	var wg sync.WaitGroup
	for i, j := range jobs {
		// From 0.3 s to 3.6 s after submission: around the slots.
		at := j.created.Add(300*time.Millisecond + time.Duration(i)*300*time.Millisecond)
		wg.Go(func() {
			time.Sleep(time.Until(at))
			req, _ := http.NewRequest("DELETE", b.base+"/api/v1/jobs/"+j.id, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Errorf("cancel %s: %v", j.id, err)
				return
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Errorf("cancel %s: status %d", j.id, resp.StatusCode)
			}
		})
	}
	wg.Wait()
	time.Sleep(1500 * time.Millisecond) // a late fire would show now
	var before, after int
	for _, j := range jobs {
		runs := b.job(t, j.id).Runs
		var cancelledAt int64
		for _, r := range runs {
			if r.State == task.RunCancelled {
				cancelledAt = r.Slot.UnixMilli()
			}
		}
		if cancelledAt == 0 {
			t.Errorf("job %s: no cancelled run holds its current slot", j.id)
		}
		calls := h.callsOf(j.id)
		for _, c := range calls {
			parts := strings.Split(c.key, ":")
			slot, err := strconv.ParseInt(parts[1], 10, 64)
			if err != nil {
				t.Fatalf("idempotency key %q: %v", c.key, err)
			}
			if cancelledAt != 0 && slot >= cancelledAt {
				t.Errorf("job %s: slot %d delivered at or after its cancelled slot %d", j.id, slot, cancelledAt)
			}
		}
		if len(calls) == 0 {
			before++
		} else {
			after++
		}
	}
	t.Logf("cancelled before the first slot: %d, after some slots: %d", before, after)
	if before == 0 || after == 0 {
		t.Errorf("cancelled before the first slot %d times, after %d times: want both", before, after)
	}
}

// TestCancelStuckRun: a run whose callback hangs can be ended by the user:
// it reads cancelled at once, the hanging delivery's outcome does not
// overwrite it, and a run that is over cannot be cancelled.
func TestCancelStuckRun(t *testing.T) {
	release := make(chan struct{})
	var calls atomic.Int32
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer hook.Close()
	b := setup(t, func(c *config.Config) { c.HTTP.Allow = []string{"127.0.0.0/8"} })
	defer close(release)
	var v jobView
	if code := b.call(t, "POST", "/api/v1/jobs", map[string]any{"method": "POST", "name": hook.URL + "/hang", "ttl": 3600}, &v); code != http.StatusCreated {
		t.Fatalf("submit: %d", code)
	}
	var run *task.Run
	eventually(t, "the job's run to be delivering", func() bool {
		j := b.job(t, v.ID)
		run = j.Run
		return calls.Load() == 1 && run != nil && run.State == task.RunRunning
	})
	var got task.Run
	if code := b.call(t, "POST", "/api/v1/runs/"+run.TriggerID+"/cancel", map[string]any{"reason": "hook is stuck"}, &got); code != http.StatusOK ||
		got.State != task.RunCancelled || !strings.Contains(got.Error, "hook is stuck") || got.Fence != run.Fence+1 {
		t.Fatalf("cancel: %d %+v; want cancelled with the reason at the next fence", code, got)
	}
	release <- struct{}{} // the hanging call answers 200 now
	time.Sleep(300 * time.Millisecond)
	var after task.Run
	if b.call(t, "GET", "/api/v1/runs/"+run.TriggerID, nil, &after); after.State != task.RunCancelled {
		t.Errorf("run after the stuck call answered = %+v, want still cancelled", after)
	}
	if code := b.call(t, "POST", "/api/v1/runs/"+run.TriggerID+"/cancel", nil, nil); code != http.StatusConflict {
		t.Errorf("cancel of a cancelled run: %d, want 409", code)
	}
	if code := b.call(t, "POST", "/api/v1/runs/tr_nosuchrun/cancel", nil, nil); code != http.StatusNotFound {
		t.Errorf("cancel of an unknown run: %d, want 404", code)
	}
	if code := b.call(t, "POST", "/api/v1/runs/"+run.TriggerID+"/cancel", map[string]any{"reason": strings.Repeat("x", 501)}, nil); code != http.StatusBadRequest {
		t.Errorf("cancel with an oversized reason: %d, want 400", code)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("hook called %d times, want 1", n)
	}
}

// TestJobsFarOffWaitsInStore: a job due more than two arming windows ahead
// is stored held by no node, claimed no sooner than a window before its
// instant, then fired at its instant and delivered once (counted at the
// hook).
func TestJobsFarOffWaitsInStore(t *testing.T) {
	h := startJobHook(t)
	const window = 5 * time.Second
	b := setup(t, func(c *config.Config) {
		c.HTTP.Allow = []string{"127.0.0.0/8"}
		c.Fire.ArmWindow = window
	})
	var v jobView
	body := map[string]any{"method": "POST", "name": h.srv.URL + "/far", "delay": 12}
	if code := b.call(t, "POST", "/api/v1/jobs", body, &v); code != http.StatusCreated {
		t.Fatalf("submit: status %d", code)
	}
	stored, err := b.srv.store.GetTask(t.Context(), v.ID)
	if err != nil {
		t.Fatal(err)
	}
	due := stored.Job.DueAt
	if want := due.Add(-window); !stored.ArmAt.Equal(want) || stored.IsClaimed != 0 {
		t.Fatalf("stored: arm_at %v, claimed %d; want %v, unclaimed", stored.ArmAt, stored.IsClaimed, want)
	}
	var claimedAt time.Time
	for claimedAt.IsZero() {
		got, err := b.srv.store.GetTask(t.Context(), v.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.IsClaimed == 1 {
			claimedAt = time.Now()
		} else if time.Now().After(due.Add(10 * time.Second)) {
			t.Fatalf("the job was never claimed (due %v)", due)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if claimedAt.Before(due.Add(-window)) {
		t.Errorf("claimed at %v, before its arming instant %v", claimedAt, due.Add(-window))
	}
	b.waitJob(t, v.ID, task.JobDone)
	time.Sleep(300 * time.Millisecond) // a second delivery would arrive by now
	calls := h.callsOf(v.ID)
	if len(calls) != 1 {
		t.Fatalf("hook called %d times, want once", len(calls))
	}
	if calls[0].at.Before(due) {
		t.Errorf("delivered at %v, before its instant %v", calls[0].at, due)
	}
}

// TestJobsStatusWrittenAtEnd: a delayed job's task feedback is written
// once, when its run ends, not also when it fires (fire.statusAtEnd):
// while the hook holds the call, the task still has no last fire and its
// due instant as next fire, and the job reads running without a next
// fire; once the hook answers, the task shows the slot as last fire, no
// next fire, done. The hook is called once.
func TestJobsStatusWrittenAtEnd(t *testing.T) {
	var calls atomic.Int32
	entered, release := make(chan struct{}), make(chan struct{})
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			close(entered)
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
		fmt.Fprint(w, "ok")
	}))
	defer hook.Close()
	b := setup(t, func(c *config.Config) { c.HTTP.Allow = []string{"127.0.0.0/8"} })
	defer b.stop() // before the hook closes: the node's idle connections to it end first

	var v jobView
	if code := b.call(t, "POST", "/api/v1/jobs", map[string]any{"method": "POST", "name": hook.URL + "/held", "delay": 1}, &v); code != http.StatusCreated {
		t.Fatalf("submit: status %d", code)
	}
	select {
	case <-entered:
	case <-time.After(30 * time.Second):
		t.Fatal("the hook was never called")
	}
	running := b.job(t, v.ID)
	if running.State != task.JobRunning || !running.NextFire.IsZero() || running.DueAt.IsZero() {
		t.Errorf("job while its hook holds the call = %+v; want running, no next fire, its due instant", running)
	}
	held, err := b.srv.store.GetTask(t.Context(), v.ID)
	if err != nil {
		t.Fatal(err)
	}
	due := held.Job.DueAt
	if !held.LastFire.IsZero() || !held.NextFire.Equal(due) || held.LastStatus != "" || held.IsDone != 0 {
		t.Errorf("task while its run is in flight: last_fire %v, next_fire %v, last_status %q, is_done %d; "+
			"want none, %v, none, 0 (nothing written at the fire)", held.LastFire, held.NextFire, held.LastStatus, held.IsDone, due)
	}

	close(release)
	b.waitJob(t, v.ID, task.JobDone)
	var ended *task.Task
	eventually(t, "the task's feedback", func() bool {
		ended, err = b.srv.store.GetTask(t.Context(), v.ID)
		return err == nil && ended.LastStatus != ""
	})
	if !ended.LastFire.Equal(due) || !ended.NextFire.IsZero() || ended.LastStatus != string(task.RunDone) || ended.IsDone != 1 {
		t.Errorf("task after its run: last_fire %v, next_fire %v, last_status %q, is_done %d; want %v, none, done, 1",
			ended.LastFire, ended.NextFire, ended.LastStatus, ended.IsDone, due)
	}
	if done := b.job(t, v.ID); !done.NextFire.IsZero() {
		t.Errorf("done job shows next fire %v, want none", done.NextFire)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("hook called %d times, want once", n)
	}
}
