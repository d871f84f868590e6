package server

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"cronsheet/task"
)

// postVerb posts to /api/v1/jobs/id/verb and returns the status and the
// error body's text; a 409 must carry code want409 (when not "").
func (b *testBundle) postVerb(t *testing.T, id, verb string, want409 ...task.Code) (int, string) {
	t.Helper()
	resp, err := http.Post(b.base+"/api/v1/jobs/"+id+"/"+verb, "application/json", nil)
	if err != nil {
		t.Fatalf("%s %s: %v", verb, id, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var e struct {
		Error string    `json:"error"`
		Code  task.Code `json:"code"`
	}
	_ = json.Unmarshal(raw, &e)
	if resp.StatusCode == http.StatusConflict && len(want409) > 0 && e.Code != want409[0] {
		t.Errorf("%s %s: 409 with code %q (%q), want %q", verb, id, e.Code, e.Error, want409[0])
	}
	return resp.StatusCode, e.Error
}

// TestJobsBlockRacesFire: blocks sent around the instant delayed jobs fire
// end each job either blocked (the hook never called) or refused with 409
// because it fired (the hook called once), never both; both outcomes occur.
// A blocked job that is unblocked then runs once; one that is cancelled
// never runs.
func TestJobsBlockRacesFire(t *testing.T) {
	b, h := setupJobs(t)
	const n = 24
	ids := make([]string, n)
	due := make([]time.Time, n)
	for i := range ids {
		var v struct {
			ID    string    `json:"id"`
			DueAt time.Time `json:"due_at"`
		}
		if code := b.call(t, "POST", "/api/v1/jobs", map[string]any{"method": "POST", "delay": 3, "name": h.srv.URL + "/race"}, &v); code != http.StatusCreated {
			t.Fatalf("submit: %d", code)
		}
		ids[i], due[i] = v.ID, v.DueAt
	}
	// The jobs are due 3 s after their submission, so that every block
	// below is sent after the last submission however slowly the machine
	// answered them. Each block is sent around its job's instant: from 150 ms before to
	// 310 ms after (on the mongo driver from 500 ms before to 535 ms
	// after: its fires take longer to reach the ledger, and on a loaded
	// machine FerretDB can answer a block sent 150 ms before the instant
	// too late), so some win (those well before the instant always do)
	// and some lose, also when a loaded machine starts the fires late
	// (then a block some tens of milliseconds after the instant still
	// wins, so the window reaches far past it).
	step, lead := 20*time.Millisecond, 150*time.Millisecond
	if testDriver() == "mongo" {
		step, lead = 45*time.Millisecond, 500*time.Millisecond
	}
	var mu sync.Mutex
	blocked := map[string]bool{}
	var wg sync.WaitGroup
	for i, id := range ids {
		at := due[i].Add(time.Duration(i)*step - lead)
		wg.Go(func() {
			time.Sleep(time.Until(at))
			code, msg := b.postVerb(t, id, "block", task.CodeAlreadyRan)
			switch code {
			case http.StatusOK:
				mu.Lock()
				blocked[id] = true
				mu.Unlock()
			case http.StatusConflict:
				if !strings.Contains(msg, "ran") && !strings.Contains(msg, "fired") {
					t.Errorf("block %s: 409 %q, want it to say the job ran", id, msg)
				}
			default:
				t.Errorf("block %s: status %d %q", id, code, msg)
			}
		})
	}
	wg.Wait()
	for _, id := range ids {
		if !blocked[id] {
			b.waitJob(t, id, task.JobDone)
		}
	}
	time.Sleep(500 * time.Millisecond) // a late fire would show now
	for _, id := range ids {
		calls := len(h.callsOf(id))
		if blocked[id] && calls != 0 || !blocked[id] && calls != 1 {
			t.Errorf("job %s: blocked %v, hook called %d times", id, blocked[id], calls)
		}
		want := task.JobDone
		if blocked[id] {
			want = task.JobBlocked
		}
		if v := b.job(t, id); v.State != want {
			t.Errorf("job %s: blocked %v but state %s", id, blocked[id], v.State)
		}
	}
	t.Logf("%d of %d blocked in time", len(blocked), n)
	if len(blocked) == 0 || len(blocked) == n {
		t.Fatalf("%d of %d blocks won: the race needs both outcomes to show that each is exclusive", len(blocked), n)
	}

	// The blocked jobs, their slot held by the block: every other one is
	// unblocked (it runs once, now), the rest cancelled (never run).
	k := 0
	unblocked := map[string]bool{}
	for _, id := range ids {
		if !blocked[id] {
			continue
		}
		verb, want := "unblock", http.StatusOK
		if k%2 == 1 {
			verb = "cancel"
		}
		k++
		var code int
		var msg string
		if verb == "cancel" {
			req, _ := http.NewRequest("DELETE", b.base+"/api/v1/jobs/"+id, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			code = resp.StatusCode
		} else {
			code, msg = b.postVerb(t, id, verb)
			unblocked[id] = true
		}
		if code != want {
			t.Errorf("%s of blocked job %s: %d %q, want %d", verb, id, code, msg, want)
		}
	}
	for _, id := range ids {
		if !blocked[id] {
			continue
		}
		if unblocked[id] {
			b.waitJob(t, id, task.JobDone)
		} else {
			b.waitJob(t, id, task.JobCancelled)
		}
	}
	time.Sleep(500 * time.Millisecond)
	for id := range blocked {
		calls := len(h.callsOf(id))
		if unblocked[id] && calls != 1 || !unblocked[id] && calls != 0 {
			t.Errorf("blocked job %s: unblocked %v, hook called %d times", id, unblocked[id], calls)
		}
	}
	// A job that ran can be neither blocked nor unblocked again.
	for id := range unblocked {
		for _, verb := range []string{"block", "unblock"} {
			if code, msg := b.postVerb(t, id, verb, task.CodeAlreadyRan); code != http.StatusConflict || !strings.Contains(msg, "already ran") {
				t.Errorf("%s of unblocked job %s that ran: %d %q, want 409 saying it already ran", verb, id, code, msg)
			}
		}
		break
	}
}

// TestJobsBlockCronRunning: a cron job whose run is in
// progress on a slow hook, with overlap skip and with overlap queue (a
// slot queued behind the run), is blocked at once: the block answers 200
// (before, 409 job_running on every try while the queue was never
// empty), the job reads running while its run goes on, no delivery
// starts after the block answered (counted at the hook), the queued run
// ends cancelled, and once the run ends the job reads blocked. A
// cancelled cron job can be neither blocked nor unblocked.
func TestJobsBlockCronRunning(t *testing.T) {
	for _, overlap := range []string{"skip", "queue"} {
		t.Run(overlap, func(t *testing.T) { testBlockCronRunning(t, overlap) })
	}
}

func testBlockCronRunning(t *testing.T, overlap string) {
	b, _ := setupJobs(t)
	release := make(chan struct{})
	var calls atomic.Int32
	arrived := make(chan struct{}, 100)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		arrived <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(slow.Close)
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})

	var v jobView
	if code := b.call(t, "POST", "/api/v1/jobs", map[string]any{"method": "POST", "cron": "every 1s",
		"overlap": overlap, "name": slow.URL + "/cron"}, &v); code != http.StatusCreated {
		t.Fatalf("submit: %d", code)
	}
	select {
	case <-arrived:
	case <-time.After(30 * time.Second):
		t.Fatal("the cron job never called its hook")
	}
	if overlap == "queue" {
		eventually(t, "a slot queued behind the run in progress", func() bool {
			return slices.ContainsFunc(b.job(t, v.ID).Runs, func(r *task.Run) bool { return r.State == task.RunPending })
		})
	}
	var blocked jobView
	if code := b.call(t, "POST", "/api/v1/jobs/"+v.ID+"/block", nil, &blocked); code != http.StatusOK {
		t.Fatalf("block while a run is in progress: %d, want 200", code)
	}
	after := calls.Load()
	if blocked.State != task.JobRunning {
		t.Errorf("state answered by the block while its run goes on: %s, want running", blocked.State)
	}
	if overlap == "queue" {
		eventually(t, "the queued run to end cancelled", func() bool {
			return !slices.ContainsFunc(b.job(t, v.ID).Runs, func(r *task.Run) bool { return r.State == task.RunPending })
		})
	}
	close(release)
	eventually(t, "the run to end", func() bool {
		j := b.job(t, v.ID)
		return j.Run != nil && j.Run.State.Final()
	})
	time.Sleep(2500 * time.Millisecond) // slots after the block, or a queued run, would be delivered by now
	if n := calls.Load(); n != after {
		t.Errorf("blocked cron job (overlap %s): %d calls started after the block answered, want none", overlap, n-after)
	}
	j := b.job(t, v.ID)
	if j.State != task.JobBlocked {
		t.Errorf("state after the block and the run's end: %s, want blocked", j.State)
	}
	for _, r := range j.Runs {
		if r.State == task.RunPending || r.State == task.RunRunning {
			t.Errorf("run %s of %s is %s after the block took effect", r.TriggerID, r.Slot, r.State)
		}
	}

	req, _ := http.NewRequest("DELETE", b.base+"/api/v1/jobs/"+v.ID, nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("cancel: %d", resp.StatusCode)
	}
	for _, verb := range []string{"block", "unblock"} {
		if code, msg := b.postVerb(t, v.ID, verb, task.CodeAlreadyCancelled); code != http.StatusConflict || !strings.Contains(msg, "cancelled") {
			t.Errorf("%s of a cancelled cron job: %d %q, want 409 saying it is cancelled", verb, code, msg)
		}
	}
}
