package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"cronsheet/task"
)

// backfillAnswer is the answer of POST /api/v1/jobs/backfill.
type backfillAnswer struct {
	Accepted []string          `json:"accepted"`
	Refused  map[string]string `json:"refused"`
}

// postBackfill posts a backfill of ids with client and decodes the
// answer; it may run on any goroutine (it reports, it does not fail the
// test).
func (b *testBundle) postBackfill(client *http.Client, ids []string) (int, backfillAnswer, error) {
	var ans backfillAnswer
	raw, err := json.Marshal(map[string]any{"ids": ids})
	if err != nil {
		return 0, ans, err
	}
	resp, err := client.Post(b.base+"/api/v1/jobs/backfill", "application/json", bytes.NewReader(raw))
	if err != nil {
		return 0, ans, err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&ans); err != nil {
		return resp.StatusCode, ans, fmt.Errorf("decode: %w", err)
	}
	return resp.StatusCode, ans, nil
}

// TestJobsBackfillOnce: 20 parallel backfills of one cancelled job take
// it once — one answer accepts it, the 19 others list it refused with a
// reason — and its hook is called once; a backfill naming a job twice
// takes it once and calls its hook once.
func TestJobsBackfillOnce(t *testing.T) {
	b, h := setupJobs(t)
	cancelled := func(path string) string {
		t.Helper()
		var v jobView
		if code := b.call(t, "POST", "/api/v1/jobs", map[string]any{"method": "POST", "delay": 3600,
			"name": h.srv.URL + path}, &v); code != http.StatusCreated {
			t.Fatalf("submit: %d %+v", code, v)
		}
		if code := b.call(t, "DELETE", "/api/v1/jobs/"+v.ID, nil, nil); code != http.StatusOK {
			t.Fatalf("cancel %s: %d", v.ID, code)
		}
		return v.ID
	}

	// A client of its own: the connections it opened in parallel, some
	// never used, are closed before the node stops (an unused one would
	// hold up the server's shutdown).
	transport := &http.Transport{}
	defer transport.CloseIdleConnections()
	client := &http.Client{Transport: transport}

	job := cancelled("/parallel")
	const n = 20
	var (
		wg      sync.WaitGroup
		start   = make(chan struct{})
		codes   [n]int
		answers [n]backfillAnswer
		errs    [n]error
	)
	for i := range n {
		wg.Go(func() {
			<-start
			codes[i], answers[i], errs[i] = b.postBackfill(client, []string{job})
		})
	}
	close(start)
	wg.Wait()
	accepted := 0
	for i := range n {
		switch {
		case errs[i] != nil || codes[i] != http.StatusAccepted:
			t.Errorf("backfill %d: %d %v", i, codes[i], errs[i])
		case slices.Contains(answers[i].Accepted, job):
			accepted++
		case answers[i].Refused[job] == "":
			t.Errorf("backfill %d: %+v; want the job accepted or refused with a reason", i, answers[i])
		}
	}
	if accepted != 1 {
		t.Errorf("%d of %d parallel backfills accepted the job, want 1", accepted, n)
	}
	b.waitJob(t, job, task.JobDone)
	if calls := h.callsOf(job); len(calls) != 1 {
		t.Errorf("hook called %d times for the job backfilled %d times in parallel, want 1: %+v", len(calls), n, calls)
	}

	twice := cancelled("/twice")
	code, ans, err := b.postBackfill(client, []string{twice, twice})
	if err != nil || code != http.StatusAccepted || !slices.Equal(ans.Accepted, []string{twice}) {
		t.Fatalf("backfill [J, J]: %d %+v %v; want J accepted once", code, ans, err)
	}
	b.waitJob(t, twice, task.JobDone)
	if calls := h.callsOf(twice); len(calls) != 1 {
		t.Errorf("hook called %d times for a job named twice in one backfill, want 1", len(calls))
	}
}

// TestJobsDeadListEveryDoor: a job whose run ended rejected reads dead,
// and every door to the dead letters lists it: ?state=dead, dead.jsonl
// and the status's dead ids.
func TestJobsDeadListEveryDoor(t *testing.T) {
	b, h := setupJobs(t)
	var v jobView
	if code := b.call(t, "POST", "/api/v1/jobs", map[string]any{"method": "POST", "delay": 3600,
		"name": h.srv.URL + "/rejected"}, &v); code != http.StatusCreated {
		t.Fatalf("submit: %d %+v", code, v)
	}
	now := time.Now()
	if ok, err := b.srv.store.InsertRun(t.Context(), &task.Run{TriggerID: "tr_rejected", TaskID: v.ID, Slot: v.DueAt,
		Target: task.JobTargetID, TriggerType: task.TriggerSchedule, State: task.RunRejected, FiredAt: now,
		FinishedAt: now, Error: "refused"}); err != nil || !ok {
		t.Fatalf("insert the rejected run: %v, %v", ok, err)
	}
	if got := b.job(t, v.ID); got.State != task.JobDead {
		t.Fatalf("job with a rejected run reads %s, want dead", got.State)
	}
	var page struct {
		Jobs []jobView `json:"jobs"`
	}
	if code := b.call(t, "GET", "/api/v1/jobs?state=dead", nil, &page); code != http.StatusOK ||
		len(page.Jobs) != 1 || page.Jobs[0].ID != v.ID {
		t.Errorf("?state=dead: %d %+v, want the rejected job", code, page)
	}
	resp, err := http.Get(b.base + "/api/v1/jobs/dead.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	lines, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if strings.Count(string(lines), "\n") != 1 || !strings.Contains(string(lines), v.ID) {
		t.Errorf("dead.jsonl = %q, want the rejected job", lines)
	}
	var st status
	if code := b.call(t, "GET", "/api/v1/status", nil, &st); code != http.StatusOK || !slices.Equal(st.Dead, []string{v.ID}) {
		t.Errorf("status: %d, dead %v; want [%s]", code, st.Dead, v.ID)
	}
}
