package mapping

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"
	"sync"
	"testing"

	"cronsheet/task"
)

func rowOf(fields map[string]any) *task.Row { return &task.Row{ID: "r1", Fields: fields} }

func TestValidateFields(t *testing.T) {
	t.Parallel()
	s := mustNew(t, MemosConfig())
	many := map[string]any{}
	for i := range MaxFields + 1 {
		many[fmt.Sprintf("f%d", i)] = "x"
	}
	tests := []struct {
		name      string
		fields    map[string]any
		wantField string // "" means valid
		wantMsg   string
	}{
		{name: "Nil"},
		{name: "Typical", fields: map[string]any{
			"memo_id": "m1", "title": "Hi", "content": "body", "when": "dayly 8:00", // meaning is ToTask's job
			"channel": "fax", "active": 1.0, "timeout": json.Number("60"), "retries": "3",
			"extra": nil, "flag": true, "_private": "x", "n": 3,
		}},
		{name: "ActiveForms", fields: map[string]any{"active": "true"}},
		{name: "ActiveZeroText", fields: map[string]any{"active": "0"}},
		{name: "EmptyValuesSkipKindChecks", fields: map[string]any{"active": "", "memo_id": nil, "timeout": " "}},
		{name: "TooMany", fields: many, wantField: "fields", wantMsg: "has 65 fields; at most 64"},
		{name: "EmptyName", fields: map[string]any{"": "x"}, wantField: "fields", wantMsg: "a field name is empty"},
		{name: "NameTooLong", fields: map[string]any{strings.Repeat("a", 65): "x"}, wantField: strings.Repeat("a", 64) + "…", wantMsg: "field name is 65 bytes long; at most 64"},
		{name: "NameDash", fields: map[string]any{"bad-name": "x"}, wantField: "bad-name", wantMsg: "field name must be letters"},
		{name: "NameDigit", fields: map[string]any{"1st": "x"}, wantField: "1st", wantMsg: "field name must be letters"},
		{name: "NameSymbol", fields: map[string]any{"标题😀": "x"}, wantField: "标题😀", wantMsg: "field name must be letters"},
		{name: "ReservedIsFetched", fields: map[string]any{"is_fetched": 1}, wantField: "is_fetched", wantMsg: "field name is reserved"},
		{name: "ReservedIsActive", fields: map[string]any{"is_active": 1}, wantField: "is_active", wantMsg: "field name is reserved"},
		{name: "ReservedError", fields: map[string]any{"error": "x"}, wantField: "error", wantMsg: "field name is reserved"},
		{name: "ReservedNextFire", fields: map[string]any{"next_fire": "x"}, wantField: "next_fire", wantMsg: "field name is reserved"},
		{name: "ReservedLastFire", fields: map[string]any{"last_fire": "x"}, wantField: "last_fire", wantMsg: "field name is reserved"},
		{name: "ReservedLastStatus", fields: map[string]any{"last_status": "x"}, wantField: "last_status", wantMsg: "field name is reserved"},
		{name: "ReservedVersion", fields: map[string]any{"Version": 2}, wantField: "Version", wantMsg: "field name is reserved"},
		{name: "List", fields: map[string]any{"tags": []any{"a"}}, wantField: "tags", wantMsg: "must be text, a number, true/false or null, got a list"},
		{name: "Object", fields: map[string]any{"meta": map[string]any{}}, wantField: "meta", wantMsg: "got an object"},
		{name: "NaN", fields: map[string]any{"n": math.NaN()}, wantField: "n", wantMsg: "must be a finite number"},
		{name: "BadJSONNumber", fields: map[string]any{"n": json.Number("1x")}, wantField: "n", wantMsg: "got a value of another kind"},
		{name: "ContentMax", fields: map[string]any{"content": strings.Repeat("x", 64<<10)}},
		{name: "ContentTooLong", fields: map[string]any{"content": strings.Repeat("x", 64<<10+1)}, wantField: "content", wantMsg: "is 65537 bytes long; at most 65536"},
		{name: "TitleTooLong", fields: map[string]any{"title": strings.Repeat("x", 4<<10+1)}, wantField: "title", wantMsg: "is 4097 bytes long; at most 4096"},
		{name: "UnknownTooLong", fields: map[string]any{"note": strings.Repeat("x", 4<<10+1)}, wantField: "note", wantMsg: "at most 4096"},
		{name: "ActiveYes", fields: map[string]any{"active": "yes"}, wantField: "active", wantMsg: `must be 1 or 0 (or true/false), got "yes"`},
		{name: "ActiveTwo", fields: map[string]any{"active": 2}, wantField: "active", wantMsg: "must be 1 or 0 (or true/false), got 2"},
		{name: "TimeoutFraction", fields: map[string]any{"timeout": 1.5}, wantField: "timeout", wantMsg: "1.5 is not a whole number"},
		{name: "RetriesText", fields: map[string]any{"retries": "three"}, wantField: "retries", wantMsg: `"three" is not a whole number`},
		{name: "RetriesBool", fields: map[string]any{"retries": true}, wantField: "retries", wantMsg: "must be a whole number, got true/false"},
		{name: "WhenNumber", fields: map[string]any{"when": 8}, wantField: "when", wantMsg: "must be text, got a number"},
		{name: "ToBool", fields: map[string]any{"to": false}, wantField: "to", wantMsg: "must be text, got true/false"},
		{name: "BadID", fields: map[string]any{"memo_id": "a b"}, wantField: "memo_id", wantMsg: `"a b" must be 1..64 of [A-Za-z0-9_.-]`},
		{name: "FirstErrorBySortedName", fields: map[string]any{"zz": []any{}, "aa": []any{}}, wantField: "aa"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := s.ValidateFields(tt.fields)
			if tt.wantField == "" {
				if err != nil {
					t.Fatalf("ValidateFields: %v", err)
				}
				return
			}
			var ve *task.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("err = %v (%T), want *task.ValidationError", err, err)
			}
			if ve.Field != tt.wantField || !strings.Contains(ve.Msg, tt.wantMsg) {
				t.Errorf("got %q / %q, want field %q with %q", ve.Field, ve.Msg, tt.wantField, tt.wantMsg)
			}
		})
	}
}

var generatedID = regexp.MustCompile(`^m[a-z2-7]{16}$`)

func TestAssignID(t *testing.T) {
	t.Parallel()
	s := mustNew(t, MemosConfig())
	tests := []struct {
		name     string
		fields   map[string]any
		want     string // "" = generated
		wantErr  string
		setField bool
	}{
		{name: "Kept", fields: map[string]any{"memo_id": "Standup_1.a-b"}, want: "Standup_1.a-b"},
		{name: "Max", fields: map[string]any{"memo_id": strings.Repeat("x", 64)}, want: strings.Repeat("x", 64)},
		{name: "Missing", fields: map[string]any{"title": "x"}, setField: true},
		{name: "Null", fields: map[string]any{"memo_id": nil}, setField: true},
		{name: "Blank", fields: map[string]any{"memo_id": "  "}, setField: true},
		{name: "TooLong", fields: map[string]any{"memo_id": strings.Repeat("x", 65)}, wantErr: "memo_id: "},
		{name: "Space", fields: map[string]any{"memo_id": "a b"}, wantErr: `memo_id: "a b" must be 1..64 of [A-Za-z0-9_.-]`},
		{name: "Slash", fields: map[string]any{"memo_id": "a/b"}, wantErr: `memo_id: "a/b" must be`},
		{name: "Number", fields: map[string]any{"memo_id": 7.0}, wantErr: "memo_id: must be text, got a number"},
		{name: "NilMap", fields: nil, wantErr: "fields: is missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			id, err := s.AssignID(tt.fields)
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) || !errors.Is(err, task.ErrInvalid) {
					t.Fatalf("AssignID = %q, %v; want error %q", id, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tt.want != "" && id != tt.want:
				t.Errorf("id = %q, want %q", id, tt.want)
			case tt.setField && !generatedID.MatchString(id):
				t.Errorf("generated id %q does not match %v", id, generatedID)
			case tt.setField && tt.fields["memo_id"] != id:
				t.Errorf("fields[memo_id] = %v, want %q", tt.fields["memo_id"], id)
			}
		})
	}
}

func TestAssignIDUnique(t *testing.T) {
	t.Parallel()
	s := mustNew(t, MemosConfig())
	var (
		mu   sync.Mutex
		seen = map[string]bool{}
		wg   sync.WaitGroup
	)
	for range 8 {
		wg.Go(func() {
			for range 500 {
				id, err := s.AssignID(map[string]any{})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if seen[id] {
					t.Errorf("duplicate id %q", id)
				}
				seen[id] = true
				mu.Unlock()
			}
		})
	}
	wg.Wait()
}
