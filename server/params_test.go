package server

import (
	"net/http"
	"strings"
	"testing"

	"cronsheet/config"
	"cronsheet/mapping"
)

// TestRowParamsFillTemplates: a row's params field (a JSON object or
// key=value pairs) and a scenario's param_fields fill the {{…}} templates
// of its HTTP target on scheduled fires, delivered to a real local
// listener; a bad params field is a 400 naming it.
func TestRowParamsFillTemplates(t *testing.T) {
	h := startHook(t)
	shifts := mapping.Config{
		Name: "shifts", IDField: "shift_id",
		Fields: map[string]string{mapping.FieldTaskID: "shift_id", mapping.FieldTaskPara: "note",
			mapping.FieldCronPara: "when", mapping.FieldTargets: "targets", mapping.FieldParams: "extra"},
		ParamFields: []string{"day", "班次"},
	}
	b := setup(t, func(c *config.Config) {
		c.HTTP.Allow = []string{"127.0.0.0/8"}
		c.Scenarios = []mapping.Config{shifts}
	})
	target := map[string]any{"id": "dayhook", "kind": "http", "state": "running",
		"http": map[string]any{"method": "POST", "url": h.srv.URL + "/day/{{day}}/{{班次}}"}}
	if code := b.call(t, "POST", "/api/v1/targets", target, nil); code != http.StatusCreated {
		t.Fatalf("create target: status %d", code)
	}
	rows := []struct{ scenario, id, want string }{
		{"memos", "kv", "/day/mon/早班"},
		{"memos", "js", "/day/tue/2"},
		{"shifts", "col", "/day/wed/夜班"},
		{"shifts", "over", "/day/thu/夜班"}, // the params field wins over the day column
	}
	bodies := []map[string]any{
		{"memo_id": "kv", "content": "ping", "when": "every 1s", "targets": "dayhook", "params": " day = mon ; 班次=早班; "},
		{"memo_id": "js", "content": "ping", "when": "every 1s", "targets": "dayhook", "params": `{"day": "tue", "班次": 2}`},
		{"shift_id": "col", "note": "ping", "when": "every 1s", "targets": "dayhook", "day": "wed", "班次": "夜班"},
		{"shift_id": "over", "note": "ping", "when": "every 1s", "targets": "dayhook", "day": "wed", "班次": "夜班", "extra": "day=thu"},
	}
	for i, r := range rows {
		if code := b.call(t, "POST", "/api/v1/scenarios/"+r.scenario+"/rows", bodies[i], nil); code != http.StatusCreated {
			t.Fatalf("create row %s: status %d", r.id, code)
		}
	}
	eventually(t, "a fire of every row at its filled-in URL", func() bool {
		got := map[string]bool{}
		for _, c := range h.seen() {
			got[c.path] = true
		}
		for _, r := range rows {
			if !got[r.want] {
				return false
			}
		}
		return true
	})
	for _, c := range h.seen() {
		run := b.run(t, c.triggerID)
		for _, r := range rows {
			if run.TaskID == r.id && c.path != r.want {
				t.Errorf("task %s called %s, want %s", r.id, c.path, r.want)
			}
		}
	}

	// Bad params are refused when saved, naming the field.
	for _, bad := range []struct{ params, want string }{
		{`{"day": `, "not a JSON object"},
		{`{"day": {"nested": 1}}`, `param "day" must be text, a number or true/false`},
		{"day", `"day" is not key=value`},
		{"day=mon; day=tue", `param "day" is given twice`},
		{"a{x}=1", "must not hold braces"},
		{"k=" + strings.Repeat("x", 5000), "at most 4096"},
	} {
		var e struct{ Error, Field string }
		code := b.call(t, "POST", "/api/v1/scenarios/memos/rows", map[string]any{
			"content": "c", "when": "every 1h", "params": bad.params}, &e)
		if code != http.StatusBadRequest || e.Field != "params" || !strings.Contains(e.Error, bad.want) {
			t.Errorf("params %.40q: status %d %+v, want 400 naming params with %q", bad.params, code, e, bad.want)
		}
	}
}
