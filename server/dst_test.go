package server

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jonboulle/clockwork"

	"cronsheet/config"
	"cronsheet/internal/testwait"
	"cronsheet/task"
)

// TestDSTNightOnANode runs a node on a fake clock (WithClock) across a
// spring-forward and a fall-back night in New York and in Berlin: rows
// made through the API with daily, hourly and cron schedules, synced,
// claimed, armed and fired by the node's own patrols, armer and firer,
// their callbacks counted at an HTTP target by slot. The clock moves from
// local 23:55 the evening before to 05:00 in five-minute steps; after
// each step every row has delivered exactly the slots
// GET /api/v1/schedule/preview lists up to then, each once: none doubled
// in the repeated hour, none lost in the skipped one. (Package arming's
// TestDSTNightDeliveries checks the preview's slots against the time
// rules, and the misfires of an outage across the change.)
func TestDSTNightOnANode(t *testing.T) {
	nights := []struct{ name, zone, day string }{
		{"NewYorkSpring", "America/New_York", "2026-03-08"},
		{"NewYorkFall", "America/New_York", "2026-11-01"},
		{"BerlinSpring", "Europe/Berlin", "2026-03-29"},
		{"BerlinFall", "Europe/Berlin", "2026-10-25"},
	}
	for _, night := range nights {
		t.Run(night.name, func(t *testing.T) {
			loc, err := time.LoadLocation(night.zone)
			if err != nil {
				t.Fatal(err)
			}
			day, err := time.ParseInLocation(time.DateOnly, night.day, loc)
			if err != nil {
				t.Fatal(err)
			}
			runNodeNight(t, loc, day)
		})
	}
}

// dstSchedules are the schedules each night runs, by memo id.
var dstSchedules = map[string]string{
	"daily":  "daily 02:30",
	"hourly": "@hourly",
	"cron30": "cron 30 * * * *",
	"cron13": "cron 0 1-3 * * *",
}

// runNodeNight runs dstSchedules on a node whose clock starts at local
// 23:55 the evening before day and moves to 05:00 on day.
func runNodeNight(t *testing.T, loc *time.Location, day time.Time) {
	start, end := day.Add(-5*time.Minute), time.Date(day.Year(), day.Month(), day.Day(), 5, 0, 0, 0, loc)
	const step = 5 * time.Minute
	clock := clockwork.NewFakeClockAt(start)
	h := startHook(t)
	w := &nightWatch{runs: map[string]task.RunState{}, armed: map[string]bool{}}
	b := setup(t, func(c *config.Config) {
		c.HTTP.Allow = []string{"127.0.0.0/8"}
		// No parking: the armer would hand parked tasks back to the store
		// with instants of the fake clock, which publish compares with
		// the store's (the host's) clock, hours or months away.
		c.Fire.ArmWindow = 0
	}, WithClock(clock), WithFireObserver(w.fired), WithRunObserver(w.ran), WithArmObserver(w.arm))

	target := map[string]any{"id": "hook", "kind": "http", "state": "running",
		"http": map[string]any{"method": "POST", "url": h.srv.URL + "/cb/{{task_id}}"}}
	if code := b.call(t, "POST", "/api/v1/targets", target, nil); code != http.StatusCreated {
		t.Fatalf("create target: status %d", code)
	}
	want := map[string][]string{} // by memo id: the preview's slots up to end, RFC 3339 in loc
	for id, when := range dstSchedules {
		want[id] = previewFires(t, b, when, loc, start, end)
		code := b.call(t, "POST", "/api/v1/scenarios/memos/rows", map[string]any{
			"memo_id": id, "content": "ping", "when": when, "tz": loc.String(), "targets": "hook",
		}, nil)
		if code != http.StatusCreated {
			t.Fatalf("create row %s: status %d", id, code)
		}
	}
	testwait.For(t, 10*time.Second, "the rows to be armed", func() bool { return w.armedCount() == len(dstSchedules) })

	for now := start; !now.After(end); now = now.Add(step) {
		if now.After(start) {
			clock.Advance(step)
		}
		settleNode(t, b, w, h, now)
		got := deliveredSlots(h, loc)
		for id := range dstSchedules {
			var due []string
			for _, f := range want[id] {
				if ft, _ := time.Parse(time.RFC3339, f); !ft.After(now) {
					due = append(due, f)
				}
			}
			if !slices.Equal(got[id], due) {
				t.Fatalf("at %s, %q delivered %v; the preview lists %v", now.In(loc).Format(time.RFC3339), dstSchedules[id], got[id], due)
			}
		}
	}
}

// previewFires asks the node's schedule preview for when's fires in loc
// from start (its anchor, as a row made then has) and keeps those up to
// end.
func previewFires(t *testing.T, b *testBundle, when string, loc *time.Location, start, end time.Time) []string {
	t.Helper()
	var body struct {
		Fires []string `json:"fires"`
	}
	q := url.Values{"when": {when}, "tz": {loc.String()}, "from": {start.Format(time.RFC3339)}, "n": {"50"}}
	if code := b.call(t, "GET", "/api/v1/schedule/preview?"+q.Encode(), nil, &body); code != http.StatusOK {
		t.Fatalf("preview %q: status %d", when, code)
	}
	var out []string
	for _, f := range body.Fires {
		ft, err := time.Parse(time.RFC3339, f)
		if err != nil {
			t.Fatalf("preview %q: fire %q: %v", when, f, err)
		}
		if !ft.After(end) {
			out = append(out, ft.In(loc).Format(time.RFC3339))
		}
	}
	if len(out) == 0 {
		t.Fatalf("preview %q lists no fire by %s", when, end)
	}
	return out
}

// deliveredSlots returns the slots of the hook's calls by task id, each
// as many times as it was called, in loc, sorted; read from each call's
// Idempotency-Key, <task id>:<slot unix ms>:<target>.
func deliveredSlots(h *hook, loc *time.Location) map[string][]string {
	slots := map[string][]time.Time{}
	for _, c := range h.seen() {
		parts := strings.Split(c.idemKey, ":")
		if len(parts) != 3 {
			continue
		}
		ms, err := strconv.ParseInt(parts[1], 10, 64)
		if err != nil {
			continue
		}
		slots[parts[0]] = append(slots[parts[0]], time.UnixMilli(ms))
	}
	out := map[string][]string{}
	for id, ts := range slots {
		slices.SortFunc(ts, time.Time.Compare)
		for _, s := range ts {
			out[id] = append(out[id], s.In(loc).Format(time.RFC3339))
		}
	}
	return out
}

// nightWatch follows a node through its observers.
type nightWatch struct {
	mu        sync.Mutex
	fires     int                      // scheduled fires begun
	runs      map[string]task.RunState // by trigger id, as last stored
	scheduled int                      // runs recorded with trigger schedule
	armed     map[string]bool          // task ids armed
}

func (w *nightWatch) fired(time.Time, time.Duration) {
	w.mu.Lock()
	w.fires++
	w.mu.Unlock()
}

func (w *nightWatch) ran(r task.Run) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if _, seen := w.runs[r.TriggerID]; !seen && r.TriggerType == task.TriggerSchedule {
		w.scheduled++
	}
	w.runs[r.TriggerID] = r.State
}

func (w *nightWatch) arm(taskID string) {
	w.mu.Lock()
	w.armed[taskID] = true
	w.mu.Unlock()
}

func (w *nightWatch) armedCount() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.armed)
}

// settleNode waits until the node is quiet at now: every row's task has
// its next fire after now stored (so its slots due by now have fired,
// and the next one is armed), every scheduled fire begun has its run
// recorded, every run has ended, and the hook has a call for each.
func settleNode(t *testing.T, b *testBundle, w *nightWatch, h *hook, now time.Time) {
	t.Helper()
	testwait.For(t, 10*time.Second, fmt.Sprintf("the fires due by %s to be delivered", now.Format(time.RFC3339)), func() bool {
		for id := range dstSchedules {
			tk, err := b.srv.store.GetTask(t.Context(), id)
			if err != nil || !tk.NextFire.After(now) {
				return false
			}
		}
		w.mu.Lock()
		defer w.mu.Unlock()
		for _, st := range w.runs {
			if !st.Final() {
				return false
			}
		}
		return w.fires == w.scheduled && len(h.seen()) == len(w.runs)
	})
}
