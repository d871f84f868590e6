package declared

import (
	"errors"
	"slices"
	"testing"
)

func TestParseRefusesWithLineAndField(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		body  string
		line  int
		field string
	}{
		{"NoName", "targets: {}\n", 1, "name"},
		{"BadName", "name: 'a b'\n", 1, "name"},
		{"UnknownKey", "name: a\njobs: {}\n", 2, "jobs"},
		{"NotYAML", "name: a\ntargets: [\n", 2, ""},
		{"TargetTwice", "name: a\ntargets:\n  t: {kind: email}\n  t: {kind: email}\n", 4, "targets.t"},
		{"FieldTwice", "name: a\ntargets:\n  t: {kind: email, kind: sms}\n", 3, "targets.t.kind"},
		{"TargetIDDiffers", "name: a\ntargets:\n  t: {id: u, kind: email}\n", 3, "targets.t.id"},
		{"MarkerLabel", "name: a\nflows:\n  f:\n    labels:\n      managed_by: b\n", 5, "flows.f.labels.managed_by"},
		{"RowMarker", "name: a\nrows:\n  memos:\n    r1:\n      managed_by: b\n", 5, "rows.memos.r1.managed_by"},
		{"RowList", "name: a\nrows:\n  memos:\n    r1:\n      when: [daily]\n", 5, "rows.memos.r1.when"},
		{"RowID", "name: a\nrows:\n  memos:\n    'a b': {when: every 1m}\n", 4, "rows.memos.a b"},
		{"RowFieldName", "name: a\nrows:\n  值班:\n    r1: {1x: y}\n", 4, "rows.值班.r1.1x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse("f.yaml", []byte(tt.body))
			var fe *FileError
			if !errors.As(err, &fe) || fe.Line != tt.line || fe.Field != tt.field || fe.Path != "f.yaml" {
				t.Fatalf("Parse = %#v (%v); want f.yaml:%d naming %q", err, err, tt.line, tt.field)
			}
		})
	}
}

func TestCheckRefusesWithLineAndField(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		body  string
		line  int
		field string
	}{
		{"Unknown", "name: a\ntargets:\n  t:\n    kind: email\n    colour: red\n", 5, "targets.t.colour"},
		{"Type", "name: a\ntargets:\n  t:\n    kind: http\n    http:\n      timeout: soon\n", 6, "targets.t.http.timeout"},
		{"Model", "name: a\ntargets:\n  t:\n    kind: http\n    http:\n      method: PUT\n      url: https://x/\n", 6, "targets.t.http.method"},
		{"FlowState", "name: a\nflows:\n  f:\n    state: idle\n", 4, "flows.f.state"},
		{"FlowStep", "name: a\nflows:\n  f:\n    start: s\n    steps:\n      - {id: s, targets: []}\n", 6, "flows.f.steps[0].targets"},
		{"Version", "name: a\ntargets:\n  t: {kind: email, version: 3}\n", 3, "targets.t.version"},
		{"StepNoRecipient", "name: a\ntargets:\n  m: {kind: email}\nflows:\n  f:\n    start: s\n    steps:\n" +
			"      - {id: s, targets: [m]}\n", 8, "flows.f.steps[0].params.to"},
		{"StepBadRecipient", "name: a\ntargets:\n  m: {kind: sms}\nflows:\n  f:\n    start: s\n    steps:\n" +
			"      - {id: s, targets: [m], params: {to: 'a@b.c'}}\n", 8, "flows.f.steps[0].params.to"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, err := Parse("f.yaml", []byte(tt.body))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			err = f.Check()
			var fe *FileError
			if !errors.As(err, &fe) || fe.Line != tt.line || fe.Field != tt.field {
				t.Fatalf("Check = %v; want f.yaml:%d naming %q", err, tt.line, tt.field)
			}
		})
	}
}

func TestParseKeepsValuesAndMarksRows(t *testing.T) {
	t.Parallel()
	body := "name: team\ntargets:\nrows:\n  值班提醒:\n    d1: {标题: 早班, 次数: 3, 开: true, 日期: 2026-12-01, 空: null, 时间: '08:00'}\n"
	f, err := Parse("f.yaml", []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	if !f.HasTargets || f.HasFlows || !f.HasRows || len(f.Targets) != 0 || len(f.Rows) != 1 {
		t.Fatalf("kinds = %v %v %v, %d targets, %d rows; want targets and rows declared, one row", f.HasTargets, f.HasFlows,
			f.HasRows, len(f.Targets), len(f.Rows))
	}
	r := f.Rows[0]
	want := map[string]any{"标题": "早班", "次数": int64(3), "开": true, "日期": "2026-12-01", "空": nil, "时间": "08:00",
		MarkerKey: "team"}
	if r.Scenario != "值班提醒" || r.ID != "d1" || len(r.Fields) != len(want) {
		t.Fatalf("row = %s/%s %v; want 值班提醒/d1 %v", r.Scenario, r.ID, r.Fields, want)
	}
	for k, v := range want {
		if r.Fields[k] != v {
			t.Errorf("field %s = %#v; want %#v", k, r.Fields[k], v)
		}
	}
}

func TestDiffMaps(t *testing.T) {
	t.Parallel()
	w := map[string]any{"name": "a", "http": map[string]any{"url": "u", "method": "POST"}, "steps": []any{"x"}, "tz": ""}
	h := map[string]any{"name": "a", "http": map[string]any{"url": "v", "method": "POST"}, "steps": []any{"y"}}
	if got := diffMaps(w, h, ""); !slices.Equal(got, []string{"http.url", "steps"}) {
		t.Errorf("diffMaps = %v; want [http.url steps]", got)
	}
	if got := diffMaps(w, w, ""); len(got) != 0 {
		t.Errorf("diffMaps of one map = %v; want none", got)
	}
}

func TestChangeString(t *testing.T) {
	t.Parallel()
	c := Change{Kind: KindRow, Scenario: "值班提醒", ID: "d1", Action: Update, Fields: []string{"标题", "时间"}}
	if got := c.String(); got != "update row 值班提醒/d1 (标题, 时间)" {
		t.Errorf("String = %q", got)
	}
}

func TestCheckTakesStepRecipients(t *testing.T) {
	t.Parallel()
	body := "name: a\ntargets:\n  m: {kind: email}\n  p: {kind: sms}\nflows:\n  f:\n    start: s\n    steps:\n" +
		"      - {id: s, targets: [m], params: {to: ann@example.com}, on: {success: [u]}}\n" +
		"      - {id: u, targets: [p, elsewhere], params: {to: '{{params.phone}}'}}\n"
	f, err := Parse("f.yaml", []byte(body))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if err := f.Check(); err != nil {
		t.Errorf("Check of steps with recipients = %v; want nil", err)
	}
}
