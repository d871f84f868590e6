package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"cronsheet/task"
)

// rerunHook counts the deliveries of each job at the receiver: the
// distinct X-Cronsheet-Trigger-Id values it was called with, by job (the
// Idempotency-Key's first part). It answers status.
type rerunHook struct {
	srv      *httptest.Server
	mu       sync.Mutex
	triggers map[string][]string // job id → trigger ids, in arrival order, each once
}

func startRerunHook(t *testing.T, status int) *rerunHook {
	t.Helper()
	h := &rerunHook{triggers: map[string][]string{}}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		job, _, _ := strings.Cut(r.Header.Get("Idempotency-Key"), ":")
		tr := r.Header.Get("X-Cronsheet-Trigger-Id")
		h.mu.Lock()
		if !slices.Contains(h.triggers[job], tr) {
			h.triggers[job] = append(h.triggers[job], tr)
		}
		h.mu.Unlock()
		w.WriteHeader(status)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

// of returns the trigger ids job was delivered under.
func (h *rerunHook) of(job string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.triggers[job])
}

// TestJobsBackfillDeadRerunOnce: a dead job whose
// re-run fails fast is backfilled by 20 requests sent over a second, so
// that most arrive after the re-run before them ended dead; the job is
// re-run once, counted at the hook — both when the requests name the
// dead run they retry ("runs") and when they name the job alone. Before
// the rule every request that found the job dead again started another
// re-run. Every answer accepts the job or refuses it with a reason, and
// a request naming the retried run after its re-run is told which run
// re-ran it.
func TestJobsBackfillDeadRerunOnce(t *testing.T) {
	h := startRerunHook(t, http.StatusBadRequest) // a 4xx fails for good: dead at once
	b, _ := setupJobs(t)
	transport := &http.Transport{}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport}

	dead := func(path string) jobView {
		t.Helper()
		var v jobView
		if code := b.call(t, "POST", "/api/v1/jobs", map[string]any{"method": "POST", "delay": 0, "max_retries": 0,
			"name": h.srv.URL + path}, &v); code != http.StatusCreated {
			t.Fatalf("submit: %d %+v", code, v)
		}
		return b.waitJob(t, v.ID, task.JobDead)
	}
	post := func(body map[string]any) (int, backfillAnswer, error) {
		var ans backfillAnswer
		raw, _ := json.Marshal(body)
		resp, err := client.Post(b.base+"/api/v1/jobs/backfill", "application/json", bytes.NewReader(raw))
		if err != nil {
			return 0, ans, err
		}
		defer resp.Body.Close()
		return resp.StatusCode, ans, json.NewDecoder(resp.Body).Decode(&ans)
	}
	spread := func(job string, body map[string]any) {
		t.Helper()
		const n = 20
		var (
			wg      sync.WaitGroup
			codes   [n]int
			answers [n]backfillAnswer
			errs    [n]error
		)
		for i := range n {
			wg.Go(func() {
				time.Sleep(time.Duration(i) * 50 * time.Millisecond)
				codes[i], answers[i], errs[i] = post(body)
			})
		}
		wg.Wait()
		for i := range n {
			switch {
			case errs[i] != nil || codes[i] != http.StatusAccepted:
				t.Errorf("backfill %d of %s: %d %v", i, job, codes[i], errs[i])
			case !slices.Contains(answers[i].Accepted, job) && answers[i].Refused[job] == "":
				t.Errorf("backfill %d of %s: %+v; want the job accepted or refused with a reason", i, job, answers[i])
			}
		}
		// Let a re-run still paced or in flight reach the hook.
		b.waitJob(t, job, task.JobDead)
		time.Sleep(time.Second)
	}

	named := dead("/named")
	spread(named.ID, map[string]any{"ids": []string{named.ID}, "runs": map[string]string{named.ID: named.Run.TriggerID}})
	if got := h.of(named.ID); len(got) != 2 || got[0] != named.Run.TriggerID {
		t.Errorf("job backfilled by 20 requests naming its dead run %s: delivered under %v, want that run and one re-run",
			named.Run.TriggerID, got)
	}
	// The re-run stands for the run it retried: a later request naming
	// that run is refused, naming the re-run.
	rerun := b.job(t, named.ID).Run
	code, ans, err := post(map[string]any{"runs": map[string]string{named.ID: named.Run.TriggerID}})
	if err != nil || code != http.StatusAccepted || !strings.Contains(ans.Refused[named.ID], rerun.TriggerID) {
		t.Errorf("backfill naming the re-run run again: %d %+v %v; want it refused naming the re-run %s",
			code, ans, err, rerun.TriggerID)
	}

	bare := dead("/bare")
	spread(bare.ID, map[string]any{"ids": []string{bare.ID}})
	if got := h.of(bare.ID); len(got) != 2 {
		t.Errorf("job backfilled by 20 requests naming the job alone: delivered under %v, want its run and one re-run", got)
	}
	// Naming the re-run re-runs the job again, once.
	rerun = b.job(t, bare.ID).Run
	code, ans, err = post(map[string]any{"runs": map[string]string{bare.ID: rerun.TriggerID}})
	if err != nil || code != http.StatusAccepted || !slices.Equal(ans.Accepted, []string{bare.ID}) {
		t.Fatalf("backfill naming the re-run: %d %+v %v; want the job accepted", code, ans, err)
	}
	eventually(t, "the second re-run at the hook", func() bool { return len(h.of(bare.ID)) == 3 })
}

// TestJobsWaitKeepsAnswerBesideFeedback: a target
// that posts its final feedback before it answers (the README's `wait`
// against `cronsheet hook -feedback done`, where the report may arrive
// while the call is in flight): the job's wait answers done with the
// call's answer as result, every time, and the report stays the run's
// final word (done, its message kept). Before, the report won and the
// answer, refused by the fence the report bumped, was lost: the wait
// answered without result.
func TestJobsWaitKeepsAnswerBesideFeedback(t *testing.T) {
	var base string
	reported := make(chan string, 16)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tr := r.Header.Get("X-Cronsheet-Trigger-Id")
		resp, err := http.Post(base+"/api/v1/runs/"+tr+"/feedback", "application/json",
			strings.NewReader(`{"status":0,"message":"reported first"}`))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				reported <- tr
			}
		}
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("the answer to " + tr))
	}))
	t.Cleanup(hook.Close)
	b, _ := setupJobs(t)
	base = b.base

	for i := range 5 {
		var v jobView
		code := b.call(t, "POST", "/api/v1/jobs", map[string]any{"method": "POST", "delay": 0, "wait": 10,
			"name": hook.URL + "/hook", "params": `{"a":1}`}, &v)
		if code != http.StatusCreated || v.Run == nil {
			t.Fatalf("try %d: submit with wait: %d %+v", i, code, v)
		}
		select {
		case tr := <-reported:
			if tr != v.Run.TriggerID {
				t.Fatalf("try %d: report for %s, want %s", i, tr, v.Run.TriggerID)
			}
		default:
			t.Fatalf("try %d: the hook's report was not accepted before its answer", i)
		}
		if v.State != task.JobDone || !strings.Contains(v.Result, "the answer to "+v.Run.TriggerID) {
			t.Errorf("try %d: wait answered %s with result %q, want done with the call's answer", i, v.State, v.Result)
		}
		n := len(v.Run.Feedback)
		if v.Run.State != task.RunDone || n == 0 || v.Run.Feedback[n-1].Message != "reported first" {
			t.Errorf("try %d: run %s with feedback %+v, want done by the report", i, v.Run.State, v.Run.Feedback)
		}
	}
}
