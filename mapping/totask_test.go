package mapping

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"cronsheet/task"
)

var update = flag.Bool("update", false, "rewrite testdata/*/*.want.json from the current output")

// goldenNow is the fixed "now" of every golden case: a Monday, with a
// fraction to show that Anchor drops it.
var goldenNow = time.Date(2026, 6, 15, 9, 30, 0, 500_000_000, time.UTC)

func mustNew(t *testing.T, cfg Config) *Scenario {
	t.Helper()
	s, err := New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return s
}

// TestToTaskGolden maps testdata/memos/<case>.input.json (a row's fields)
// and compares with <case>.want.json; run with -update to rewrite them.
func TestToTaskGolden(t *testing.T) {
	t.Parallel()
	s := mustNew(t, MemosConfig())
	inputs, err := filepath.Glob(filepath.Join("testdata", "memos", "*.input.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(inputs) < 15 {
		t.Fatalf("found %d golden cases, want at least 15", len(inputs))
	}
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".input.json")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			fields := readFields(t, in)
			row := &task.Row{Scenario: "memos", ID: "row-" + name, Fields: fields}
			got := goldenResult(t, s, row)
			if before := readFields(t, in); !reflect.DeepEqual(row.Fields, before) {
				t.Errorf("ToTask changed the row's fields:\n got %v\nwant %v", row.Fields, before)
			}
			wantPath := strings.TrimSuffix(in, ".input.json") + ".want.json"
			if *update {
				if err := os.WriteFile(wantPath, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(wantPath)
			if err != nil {
				t.Fatalf("%v (run go test ./mapping -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs (-want +got):\n-%s\n+%s", wantPath, want, got)
			}
		})
	}
}

func readFields(t *testing.T, path string) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	if err := json.Unmarshal(raw, &fields); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return fields
}

// goldenResult is the task's JSON, or {"error", "field"} when ToTask fails.
func goldenResult(t *testing.T, s *Scenario, row *task.Row) []byte {
	t.Helper()
	var v any
	tk, err := s.ToTask(row, goldenNow)
	if err != nil {
		var ve *task.ValidationError
		if !errors.As(err, &ve) {
			t.Fatalf("ToTask error %T is not a *task.ValidationError: %v", err, err)
		}
		if !errors.Is(err, task.ErrInvalid) {
			t.Errorf("errors.Is(err, task.ErrInvalid) = false")
		}
		v = map[string]string{"error": err.Error(), "field": ve.Field}
	} else {
		checkTask(t, s, tk)
		v = tk
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// checkTask asserts what holds for every mapped task.
func checkTask(t *testing.T, s *Scenario, tk *task.Task) {
	t.Helper()
	if want := goldenNow.Truncate(time.Millisecond); !tk.Anchor.Equal(want) {
		t.Errorf("Anchor = %v, want now (%v) to the millisecond", tk.Anchor, goldenNow)
	}
	if tk.State != task.StateRunning || !tk.ExecuteType.Valid() || !tk.TaskType.Valid() || !tk.Misfire.Valid() {
		t.Errorf("state/enums invalid: %+v", tk)
	}
	sched, err := Schedule(tk)
	if err != nil {
		t.Fatalf("Schedule(task): %v", err)
	}
	if sched.String() != tk.CronPara {
		t.Errorf("CronPara %q is not canonical: reparses as %q", tk.CronPara, sched.String())
	}
	if again, err := s.ParseSchedule(tk.CronPara, tk.TZ); err != nil || again.String() != tk.CronPara {
		t.Errorf("ParseSchedule(%q, %q) = %v, %v", tk.CronPara, tk.TZ, again, err)
	}
}

func TestToTask(t *testing.T) {
	t.Parallel()
	s := mustNew(t, MemosConfig())
	tests := []struct {
		name    string
		row     *task.Row
		check   func(t *testing.T, tk *task.Task)
		wantErr string
	}{
		{name: "NilRow", wantErr: "row: is missing"},
		{
			name:    "OtherScenario",
			row:     &task.Row{Scenario: "orders", Fields: map[string]any{"when": "every 1h"}},
			wantErr: `scenario: row belongs to "orders", not "memos"`,
		},
		{
			name:    "NoIDAnywhere",
			row:     &task.Row{Fields: map[string]any{"when": "every 1h"}},
			wantErr: "memo_id: is required",
		},
		{
			name: "JSONNumbers",
			row: &task.Row{ID: "r", Fields: map[string]any{
				"memo_id": "n1", "when": "every 1h", "active": json.Number("0"),
				"timeout": json.Number("90"), "retries": json.Number("7"),
			}},
			check: func(t *testing.T, tk *task.Task) {
				if tk.IsEnable != 0 || tk.TTL != 90*time.Second || tk.MaxRetries != 7 {
					t.Errorf("got IsEnable %d TTL %v MaxRetries %d", tk.IsEnable, tk.TTL, tk.MaxRetries)
				}
			},
		},
		{
			name: "DerivedIDIsStable",
			row:  &task.Row{ID: "row-42", Fields: map[string]any{"when": "every 1h"}},
			check: func(t *testing.T, tk *task.Task) {
				again, err := s.ToTask(&task.Row{ID: "row-42", Fields: map[string]any{"when": "daily 08:00"}}, goldenNow)
				if err != nil || again.TaskID != tk.TaskID || checkID(tk.TaskID) != nil || tk.TaskID[0] != 'm' {
					t.Errorf("derived ids %q, %v; want equal, valid, starting with m", tk.TaskID, again)
				}
			},
		},
		{
			name:    "StartYearOne",
			row:     &task.Row{ID: "r", Fields: map[string]any{"when": "every 1h", "start": "0001-01-01 00:00"}},
			wantErr: "start: 0001-01-01T00:00:00Z is out of range: give a time from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z",
		},
		{
			name:    "EndYearOneRFC3339",
			row:     &task.Row{ID: "r", Fields: map[string]any{"when": "every 1h", "end": "0001-01-01T00:00:00Z"}},
			wantErr: "end: 0001-01-01T00:00:00Z is out of range: give a time from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z",
		},
		{
			name:    "StartBeforeEpoch",
			row:     &task.Row{ID: "r", Fields: map[string]any{"when": "every 1h", "start": "1969-12-31 23:59"}},
			wantErr: "start: 1969-12-31T23:59:00Z is out of range: give a time from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z",
		},
		{
			name:    "ContentTooLong",
			row:     &task.Row{ID: "r", Fields: map[string]any{"when": "every 1h", "content": strings.Repeat("x", task.MaxTaskPara+1)}},
			wantErr: "content: is 65537 bytes long; at most 65536",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tk, err := s.ToTask(tt.row, goldenNow)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tt.check(t, tk)
		})
	}
}

func TestToTaskScenarioDefaults(t *testing.T) {
	t.Parallel()
	cfg := MemosConfig()
	cfg.TZ = "Asia/Shanghai"
	cfg.Misfire = "skip"
	cfg.Defaults["channel"] = "email"
	cfg.Defaults["to"] = "owner@example.com"
	cfg.Defaults["when"] = "每天早上8点"
	s := mustNew(t, cfg)
	fields := map[string]any{"memo_id": "d1", "content": "x"}
	tk, err := s.ToTask(&task.Row{ID: "r", Fields: fields}, goldenNow)
	if err != nil {
		t.Fatal(err)
	}
	if tk.TZ != "Asia/Shanghai" || tk.Misfire != task.MisfireSkip || tk.TaskType != task.ChannelEmail ||
		tk.Params[task.ParamTo] != "owner@example.com" || tk.CronPara != "daily 08:00" {
		t.Errorf("scenario defaults not applied: %+v", tk)
	}
	if len(fields) != 2 {
		t.Errorf("defaults leaked into the row: %v", fields)
	}
}

func TestParseSchedule(t *testing.T) {
	t.Parallel()
	s := mustNew(t, MemosConfig())
	tests := []struct {
		name, text, tz, want, wantErr string
	}{
		{name: "Alias", text: "每小时", want: "every 1h"},
		{name: "Plain", text: "daily 08:00", tz: "Asia/Shanghai", want: "daily 08:00"},
		{name: "Empty", text: " ", wantErr: "when: is required"},
		{name: "BadTZ", text: "daily 08:00", tz: "Nowhere/City", wantErr: `tz: "Nowhere/City" is not an IANA time zone (like Asia/Shanghai)`},
		{name: "LocalTZ", text: "daily 08:00", tz: "Local", wantErr: `tz: "Local" is not allowed; name an IANA zone like Asia/Shanghai`},
		{name: "Typo", text: "dayly 8:00", wantErr: `when: "dayly 8:00": unknown word`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			sched, err := s.ParseSchedule(tt.text, tt.tz)
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want prefix %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := sched.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestScheduleError(t *testing.T) {
	t.Parallel()
	_, err := Schedule(&task.Task{TaskID: "x", CronPara: "dayly 8:00"})
	if err == nil || !strings.HasPrefix(err.Error(), `task "x": cron_para: `) {
		t.Fatalf("err = %v", err)
	}
}

func TestAnchorIsTheExactInstant(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 6, 15, 9, 30, 0, 0, time.UTC)
	tests := []struct {
		name string
		now  time.Time
		want time.Time
	}{
		{"WholeSecondStays", base, base},
		{"FractionStays", base.Add(500 * time.Millisecond), base.Add(500 * time.Millisecond)},
		{"BelowMillisecondDrops", base.Add(time.Nanosecond), base},
		{"OtherZoneBecomesUTC", base.In(time.FixedZone("X", 3600)), base},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := Anchor(tt.now); !got.Equal(tt.want) || got.Location() != time.UTC {
				t.Errorf("Anchor(%v) = %v, want %v in UTC", tt.now, got, tt.want)
			}
		})
	}
}
