package server

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"cronsheet/flow"
	"cronsheet/store"
	"cronsheet/task"
)

// errorRing keeps the newest run errors, for the status endpoint.
type errorRing struct {
	mu   sync.Mutex
	list []statusError
}

// statusError is one recent run error.
type statusError struct {
	At        time.Time     `json:"at"`
	TaskID    string        `json:"task_id"`
	TriggerID string        `json:"trigger_id"`
	State     task.RunState `json:"state"`
	Error     string        `json:"error"`
}

// maxLastErrors bounds the ring.
const maxLastErrors = 20

func (e *errorRing) add(r task.Run) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.list = append(e.list, statusError{At: time.Now().UTC(), TaskID: r.TaskID, TriggerID: r.TriggerID, State: r.State,
		Error: task.Truncate(r.Error, 300)})
	if len(e.list) > maxLastErrors {
		e.list = slices.Delete(e.list, 0, len(e.list)-maxLastErrors)
	}
}

func (e *errorRing) newestFirst() []statusError {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := slices.Clone(e.list)
	slices.Reverse(out)
	return out
}

// status is the answer of GET /api/v1/status (the system status of design note 003, docs/SEEDS.md).
type status struct {
	Node string `json:"node"`
	// Store is the store's health (store.Health: driver, server version,
	// replica set, transactions and change streams) and whether it answered.
	Store struct {
		store.Health
		OK    bool   `json:"ok"`
		Error string `json:"error,omitempty"`
	} `json:"store"`
	// Armed counts the tasks armed on this node; Pending the jobs among
	// them waiting for their instant, NextDue the soonest of those.
	Armed   int          `json:"armed"`
	Pending int          `json:"pending_jobs"`
	NextDue []statusNext `json:"next_due"`
	// Running, Failed and Dead list job ids (newest first, at most 100).
	Running []string `json:"running"`
	Failed  []string `json:"failed"`
	Dead    []string `json:"dead"`
	// Queues is the flow control: per concurrency group in flight,
	// waiting and limit; per host waiting.
	Queues     flow.Stats    `json:"queues"`
	LastErrors []statusError `json:"last_errors"`
	// Nodes are the processes in the store's node registry, each with its
	// last heartbeat and the tasks it held then; Live says whether that
	// beat is within the lease. Queues and Armed above are this node's.
	Nodes []statusNode `json:"nodes"`
	// ClockOffset is the store's clock minus this node's, in
	// milliseconds, as last measured (0 on a store without a clock).
	ClockOffset int64 `json:"clock_offset_ms"`
}

// statusNode is one entry of the node registry.
type statusNode struct {
	store.Node
	Live bool `json:"live"`
}

type statusNext struct {
	ID    string    `json:"id"`
	DueAt time.Time `json:"due_at"`
}

// maxStatusIDs bounds each id list of the status.
const maxStatusIDs = 100

func (s *Server) serveStatus(c *gin.Context) {
	ctx, cancel := context.WithTimeout(c.Request.Context(), 5*time.Second)
	defer cancel()
	var st status
	st.Node = s.cfg.NodeID
	h, err := s.store.Probe(ctx)
	st.Store.Health = h
	st.Store.Driver = s.cfg.Store.Driver
	if err != nil {
		st.Store.Error = err.Error()
	} else {
		st.Store.OK = true
	}
	armed := s.armer.armedJobs()
	st.Armed = armed.total
	st.Pending = len(armed.due)
	slices.SortFunc(armed.due, func(a, b statusNext) int { return a.DueAt.Compare(b.DueAt) })
	st.NextDue = append([]statusNext{}, armed.due[:min(len(armed.due), 10)]...)
	for _, q := range []struct {
		state task.RunState
		into  *[]string
	}{{task.RunRunning, &st.Running}, {task.RunFailed, &st.Failed}, {task.RunDead, &st.Dead}} {
		*q.into = []string{}
		runs, err := s.store.QueryRuns(ctx, store.RunQuery{Target: task.JobTargetID, State: q.state, Limit: maxStatusIDs})
		if err != nil {
			st.Store.OK, st.Store.Error = false, err.Error()
			continue
		}
		for _, r := range runs {
			if slices.Contains(*q.into, r.TaskID) {
				continue
			}
			// Listed only while that state is the job's latest: a dead
			// job backfilled to done is not dead any more.
			newest, err := s.store.QueryRuns(ctx, store.RunQuery{TaskID: r.TaskID, Limit: 1})
			if err != nil {
				st.Store.OK, st.Store.Error = false, err.Error()
				break
			}
			if len(newest) == 1 && newest[0].State == q.state {
				*q.into = append(*q.into, r.TaskID)
			}
		}
	}
	st.Nodes = []statusNode{}
	if nodes, err := s.nodes.nodes(ctx); err != nil {
		st.Store.OK, st.Store.Error = false, err.Error()
	} else {
		for _, n := range nodes {
			st.Nodes = append(st.Nodes, statusNode{Node: n, Live: n.BeatAt.After(s.clock.Now().Add(-s.cfg.Patrol.Lease))})
		}
	}
	st.ClockOffset = s.clock.Offset().Milliseconds()
	st.Queues = s.flow.Stats()
	st.LastErrors = append([]statusError{}, s.lastErrors.newestFirst()...)
	code := http.StatusOK
	if !st.Store.OK {
		code = http.StatusServiceUnavailable
	}
	c.JSON(code, st)
}
