package mapping

import (
	"slices"
	"strings"
	"testing"
)

func TestMemosConfig(t *testing.T) {
	t.Parallel()
	s := mustNew(t, MemosConfig())
	if s.Name() != "memos" || s.Collection() != "memos" || s.IDField() != "memo_id" {
		t.Errorf("got name %q collection %q id field %q", s.Name(), s.Collection(), s.IDField())
	}
	if s.Location().String() != "UTC" {
		t.Errorf("Location() = %v, want UTC", s.Location())
	}
	for _, canon := range CanonicalFields() {
		if s.Field(canon) == "" {
			t.Errorf("memos does not map %s", canon)
		}
	}
	for alias, want := range map[string]string{
		"每天早上8点": "daily 08:00", "每小时": "every 1h", "工作日早上9点": "weekdays 09:00",
	} {
		if got := MemosConfig().Aliases[alias]; got != want {
			t.Errorf("alias %q = %q, want %q", alias, got, want)
		}
	}
}

func TestConfigRoundTrip(t *testing.T) {
	t.Parallel()
	cfg := MemosConfig()
	cfg.Collection, cfg.IDField = "", ""
	s := mustNew(t, cfg)
	cfg.Fields["title"] = "changed" // the scenario owns its copy
	got := s.Config()
	if got.Collection != "memos" || got.IDField != "memo_id" || got.Fields["title"] != "title" {
		t.Errorf("Config() = %+v", got)
	}
	if _, err := New(got); err != nil {
		t.Errorf("New(s.Config()): %v", err)
	}
}

func TestNewErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		edit    func(c *Config)
		wantErr string
	}{
		{"NameEmpty", func(c *Config) { c.Name = "" }, `scenario "": name: must be 1..32`},
		{"NameUpper", func(c *Config) { c.Name = "Memos" }, `scenario "Memos": name: must be`},
		{"NameTooLong", func(c *Config) { c.Name = strings.Repeat("a", 33) }, "name: must be"},
		{"Collection", func(c *Config) { c.Collection = "memo-s" }, `collection: "memo-s" must be`},
		{"TZ", func(c *Config) { c.TZ = "Mars/Olympus" }, `tz: "Mars/Olympus" is not an IANA time zone`},
		{"TZLocal", func(c *Config) { c.TZ = "Local" }, `tz: "Local" is not allowed`},
		{"Misfire", func(c *Config) { c.Misfire = "never" }, `misfire: "never" is not skip, once or all`},
		{"UnknownCanonical", func(c *Config) { c.Fields["subject"] = "subj" }, "fields.subject: unknown canonical field"},
		{"DuplicateRowField", func(c *Config) { c.Fields["title"] = "content" }, `row field "content" is already mapped to`},
		{"ReservedRowField", func(c *Config) { c.Fields["title"] = "is_active" }, `fields.title: row field "is_active" is reserved`},
		{"ReservedAnyCase", func(c *Config) { c.Fields["title"] = "Version" }, `fields.title: row field "Version" is reserved`},
		{"BadRowFieldName", func(c *Config) { c.Fields["title"] = "1title" }, `fields.title: row field "1title" must be`},
		{"EmptyRowField", func(c *Config) { c.Fields["title"] = "" }, `fields.title: row field "" must be`},
		{"MissingCronPara", func(c *Config) { delete(c.Fields, "cron_para"); delete(c.Defaults, "when") }, "fields.cron_para: is required"},
		{"MissingTaskPara", func(c *Config) { delete(c.Fields, "task_para") }, "fields.task_para: is required"},
		{"MissingID", func(c *Config) { c.IDField = ""; delete(c.Fields, "task_id") }, "id_field: is required"},
		{"IDMismatch", func(c *Config) { c.IDField = "id2" }, `id_field: "id2" differs from fields.task_id "memo_id"`},
		{"DefaultUnmapped", func(c *Config) { c.Defaults["color"] = "red" }, "defaults.color: not a mapped row field"},
		{"DefaultForID", func(c *Config) { c.Defaults["memo_id"] = "x" }, "defaults.memo_id: the id field cannot have a default"},
		{"DefaultTimeoutType", func(c *Config) { c.Defaults["timeout"] = "soon" }, `defaults.timeout: "soon" is not a whole number`},
		{"DefaultTimeoutRange", func(c *Config) { c.Defaults["timeout"] = 0 }, "defaults.timeout: 0 is out of range"},
		{"DefaultChannel", func(c *Config) { c.Defaults["channel"] = "fax" }, `defaults.channel: "fax" is not email, sms or outbox`},
		{"DefaultActive", func(c *Config) { c.Defaults["active"] = "yes" }, `defaults.active: must be 1 or 0`},
		{"DefaultWhen", func(c *Config) { c.Defaults["when"] = "dayly 8:00" }, `defaults.when: "dayly 8:00": `},
		{"DefaultTitleType", func(c *Config) { c.Defaults["title"] = 3 }, "defaults.title: must be text, got a number"},
		{"DefaultStartYearOne", func(c *Config) { c.Defaults["start"] = "0001-01-01 00:00" }, "defaults.start: 0001-01-01T00:00:00Z is out of range"},
		{"DefaultTZ", func(c *Config) { c.Defaults["tz"] = "Nowhere" }, `defaults.tz: "Nowhere" is not an IANA`},
		{"AliasBad", func(c *Config) { c.Aliases["每天"] = "dayly 8:00" }, "aliases.每天: "},
		{"AliasEmptyKey", func(c *Config) { c.Aliases["  "] = "every 1h" }, "aliases: an alias key is empty"},
		{"AliasDuplicate", func(c *Config) { c.Aliases[" Hourly"] = "every 2h" }, "same key as another alias"},
		{"AliasTooLong", func(c *Config) { c.Aliases[strings.Repeat("a", 257)] = "every 1h" }, "longer than 256 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			cfg := MemosConfig()
			tt.edit(&cfg)
			s, err := New(cfg)
			if err == nil {
				t.Fatalf("New = %v, want error containing %q", s, tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("err = %q, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}

func TestNewMinimal(t *testing.T) {
	t.Parallel()
	s := mustNew(t, Config{
		Name:    "notes",
		IDField: "note_id",
		Fields:  map[string]string{"task_para": "body", "cron_para": "schedule"},
	})
	if s.Collection() != "notes" || s.IDField() != "note_id" || s.Field(FieldTaskType) != "" {
		t.Errorf("got %+v", s.Config())
	}
	tk, err := s.ToTask(nil, goldenNow)
	if err == nil || tk != nil {
		t.Fatal("nil row accepted")
	}
	tk, err = s.ToTask(rowOf(map[string]any{"body": "hi", "schedule": "every 1h"}), goldenNow)
	if err != nil {
		t.Fatal(err)
	}
	if tk.TaskType != "outbox" || tk.IsEnable != 1 || tk.TTL.Seconds() != 60 || tk.MaxRetries != 3 ||
		tk.Misfire != "once" || tk.TZ != "UTC" || tk.TaskID[0] != 'n' {
		t.Errorf("built-in defaults not applied: %+v", tk)
	}
}

func TestCanonicalFields(t *testing.T) {
	t.Parallel()
	got := CanonicalFields()
	if len(got) != 21 || len(slices.Compact(slices.Sorted(slices.Values(got)))) != 21 {
		t.Errorf("CanonicalFields() = %v", got)
	}
	got[0] = "mutated"
	if CanonicalFields()[0] != FieldTaskID {
		t.Error("CanonicalFields shares its slice")
	}
}
