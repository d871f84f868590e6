package mapping

import (
	"errors"
	"maps"
	"strings"
	"testing"

	"cronsheet/task"
)

func TestParamsField(t *testing.T) {
	t.Parallel()
	cfg := MemosConfig()
	cfg.ParamFields = []string{"day", "title"}
	s := mustNew(t, cfg)
	row := func(extra map[string]any) map[string]any {
		f := map[string]any{"memo_id": "m1", "content": "c", "when": "every 1h", "title": "T"}
		maps.Copy(f, extra)
		return f
	}
	for _, tt := range []struct {
		name  string
		extra map[string]any
		want  map[string]string
	}{
		{"Pairs", map[string]any{"params": "a=1; b = x=y \n c="}, map[string]string{"a": "1", "b": "x=y", "c": "", "title": "T"}},
		{"JSON", map[string]any{"params": `{"a": "1", "n": 2.5, "ok": true, "空": "值"}`},
			map[string]string{"a": "1", "n": "2.5", "ok": "true", "空": "值", "title": "T"}},
		{"ColumnThenParams", map[string]any{"day": "mon", "params": "x=1"}, map[string]string{"day": "mon", "x": "1", "title": "T"}},
		{"ParamsOverColumn", map[string]any{"day": 3, "params": "day=tue"}, map[string]string{"day": "tue", "title": "T"}},
		{"TitleWins", map[string]any{"params": "title=other"}, map[string]string{"title": "T"}},
		{"Blank", map[string]any{"params": "  "}, map[string]string{"title": "T"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fields := row(tt.extra)
			if err := s.ValidateFields(fields); err != nil {
				t.Fatalf("ValidateFields: %v", err)
			}
			tk, err := s.ToTask(rowOf(fields), goldenNow)
			if err != nil {
				t.Fatalf("ToTask: %v", err)
			}
			if !maps.Equal(tk.Params, tt.want) {
				t.Errorf("params = %v, want %v", tk.Params, tt.want)
			}
		})
	}
	many := make([]string, task.MaxParams+1)
	for i := range many {
		many[i] = "k" + strings.Repeat("x", i%50) + string(rune('a'+i%26)) + strings.Repeat("y", i/26) + "=1"
	}
	for _, bad := range []string{`{"a":`, `{"a": null}`, `{"a": [1]}`, `{"a":1} x`, `[1]`, "novalue", "=v", "a=1;a=2",
		"a}=1", strings.Repeat("k", 65) + "=1", strings.Join(many, ";")} {
		err := s.ValidateFields(row(map[string]any{"params": bad}))
		var ve *task.ValidationError
		if !errors.As(err, &ve) || ve.Field != "params" {
			t.Errorf("params %.50q: ValidateFields = %v, want an error naming params", bad, err)
		}
	}
	if err := s.ValidateFields(row(map[string]any{"params": 5})); err == nil {
		t.Error("a number as params accepted")
	}
	for _, pf := range [][]string{{"content"}, {"params"}, {"day", "day"}, {"bad-name"}, {"error"}} {
		c := MemosConfig()
		c.ParamFields = pf
		if _, err := New(c); err == nil || !strings.Contains(err.Error(), "param_fields[") {
			t.Errorf("param_fields %q: New = %v, want a param_fields error", pf, err)
		}
	}
}
