package modelcheck

import (
	"testing"
	"time"
)

// TestChecksCatch feeds the delivery checks made-up deliveries: each
// catches what it names and lets through what the model allows.
func TestChecksCatch(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	d := func(trigger, task string, ms int) delivery {
		return delivery{TriggerID: trigger, Key: task + ":0:x", Arrived: at(ms)}
	}
	cases := []struct {
		name   string
		events []stopEvent
		kills  []time.Time
		final  map[string]time.Time
		exempt string
		ds     []delivery
		want   string // the check that must fire, "" for none
	}{
		{name: "one delivery", ds: []delivery{d("a", "j", 0)}},
		{name: "twice", ds: []delivery{d("a", "j", 0), d("a", "j", 500)}, want: "dup-trigger:job"},
		{name: "twice around a kill", ds: []delivery{d("a", "j", 0), d("a", "j", 500)}, kills: []time.Time{at(100)}},
		{name: "after cancel", events: []stopEvent{{at: at(0), stop: true, kind: "cancel"}},
			ds: []delivery{d("a", "j", 1000)}, want: "after-stop:cancel:job"},
		{name: "in flight at cancel", events: []stopEvent{{at: at(0), stop: true, kind: "cancel"}},
			ds: []delivery{d("a", "j", 100)}},
		{name: "after unblock", events: []stopEvent{{at: at(0), stop: true, kind: "block"}, {at: at(500), kind: "unblock"}},
			ds: []delivery{d("a", "j", 1000)}},
		{name: "manual trigger", events: []stopEvent{{at: at(0), stop: true, kind: "block"}}, exempt: "a",
			ds: []delivery{d("a", "j", 1000)}},
		{name: "re-sent after a kill", events: []stopEvent{{at: at(0), stop: true, kind: "cancel"}}, kills: []time.Time{at(200)},
			ds: []delivery{d("a", "j", -50), d("a", "j", 1000)}},
		{name: "first sent after a kill", events: []stopEvent{{at: at(0), stop: true, kind: "cancel"}}, kills: []time.Time{at(200)},
			ds: []delivery{d("a", "j", 1000)}, want: "after-stop:cancel:job+kill"},
		{name: "re-run after final", final: map[string]time.Time{"a": at(0)}, ds: []delivery{d("a", "j", -100), d("a", "j", 1000)},
			kills: []time.Time{at(500)}, want: "rerun-after-final:job"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := newModel(t, 1)
			m.addEntity(&entity{id: "j", kind: "job", events: c.events})
			m.kills, m.deliveries = c.kills, c.ds
			if c.final != nil {
				m.final = c.final
			}
			if c.exempt != "" {
				m.exempt[c.exempt] = true
			}
			m.checkDuplicates()
			m.checkAfterStop()
			m.checkRerunAfterFinal()
			var got []string
			for _, v := range m.violations {
				got = append(got, v.check)
			}
			if c.want == "" && len(got) > 0 || c.want != "" && (len(got) != 1 || got[0] != c.want) {
				t.Errorf("violations %v, want %q", got, c.want)
			}
		})
	}
}
