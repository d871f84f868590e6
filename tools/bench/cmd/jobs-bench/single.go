package main

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"cronsheet/tools/bench/internal/benchkit"
	"cronsheet/tools/bench/internal/node"
)

// postSingles posts n jobs due in an hour, each calling back hookURL, one
// per request from o.clients clients to base's jobs API, and returns the
// time from the first request to the last answer.
func postSingles(o options, base, hookURL string, n int) (time.Duration, error) {
	c := newClient(o.clients)
	due := time.Now().Add(time.Hour).UTC().Format(time.RFC3339Nano)
	start := time.Now()
	err := benchkit.Parallel(n, o.clients, func(i int) error {
		body := fmt.Appendf(nil, `{"method":"POST","name":%q,"params":"{\"i\":%d}","at":%q}`, hookURL, i, due)
		var v struct {
			ID string `json:"id"`
		}
		if err := c.do(http.MethodPost, base+"/api/v1/jobs", body, http.StatusCreated, &v); err != nil {
			return err
		}
		if v.ID == "" {
			return errors.New("created job has no id")
		}
		return nil
	})
	return time.Since(start), err
}

// singleCase submits n jobs one per request from o.clients clients to a
// node of its own. The jobs are due in an hour, so none fires meanwhile:
// they wait in the store, held by no node, until an arm window before
// their instant (as asynq's scheduled jobs wait in Redis), so the case
// measures intake alone; how soon an edit is armed is measured by
// cmd/cronsheet-bench (edit-to-armed).
func singleCase(o options, n int) (intakeResult, error) {
	var armed arms
	h, err := startHook(0, nil)
	if err != nil {
		return intakeResult{}, err
	}
	defer h.close()
	nd, err := startNode(o, "", node.Settings{OnArm: armed.observe})
	if err != nil {
		return intakeResult{}, err
	}
	defer nd.close()
	start := time.Now() // the arms are timed from here
	took, err := postSingles(o, nd.Base, h.url, n)
	if err != nil {
		return intakeResult{}, err
	}
	r := intakeResult{name: "one job per request", n: n, clients: o.clients, perRequest: 1,
		took: took, armedN: armed.n.Load(), errors: nd.errors.Load()}
	if r.armedN == 0 {
		r.stored = "not armed: due in 1 h, each waits in the store until 2 min before"
	} else {
		// A node whose arm window is off (or longer than an hour) arms
		// them as they come: wait for that as the batch case does. A job
		// still unarmed when the count has not moved for a minute (or
		// after five) is reported, not waited for.
		benchkit.WaitCount(armed.n.Load, int64(n), time.Now().Add(5*time.Minute), time.Minute)
		r.armed, r.armedN = armed.since(start), armed.n.Load()
	}
	return r, nil
}
