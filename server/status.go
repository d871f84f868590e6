package server

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"cronsheet/admission"
	"cronsheet/arming"
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
	At     time.Time `json:"at"`
	TaskID string    `json:"task_id"`
	// TaskTitle is the task's title (task.Task.Title), read when the
	// status is served; "" when it has none or is gone.
	TaskTitle string        `json:"task_title,omitempty"`
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
	// them waiting for their instant, NextDue the soonest of those. Jobs
	// due more than two arming windows ahead wait in the store, held by
	// no node, and are in neither (the jobs API lists them).
	Armed   int          `json:"armed"`
	Pending int          `json:"pending_jobs"`
	NextDue []statusNext `json:"next_due"`
	// Running, Failed and Dead list job ids (newest first, at most 100).
	Running []string `json:"running"`
	Failed  []string `json:"failed"`
	Dead    []string `json:"dead"`
	// Queues is the flow control: per concurrency group in flight,
	// waiting and limit; per host waiting.
	Queues admission.Stats `json:"queues"`
	// CC is, per concurrency group with a slot held anywhere or a request
	// here, the group's slots held cluster-wide (every node's, from the
	// store) next to this node's local queue.
	CC         map[string]statusCC `json:"cc"`
	LastErrors []statusError       `json:"last_errors"`
	// Nodes are the processes in the store's node registry, each with its
	// last heartbeat and the tasks it held then; Live says whether that
	// beat is within the lease. Queues and Armed above are this node's.
	Nodes []statusNode `json:"nodes"`
	// ClockOffset is the store's clock minus this node's, in
	// milliseconds, as last measured (0 on a store without a clock).
	ClockOffset int64 `json:"clock_offset_ms"`
}

// statusCC is one concurrency group in the status.
type statusCC struct {
	// Held lists the group's slots in the store, every node's; a slot
	// whose lease ended (its node died) is marked expired until another
	// node reclaims it.
	Held []statusCCSlot `json:"held"`
	// HeldByNode counts the live slots per node.
	HeldByNode map[string]int `json:"held_by_node"`
	// Local is this node's queue of the group: waiting in its FIFO, and
	// in flight past it (holding a slot, or waiting for one).
	Local admission.GroupStats `json:"local"`
	// WaitingSlot counts the deliveries here that passed the FIFO and
	// wait for a slot in the store (all of them are held elsewhere).
	WaitingSlot int `json:"waiting_slot"`
}

// statusCCSlot is one slot of a group in the store.
type statusCCSlot struct {
	store.CCSlot
	Expired bool `json:"expired"`
}

// ccStatus builds the CC part of the status from the store's slots, this
// node's flow stats and its waiters.
func (s *Server) ccStatus(ctx context.Context, queues admission.Stats) (map[string]statusCC, error) {
	out := map[string]statusCC{}
	get := func(g string) statusCC {
		c, ok := out[g]
		if !ok {
			c = statusCC{Held: []statusCCSlot{}, HeldByNode: map[string]int{}}
		}
		return c
	}
	slots, err := s.store.ListCCSlots(ctx)
	now := s.clock.Now()
	for _, sl := range slots {
		c := get(sl.Group)
		expired := sl.LeaseUntil.Before(now)
		c.Held = append(c.Held, statusCCSlot{CCSlot: sl, Expired: expired})
		if !expired {
			c.HeldByNode[sl.Node]++
		}
		out[sl.Group] = c
	}
	for g, gs := range queues.Groups {
		if gs.Limit <= 0 {
			continue
		}
		c := get(g)
		c.Local = gs
		out[g] = c
	}
	for g, n := range s.cc.waitingByGroup() {
		c := get(g)
		c.WaitingSlot = n
		out[g] = c
	}
	return out, err
}

// statusNode is one entry of the node registry.
type statusNode struct {
	store.Node
	Live bool `json:"live"`
}

// statusNode returns n as the status lists it. A live node's Held is its
// last beat's. A node not live (no beat within the lease: killed, or
// stalled) says what it holds now, its claims in the store (by the owner
// index): its leases ran out with its beats and the claims were freed
// for the others, so a killed node shows 0 beside the successor that
// took its tasks, not the count of its last beat.
// The incarnation is listed as the deliveries carry it (X-Cronsheet-Instance,
// instanceOf): the host identity the registry keeps beside it (boot id,
// PID namespace, start time) is for judging peers gone, not for readers.
func (s *Server) statusNode(ctx context.Context, n store.Node) (statusNode, error) {
	n.Incarnation = instanceOf(n.Incarnation)
	sn := statusNode{Node: n, Live: n.BeatAt.After(s.clock.Now().Add(-s.cfg.Patrol.Lease))}
	if sn.Live {
		return sn, nil
	}
	claimed, err := s.store.ListClaimed(ctx, n.ID)
	if err != nil {
		return sn, fmt.Errorf("list claims of node %s: %w", n.ID, err)
	}
	sn.Held = len(claimed)
	return sn, nil
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
	armed, pending := s.armer.Summary()
	st.Armed = armed
	st.Pending = len(pending)
	slices.SortFunc(pending, func(a, b arming.Pending) int { return a.DueAt.Compare(b.DueAt) })
	st.NextDue = []statusNext{}
	for _, p := range pending[:min(len(pending), 10)] {
		st.NextDue = append(st.NextDue, statusNext{ID: p.ID, DueAt: p.DueAt})
	}
	for _, q := range []struct {
		state task.RunState
		into  *[]string
	}{{task.RunRunning, &st.Running}, {task.RunFailed, &st.Failed}} {
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
	if st.Dead, err = s.deadJobIDs(ctx); err != nil {
		st.Store.OK, st.Store.Error = false, err.Error()
	}
	st.Nodes = []statusNode{}
	if nodes, err := s.nodes.nodes(ctx); err != nil {
		st.Store.OK, st.Store.Error = false, err.Error()
	} else {
		for _, n := range nodes {
			sn, err := s.statusNode(ctx, n)
			if err != nil {
				st.Store.OK, st.Store.Error = false, err.Error()
			}
			st.Nodes = append(st.Nodes, sn)
		}
	}
	st.ClockOffset = s.clock.Offset().Milliseconds()
	st.Queues = s.admission.Stats()
	if st.CC, err = s.ccStatus(ctx, st.Queues); err != nil {
		st.Store.OK, st.Store.Error = false, err.Error()
	}
	st.LastErrors = append([]statusError{}, s.lastErrors.newestFirst()...)
	s.titleErrors(ctx, st.LastErrors)
	code := http.StatusOK
	if !st.Store.OK {
		code = http.StatusServiceUnavailable
	}
	c.JSON(code, st)
}

// titleErrors names the tasks of errs by their titles, read in one batch;
// a failed read leaves them untitled (the page shows the ids).
func (s *Server) titleErrors(ctx context.Context, errs []statusError) {
	if len(errs) == 0 {
		return
	}
	ids := make([]string, len(errs))
	for i, e := range errs {
		ids[i] = e.TaskID
	}
	tasks, err := s.store.GetTasks(ctx, ids)
	if err != nil {
		s.logger.WarnContext(ctx, "status: read the titles of the last errors", "err", err)
		return
	}
	titles := make(map[string]string, len(tasks))
	for _, t := range tasks {
		titles[t.TaskID] = t.Title()
	}
	for i := range errs {
		errs[i].TaskTitle = titles[errs[i].TaskID]
	}
}
