package mapping

import (
	"strings"
	"testing"
)

// dutyConfig is a scenario named and keyed in Chinese.
func dutyConfig() Config {
	return Config{
		Name: "值班提醒",
		Fields: map[string]string{
			FieldTaskID: "编号", FieldTitle: "标题", FieldTaskPara: "内容", FieldCronPara: "时间",
			FieldTaskType: "方式", FieldTo: "接收人",
		},
		Defaults: map[string]any{"方式": "outbox"},
		Labels: map[string]map[string]string{
			"标题": {"en": "Title", "zh": "标题"},
			"时间": {"en": "When", "zh": " 时间 ", "zh-TW": "時間"},
		},
	}
}

func TestUnicodeScenario(t *testing.T) {
	t.Parallel()
	s := mustNew(t, dutyConfig())
	if s.Name() != "值班提醒" || s.Collection() != "值班提醒" || s.IDField() != "编号" || s.Field(FieldTo) != "接收人" {
		t.Errorf("got %+v", s.Config())
	}
	if got := s.Labels("时间"); got["en"] != "When" || got["zh"] != "时间" || got["zh-TW"] != "時間" {
		t.Errorf("labels of 时间 = %v, want en When, zh 时间 (trimmed), zh-TW 時間", got)
	}
	if s.Labels("内容") != nil {
		t.Errorf("labels of 内容 = %v, want none", s.Labels("内容"))
	}
	fields := map[string]any{"标题": "交接班", "内容": "八点交接", "时间": "daily 08:00", "接收人": "值班员", "备注": "x"}
	if err := s.ValidateFields(fields); err != nil {
		t.Fatalf("ValidateFields: %v", err)
	}
	id, err := s.AssignID(fields)
	if err != nil || !strings.HasPrefix(id, "r") || len(id) != 17 || checkID(id) != nil {
		t.Fatalf("AssignID = %q, %v; want an ASCII id r + 16", id, err)
	}
	tk, err := s.ToTask(rowOf(fields), goldenNow)
	if err != nil {
		t.Fatalf("ToTask: %v", err)
	}
	if tk.TaskID != id || tk.Scenario != "值班提醒" || tk.TaskPara != "八点交接" || tk.Params["title"] != "交接班" ||
		tk.CronPara != "daily 08:00" || tk.TaskType != "outbox" {
		t.Errorf("task = %+v", tk)
	}
	// A row without an id gets a derived one, ASCII too.
	tk, err = s.ToTask(rowOf(map[string]any{"内容": "x", "时间": "every 1h"}), goldenNow)
	if err != nil || checkID(tk.TaskID) != nil {
		t.Errorf("derived id = %q, %v", tk.TaskID, err)
	}
}

func TestUnicodeNames(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"标题", "Größe", "due_at", "_x", "título", "заголовок", "a1", "題名２"} {
		if !ValidFieldName(name) {
			t.Errorf("ValidFieldName(%q) = false, want true", name)
		}
	}
	for _, name := range []string{"", "1st", "a-b", "a b", "a.b", "a'b", `a"b`, "标题😀", "\u0301a",
		strings.Repeat("题", 22), "a\x00", string([]byte{0xff})} {
		if ValidFieldName(name) {
			t.Errorf("ValidFieldName(%q) = true, want false", name)
		}
	}
	if !ValidFieldName(strings.Repeat("题", 21)) {
		t.Error("21 Chinese characters (63 bytes) refused")
	}
	tests := []struct {
		name, wantErr string
		mod           func(*Config)
	}{
		{"ScenarioUpper", `name: must be`, func(c *Config) { c.Name = "Duty" }},
		{"ScenarioSymbol", `name: must be`, func(c *Config) { c.Name = "值班/提醒" }},
		{"ScenarioTooLong", `name: must be`, func(c *Config) { c.Name = strings.Repeat("值", 33) }},
		{"RowFieldSymbol", `fields.title: row field "标题!" must be`, func(c *Config) { c.Fields[FieldTitle] = "标题!" }},
		{"LabelUnmapped", `labels.备注: not a mapped row field`, func(c *Config) { c.Labels["备注"] = map[string]string{"en": "Note"} }},
		{"LabelLang", `labels.标题.English: not a language tag`, func(c *Config) { c.Labels["标题"]["English"] = "Title" }},
		{"LabelEmpty", `labels.标题.en: must be text`, func(c *Config) { c.Labels["标题"]["en"] = " " }},
		{"LabelLong", `labels.标题.en: 65 characters; at most 64`, func(c *Config) { c.Labels["标题"]["en"] = strings.Repeat("标", 65) }},
		{"LabelNewline", `labels.标题.en: must be one line`, func(c *Config) { c.Labels["标题"]["en"] = "a\nb" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := dutyConfig()
			tt.mod(&cfg)
			_, err := New(cfg)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("New = %v, want an error containing %q", err, tt.wantErr)
			}
		})
	}
	// The scenario owns its labels.
	cfg := dutyConfig()
	s := mustNew(t, cfg)
	cfg.Labels["标题"]["en"] = "changed"
	s.Labels("标题")["en"] = "changed too"
	if got := s.Labels("标题")["en"]; got != "Title" {
		t.Errorf("label after the caller's changes = %q, want Title", got)
	}
}
