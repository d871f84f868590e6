package jsontype

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

type inner struct {
	Timeout int `json:"timeout"`
}

type Embedded struct {
	Limit uint `json:"limit"`
}

type sample struct {
	Embedded
	Delay   *float64          `json:"delay"`
	Retries int               `json:"max_retries"`
	Name    string            `json:"name"`
	Every   time.Duration     `json:"every"`
	Stamp   time.Time         `json:"stamp"`
	Inner   *inner            `json:"inner"`
	List    []inner           `json:"list"`
	Params  map[string]string `json:"params"`
	Raw     json.RawMessage   `json:"raw"`
	Plain   int
}

// TestNumbersFromText: a text holding a number decodes where a number is
// meant, at any depth; texts elsewhere, non-numeric texts, raw JSON and
// trailing data are left for the decoder.
func TestNumbersFromText(t *testing.T) {
	in := `{"delay":" 1.5 ","max_retries":"2","name":"7","inner":{"timeout":"30"},"list":[{"timeout":"4"}],` +
		`"params":{"n":"5"},"raw":{"x":"6"},"limit":"8","plain":"9","stamp":"2026-01-01T00:00:00Z"}`
	var got sample
	if err := json.Unmarshal(NumbersFromText([]byte(in), reflect.TypeOf(&got)), &got); err != nil {
		t.Fatalf("decode: %v", err)
	}
	if got.Delay == nil || *got.Delay != 1.5 || got.Retries != 2 || got.Name != "7" || got.Inner.Timeout != 30 ||
		got.List[0].Timeout != 4 || got.Params["n"] != "5" || string(got.Raw) != `{"x":"6"}` || got.Limit != 8 || got.Plain != 9 {
		t.Errorf("got %+v", got)
	}
	for _, keep := range []string{`{"max_retries":"two"}`, `{"max_retries":"NaN"}`, `{"max_retries":"1e999"}`,
		`{"name":"3"}`, `not json`, `{"max_retries":2}`} {
		if out := NumbersFromText([]byte(keep), reflect.TypeOf(&got)); string(out) != keep {
			t.Errorf("%s became %s, want it unchanged", keep, out)
		}
	}
	if out := string(NumbersFromText([]byte(`{"max_retries":"2"} x`), reflect.TypeOf(&got))); out != `{"max_retries":2} x` {
		t.Errorf("trailing data: %s", out)
	}
}

// TestMessageWords: the refusal of a wrong-typed value is in words, never
// a Go type name.
func TestMessageWords(t *testing.T) {
	cases := []struct {
		body, want string
	}{
		{`{"delay":true}`, "must be a number; got true or false"},
		{`{"max_retries":1.5}`, "must be a whole number; got the number 1.5"},
		{`{"max_retries":99999999999999999999}`, "must be a whole number in range; got the number 99999999999999999999"},
		{`{"name":1}`, "must be text; got a number"},
		{`{"inner":[]}`, "must be an object; got a list"},
		{`{"list":{}}`, "must be a list; got an object"},
		{`{"params":{"a":false}}`, "must be text; got true or false"},
	}
	for _, c := range cases {
		var s sample
		err := json.Unmarshal([]byte(c.body), &s)
		te, ok := err.(*json.UnmarshalTypeError)
		if !ok {
			t.Errorf("%s: %v is not a type error", c.body, err)
			continue
		}
		if got := Message(te); got != c.want {
			t.Errorf("%s: %q, want %q", c.body, got, c.want)
		}
	}
}
