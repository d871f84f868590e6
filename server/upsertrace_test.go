package server

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"testing"

	"cronsheet/task"
)

// TestParallelUpsertsAnswerEachTheirJob: 20 PUT /api/v1/jobs/by-key/{key}
// at once, without If-Match, are all answered 2xx: 201 for exactly one (the
// key's creator), 200 naming the replaced job for each other, never a 409;
// one pending job is left, the key's.
func TestParallelUpsertsAnswerEachTheirJob(t *testing.T) {
	b, h := setupJobs(t)
	body, _ := json.Marshal(map[string]any{"method": "POST", "delay": 3600, "name": h.srv.URL + "/race"})
	const n = 20
	type answer struct {
		code int
		body []byte
		err  error
	}
	var (
		wg      sync.WaitGroup
		answers [n]answer
		start   = make(chan struct{})
	)
	for i := range n {
		wg.Go(func() {
			<-start
			req, err := http.NewRequest("PUT", b.base+"/api/v1/jobs/by-key/race", bytes.NewReader(body))
			if err != nil {
				answers[i].err = err
				return
			}
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				answers[i].err = err
				return
			}
			defer resp.Body.Close()
			answers[i].code = resp.StatusCode
			answers[i].body, answers[i].err = io.ReadAll(resp.Body)
		})
	}
	close(start)
	wg.Wait()
	created, ids := 0, map[string]bool{}
	for i, a := range answers {
		var v struct {
			ID       string `json:"id"`
			Replaced string `json:"replaced"`
		}
		switch {
		case a.err != nil:
			t.Errorf("upsert %d: %v", i, a.err)
			continue
		case a.code != http.StatusCreated && a.code != http.StatusOK:
			t.Errorf("upsert %d: %d %s, want 201 or 200", i, a.code, a.body)
			continue
		case json.Unmarshal(a.body, &v) != nil:
			t.Errorf("upsert %d: body %s", i, a.body)
			continue
		case a.code == http.StatusCreated:
			created++
		case v.Replaced == "":
			t.Errorf("upsert %d: 200 naming no replaced job: %s", i, a.body)
		}
		ids[v.ID] = true
	}
	if created != 1 {
		t.Errorf("%d upserts answered 201, want exactly 1", created)
	}
	pending := 0
	for id := range ids {
		if b.job(t, id).State == task.JobPending {
			pending++
		}
	}
	if pending != 1 {
		t.Errorf("%d of the %d jobs are pending, want 1 (the key's)", pending, len(ids))
	}
}
