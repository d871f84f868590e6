package arming

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jonboulle/clockwork"

	"cronsheet/executors"
	"cronsheet/fire"
	"cronsheet/internal/testwait"
	"cronsheet/mapping/schedule"
	"cronsheet/store"
	"cronsheet/store/sqlite"
	"cronsheet/task"
)

// dstSchedule is one schedule run across a DST night and the local
// instants it must deliver between the night's start and end.
type dstSchedule struct {
	when string
	want []string // RFC 3339 in the zone, oldest first
}

// dstNight is a night on which the zone's clocks change, watched from
// local 23:55 the evening before to 05:00.
type dstNight struct {
	name  string
	zone  string
	day   string // YYYY-MM-DD of the change
	sched []dstSchedule
}

// dstNights are a spring-forward and a fall-back night in New York
// (02:00 EST → 03:00 EDT; 02:00 EDT → 01:00 EST) and in Berlin (02:00
// CET → 03:00 CEST; 03:00 CEST → 02:00 CET). The wanted instants follow
// package schedule's time rules: a wall time in the gap fires at the
// gap's end, once even when another wall time lands there too; a wall
// time shown twice fires at its first showing only; intervals are
// elapsed time from the anchor (23:55).
var dstNights = []dstNight{
	{name: "NewYorkSpring", zone: "America/New_York", day: "2026-03-08", sched: []dstSchedule{
		{"daily 02:30", []string{"2026-03-08T03:00:00-04:00"}},
		{"@hourly", []string{"2026-03-08T00:00:00-05:00", "2026-03-08T01:00:00-05:00",
			"2026-03-08T03:00:00-04:00", "2026-03-08T04:00:00-04:00", "2026-03-08T05:00:00-04:00"}},
		{"cron 30 * * * *", []string{"2026-03-08T00:30:00-05:00", "2026-03-08T01:30:00-05:00",
			"2026-03-08T03:00:00-04:00", "2026-03-08T03:30:00-04:00", "2026-03-08T04:30:00-04:00"}},
		{"cron 0 1-3 * * *", []string{"2026-03-08T01:00:00-05:00", "2026-03-08T03:00:00-04:00"}},
		{"every 1h", []string{"2026-03-08T00:55:00-05:00", "2026-03-08T01:55:00-05:00",
			"2026-03-08T03:55:00-04:00", "2026-03-08T04:55:00-04:00"}},
	}},
	{name: "NewYorkFall", zone: "America/New_York", day: "2026-11-01", sched: []dstSchedule{
		{"daily 02:30", []string{"2026-11-01T02:30:00-05:00"}},
		{"@hourly", []string{"2026-11-01T00:00:00-04:00", "2026-11-01T01:00:00-04:00",
			"2026-11-01T02:00:00-05:00", "2026-11-01T03:00:00-05:00", "2026-11-01T04:00:00-05:00",
			"2026-11-01T05:00:00-05:00"}},
		{"cron 30 * * * *", []string{"2026-11-01T00:30:00-04:00", "2026-11-01T01:30:00-04:00",
			"2026-11-01T02:30:00-05:00", "2026-11-01T03:30:00-05:00", "2026-11-01T04:30:00-05:00"}},
		{"cron 0 1-3 * * *", []string{"2026-11-01T01:00:00-04:00", "2026-11-01T02:00:00-05:00",
			"2026-11-01T03:00:00-05:00"}},
		{"every 1h", []string{"2026-11-01T00:55:00-04:00", "2026-11-01T01:55:00-04:00",
			"2026-11-01T01:55:00-05:00", "2026-11-01T02:55:00-05:00", "2026-11-01T03:55:00-05:00",
			"2026-11-01T04:55:00-05:00"}},
	}},
	{name: "BerlinSpring", zone: "Europe/Berlin", day: "2026-03-29", sched: []dstSchedule{
		{"daily 02:30", []string{"2026-03-29T03:00:00+02:00"}},
		{"@hourly", []string{"2026-03-29T00:00:00+01:00", "2026-03-29T01:00:00+01:00",
			"2026-03-29T03:00:00+02:00", "2026-03-29T04:00:00+02:00", "2026-03-29T05:00:00+02:00"}},
		{"cron 30 * * * *", []string{"2026-03-29T00:30:00+01:00", "2026-03-29T01:30:00+01:00",
			"2026-03-29T03:00:00+02:00", "2026-03-29T03:30:00+02:00", "2026-03-29T04:30:00+02:00"}},
		{"cron 0 1-3 * * *", []string{"2026-03-29T01:00:00+01:00", "2026-03-29T03:00:00+02:00"}},
		{"every 1h", []string{"2026-03-29T00:55:00+01:00", "2026-03-29T01:55:00+01:00",
			"2026-03-29T03:55:00+02:00", "2026-03-29T04:55:00+02:00"}},
	}},
	{name: "BerlinFall", zone: "Europe/Berlin", day: "2026-10-25", sched: []dstSchedule{
		{"daily 02:30", []string{"2026-10-25T02:30:00+02:00"}},
		{"@hourly", []string{"2026-10-25T00:00:00+02:00", "2026-10-25T01:00:00+02:00",
			"2026-10-25T02:00:00+02:00", "2026-10-25T03:00:00+01:00", "2026-10-25T04:00:00+01:00",
			"2026-10-25T05:00:00+01:00"}},
		{"cron 30 * * * *", []string{"2026-10-25T00:30:00+02:00", "2026-10-25T01:30:00+02:00",
			"2026-10-25T02:30:00+02:00", "2026-10-25T03:30:00+01:00", "2026-10-25T04:30:00+01:00"}},
		{"cron 0 1-3 * * *", []string{"2026-10-25T01:00:00+02:00", "2026-10-25T02:00:00+02:00",
			"2026-10-25T03:00:00+01:00"}},
		{"every 1h", []string{"2026-10-25T00:55:00+02:00", "2026-10-25T01:55:00+02:00",
			"2026-10-25T02:55:00+02:00", "2026-10-25T02:55:00+01:00", "2026-10-25T03:55:00+01:00",
			"2026-10-25T04:55:00+01:00"}},
	}},
}

// TestDSTNightDeliveries runs the engine (an Armer over gocron, the Firer,
// SQLite and the HTTP executor) on a fake clock across each DST night,
// five minutes at a time, and counts the callbacks at an httptest hook by
// slot: after every step, exactly the slots the schedule preview lists up
// to that instant have been delivered, each once: none doubled in the
// repeated hour, none lost in the skipped one.
func TestDSTNightDeliveries(t *testing.T) {
	for _, night := range dstNights {
		t.Run(night.name, func(t *testing.T) {
			t.Parallel()
			runDSTNight(t, night, false)
		})
	}
}

// TestDSTNightOutage is TestDSTNightDeliveries with the tasks released
// from 40 minutes before the clocks change to 20 minutes after (a store
// outage: reconcile releases them, publish arms them again) and misfire
// all: arming again replays the slots missed across the change, each
// once, and the slots after it still follow the preview; none of the
// repeated hour's first showing fires again in its second.
func TestDSTNightOutage(t *testing.T) {
	for _, night := range dstNights {
		t.Run(night.name, func(t *testing.T) {
			t.Parallel()
			runDSTNight(t, night, true)
		})
	}
}

// runDSTNight arms night's schedules at local 23:55 the evening before
// and moves the clock to 05:00 in five-minute steps, checking the
// deliveries after each step. With outage, the tasks are disarmed from
// 40 minutes before the clocks change to 20 minutes after, and armed
// again then with misfire all.
func runDSTNight(t *testing.T, night dstNight, outage bool) {
	loc, err := time.LoadLocation(night.zone)
	if err != nil {
		t.Fatal(err)
	}
	day, err := time.ParseInLocation(time.DateOnly, night.day, loc)
	if err != nil {
		t.Fatal(err)
	}
	start, end := day.Add(-5*time.Minute), time.Date(day.Year(), day.Month(), day.Day(), 5, 0, 0, 0, loc)
	const step = 5 * time.Minute
	_, change := day.ZoneBounds() // the instant the clocks change
	down, up := change.Add(-40*time.Minute), change.Add(20*time.Minute)
	if !outage {
		down, up = end.Add(time.Hour), end.Add(time.Hour)
	}

	n := newDSTNode(t, start)
	want := map[string][]time.Time{} // by task id, oldest first
	for i, s := range night.sched {
		id := "dst" + strconv.Itoa(i)
		previewed := previewSlots(t, s.when, night.zone, start, end)
		if got := formatIn(previewed, loc); !slices.Equal(got, s.want) {
			t.Fatalf("%q: the preview lists %v, the time rules say %v", s.when, got, s.want)
		}
		want[id] = previewed
		tk := &task.Task{TaskID: id, Scenario: "memos", TaskType: task.ChannelHTTP, ExecuteType: task.Periodic,
			CronPara: s.when, TZ: night.zone, TTL: time.Minute, Misfire: task.MisfireOnce, State: task.StateRunning,
			IsEnable: 1, Anchor: start, Targets: []string{"hook"}}
		if outage {
			tk.Misfire, tk.Overlap = task.MisfireAll, task.OverlapAllow
		}
		n.addTask(t, tk)
	}
	n.armAll(t)

	for now := start; !now.After(end); now = now.Add(step) {
		if now.After(start) {
			n.clock.Advance(step)
		}
		if now.Equal(up) {
			n.rearm(t)
		}
		released := now.After(down) && now.Before(up)
		n.settle(t, now, !released)
		if now.Equal(down) {
			for _, id := range n.ids {
				n.armer.Disarm(id)
			}
		}
		by := now
		if released {
			by = down
		}
		for i, s := range night.sched {
			id := "dst" + strconv.Itoa(i)
			var due []string
			for _, slot := range want[id] {
				if !slot.After(by) {
					due = append(due, slot.In(loc).Format(time.RFC3339))
				}
			}
			if got := n.hook.delivered(id, loc); !slices.Equal(got, due) {
				t.Fatalf("at %s, %q delivered %v; want %v", now.In(loc).Format(time.RFC3339), s.when, got, due)
			}
		}
	}
}

// previewSlots returns the slots the schedule preview lists for when in
// zone from start (its anchor, as the preview's from is) up to end: the
// same call of package schedule that GET /api/v1/schedule/preview makes.
func previewSlots(t *testing.T, when, zone string, start, end time.Time) []time.Time {
	t.Helper()
	s, err := schedule.Parse(when, zone)
	if err != nil {
		t.Fatalf("parse %q: %v", when, err)
	}
	var out []time.Time
	for _, f := range s.NextN(start, start, 100) {
		if !f.After(end) {
			out = append(out, f)
		}
	}
	return out
}

// formatIn formats instants as RFC 3339 in loc.
func formatIn(ts []time.Time, loc *time.Location) []string {
	out := make([]string, len(ts))
	for i, ts := range ts {
		out[i] = ts.In(loc).Format(time.RFC3339)
	}
	return out
}

// dstHook is the httptest receiver of the callbacks: it counts each by
// its Idempotency-Key, <task id>:<slot unix ms>:<target>.
type dstHook struct {
	mu   sync.Mutex
	keys []string // in order of arrival, repeats kept
}

func (h *dstHook) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.keys = append(h.keys, r.Header.Get(executors.HeaderIdempotencyKey))
	h.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

// count is how many callbacks arrived.
func (h *dstHook) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.keys)
}

// delivered returns the slots of taskID's callbacks, in loc, sorted, each
// as many times as it arrived.
func (h *dstHook) delivered(taskID string, loc *time.Location) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var slots []time.Time
	for _, k := range h.keys {
		parts := strings.Split(k, ":")
		if len(parts) != 3 || parts[0] != taskID {
			continue
		}
		ms, err := strconv.ParseInt(parts[1], 10, 64)
		if err != nil {
			continue
		}
		slots = append(slots, time.UnixMilli(ms))
	}
	slices.SortFunc(slots, time.Time.Compare)
	return formatIn(slots, loc)
}

// dstNode is one node's engine on a fake clock: SQLite, a Firer
// delivering through the HTTP executor to a dstHook, and an Armer over
// gocron, both reading the fake clock; Run is running.
type dstNode struct {
	st    *sqlite.Store
	clock *clockwork.FakeClock
	hook  *dstHook
	armer *Armer
	ids   []string

	mu        sync.Mutex
	started   int                      // scheduled fires begun (the Armer's OnFire)
	runs      map[string]task.RunState // by trigger id, as last stored (the Firer's OnRun)
	scheduled int                      // runs recorded with trigger schedule
}

func newDSTNode(t *testing.T, start time.Time) *dstNode {
	t.Helper()
	n := &dstNode{clock: clockwork.NewFakeClockAt(start), hook: &dstHook{}, runs: map[string]task.RunState{}}
	srv := httptest.NewServer(n.hook)
	t.Cleanup(srv.Close)
	var err error
	n.st, err = sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.st.Close() })
	if err := n.st.CreateTarget(t.Context(), &task.Target{ID: "hook", Kind: task.ChannelHTTP, State: task.TargetRunning,
		HTTP: &task.HTTPTarget{Method: "POST", URL: srv.URL}}); err != nil {
		t.Fatal(err)
	}
	httpExec, err := executors.NewHTTP(nil, executors.HTTPConfig{Allow: []string{"127.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(httpExec.Close)
	execs := executors.NewRegistry()
	execs.Register(task.ChannelHTTP, httpExec)

	logger := slog.New(slog.DiscardHandler)
	firer := fire.New(logger, fire.Config{Node: "n", OnRun: func(_ *task.Task, _ *task.Target, r task.Run) {
		n.mu.Lock()
		defer n.mu.Unlock()
		if _, seen := n.runs[r.TriggerID]; !seen && r.TriggerType == task.TriggerSchedule {
			n.scheduled++
		}
		n.runs[r.TriggerID] = r.State
	}}, n.st, execs, n.clock.Now)
	ctx, cancel := context.WithCancel(context.Background())
	n.armer, err = New(ctx, logger, Config{Node: "n", Clock: n.clock, OnFire: func(time.Time, time.Duration) {
		n.mu.Lock()
		n.started++
		n.mu.Unlock()
	}}, firer, n.st)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	runCtx, stopRun := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { defer close(ran); n.armer.Run(runCtx) }()
	t.Cleanup(func() {
		stopRun()
		<-ran
		n.armer.Shutdown()
		firer.Shutdown(context.Background())
		cancel()
	})
	return n
}

// addTask stores tk as a memos row's task.
func (n *dstNode) addTask(t *testing.T, tk *task.Task) {
	t.Helper()
	row := &task.Row{Scenario: "memos", ID: tk.TaskID, Fields: map[string]any{"x": 1}, IsActive: 1}
	if err := n.st.InsertRow(t.Context(), row); err != nil {
		t.Fatal(err)
	}
	if err := n.st.ApplySync(t.Context(), store.ApplySyncParams{Scenario: "memos", RowID: tk.TaskID,
		RowVersion: row.Version, Task: tk, IsActive: 1}); err != nil {
		t.Fatal(err)
	}
	n.ids = append(n.ids, tk.TaskID)
}

// armAll claims the node's tasks and arms them, as the publish patrol does.
func (n *dstNode) armAll(t *testing.T) {
	t.Helper()
	claimed, err := n.st.ClaimTasks(t.Context(), store.ClaimParams{Owner: "n", LeaseUntil: time.Now().Add(time.Hour), Limit: len(n.ids)})
	if err != nil || len(claimed) != len(n.ids) {
		t.Fatalf("ClaimTasks = %d tasks, %v; want %d", len(claimed), err, len(n.ids))
	}
	for i, err := range n.armer.ArmBatch(t.Context(), claimed) {
		if err != nil {
			t.Fatalf("arm %s: %v", claimed[i].TaskID, err)
		}
	}
}

// rearm arms the node's tasks again from the store, as publish does
// after reconcile released them (they are still claimed here).
func (n *dstNode) rearm(t *testing.T) {
	t.Helper()
	ts, err := n.st.GetTasks(t.Context(), n.ids)
	if err != nil || len(ts) != len(n.ids) {
		t.Fatalf("GetTasks = %d tasks, %v; want %d", len(ts), err, len(n.ids))
	}
	for i, err := range n.armer.ArmBatch(t.Context(), ts) {
		if err != nil {
			t.Fatalf("arm %s again: %v", ts[i].TaskID, err)
		}
	}
}

// settle waits until the node is quiet at now: every task armed (none,
// when not armed) and waiting in a bucket due after now whose gocron job
// exists, every scheduled fire begun has its run recorded, every run
// recorded has ended, and the hook has a callback for each. (A missed
// slot fired by arming is recorded before ArmBatch returns.)
func (n *dstNode) settle(t *testing.T, now time.Time, armed bool) {
	t.Helper()
	testwait.For(t, 10*time.Second, fmt.Sprintf("the fires due by %s to be delivered", now.Format(time.RFC3339)), func() bool {
		a := n.armer
		a.mu.Lock()
		for _, id := range n.ids {
			e := a.jobs[id]
			if !armed {
				if e != nil {
					a.mu.Unlock()
					return false
				}
				continue
			}
			if e == nil || !e.due.After(now) {
				a.mu.Unlock()
				return false
			}
			if b := a.buckets[e.due.UnixNano()]; b == nil || b.job == uuid.Nil {
				a.mu.Unlock()
				return false
			}
		}
		a.mu.Unlock()
		n.mu.Lock()
		defer n.mu.Unlock()
		for _, st := range n.runs {
			if !st.Final() {
				return false
			}
		}
		return n.started == n.scheduled && n.hook.count() == len(n.runs)
	})
}
