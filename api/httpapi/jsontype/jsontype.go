// Package jsontype words the refusal of a JSON value of the wrong type
// for people: "must be a number; got text", never a Go type name. The
// HTTP API's decoding (package httpapi) and the jobs requests every
// channel takes (jobs/jobapi) both use it, so every door gives the same
// words. It depends on the standard library only.
package jsontype

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strings"
	"unicode/utf8"
)

var (
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	jsonNumber      = reflect.TypeFor[json.Number]()
)

// Words says what JSON a Go type takes: "a number", "a whole number",
// "text", "true or false", "a list" or "an object".
func Words(t reflect.Type) string {
	if t == nil {
		return "another kind of value"
	}
	if t == jsonNumber {
		return "a number"
	}
	if t.Kind() != reflect.Pointer && reflect.PointerTo(t).Implements(textUnmarshaler) {
		return "text"
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "text"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Pointer:
		return Words(t.Elem())
	}
	return "another kind of value"
}

// Got says what kind of JSON value json.UnmarshalTypeError.Value names
// ("number 1.5" → "the number 1.5", "string" → "text").
func Got(v string) string {
	kind, num, _ := strings.Cut(v, " ")
	switch kind {
	case "array":
		return "a list"
	case "object":
		return "an object"
	case "string":
		return "text"
	case "bool":
		return "true or false"
	case "number":
		if num != "" {
			return "the number " + truncate(num, 32)
		}
		return "a number"
	}
	return "a value of another kind"
}

// Message is the refusal of te without its field: "must be a number;
// got text". A number out of a whole number's range says so.
func Message(te *json.UnmarshalTypeError) string {
	want := Words(te.Type)
	got := Got(te.Value)
	if num, ok := strings.CutPrefix(te.Value, "number "); ok && want == "a whole number" && !strings.ContainsAny(num, ".eE") {
		return "must be a whole number in range; got " + got
	}
	return "must be " + want + "; got " + got
}

// truncate cuts s to at most n bytes on a rune boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
