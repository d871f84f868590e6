package webtable_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"cronsheet/config"
)

// TestTableFailingThroughHook: on a running node (the test driver), a
// row whose target answers HTTP 500 is run by hand three times (each
// delivery counted at the hook); the table endpoint then answers it
// failing with the target's error and counts it on the Failing chip (no
// answer on the way says otherwise of one than of the other); once the
// target answers 200, the next run recovers it.
func TestTableFailingThroughHook(t *testing.T) {
	var fail atomic.Bool
	var hits, oks atomic.Int32
	fail.Store(true)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			return
		}
		hits.Add(1)
		if fail.Load() {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		oks.Add(1)
	}))
	t.Cleanup(hook.Close)
	base := startNodeWith(t, func(c *config.Config) { c.HTTP.Allow = []string{"127.0.0.0/8"} })
	postJSON(t, base, "/api/v1/targets", `{"id":"hook-500","kind":"http","state":"running","http":{"method":"POST","url":"`+
		hook.URL+`/x"}}`, http.StatusCreated)
	postJSON(t, base, "/api/v1/scenarios/memos/rows",
		`{"memo_id":"fh-1","content":"ping","when":"daily 03:00","targets":"hook-500","retries":0}`, http.StatusCreated)
	waitSynced(t, base, "fh-1")

	// runOnce runs fh-1 by hand and waits until the run is final: n runs
	// in all, the newest in state want.
	runOnce := func(n int, want string) {
		t.Helper()
		postJSON(t, base, "/api/v1/tasks/fh-1/trigger", `{}`, http.StatusAccepted)
		deadline := time.Now().Add(20 * time.Second)
		for {
			var runs struct{ Runs []struct{ State string } }
			getDoc(t, base+"/api/v1/runs?task_id=fh-1", &runs)
			if len(runs.Runs) == n && runs.Runs[0].State == want {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("runs of fh-1 = %+v, want %d, the newest %s", runs.Runs, n, want)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	type answer struct {
		Data []struct {
			ID        string `json:"id"`
			IsActive  int    `json:"is_active"`
			State     string `json:"state"`
			LastError string `json:"last_error"`
		} `json:"data"`
		Counts struct {
			Failing int64 `json:"failing"`
		} `json:"counts"`
	}
	// table reads the table until fh-1's state is want, each answer
	// checked on its own: the failing chip counts the row exactly when
	// the row says failing. A run's end reaches its row with the run (one
	// transaction, SQLite) or a write after the run's (mongo), so the
	// row may lag the runs read above, never contradict its chip.
	table := func(want string) answer {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			var a answer
			getDoc(t, base+tablePath+"?draw=1&length=10&counts=1", &a)
			if len(a.Data) != 1 || a.Data[0].ID != "fh-1" {
				t.Fatalf("table rows %+v, want fh-1 alone", a.Data)
			}
			if failing := a.Data[0].State == "failing"; failing != (a.Counts.Failing == 1) {
				t.Fatalf("one answer contradicts itself: %+v, failing chip %d", a.Data[0], a.Counts.Failing)
			}
			if a.Data[0].State == want {
				return a
			}
			if time.Now().After(deadline) {
				t.Fatalf("table row %+v, want state %q", a.Data[0], want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	for i := range 3 {
		runOnce(i+1, "dead")
	}
	if n := hits.Load(); n != 3 {
		t.Fatalf("the hook counted %d deliveries, want 3", n)
	}
	a := table("failing")
	if d := a.Data[0]; !strings.Contains(d.LastError, "500") || d.IsActive != 1 {
		t.Errorf("after three dead runs: %+v; want the error, is_active 1", d)
	}

	fail.Store(false)
	runOnce(4, "done")
	if n := oks.Load(); n != 1 {
		t.Fatalf("the hook answered %d deliveries 200, want 1", n)
	}
	if d := table("").Data[0]; d.LastError != "" {
		t.Errorf("after a success: %+v; want no error", d)
	}
}
