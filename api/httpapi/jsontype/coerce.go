package jsontype

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"strings"
)

var jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()

// NumbersFromText returns data, a JSON value to be decoded into a value of
// type t, with each text that holds a number ("30", " 1.5 ") turned into
// that number where t's field takes a plain number (an int, uint or float
// kind without an UnmarshalJSON of its own): where a number is meant,
// 30 and "30" are alike. Everything else is left as it is, and data that
// is not valid JSON is returned unchanged for the decoder to refuse.
func NumbersFromText(data []byte, t reflect.Type) []byte {
	if !hasNumberField(t, 0) {
		return data
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return data
	}
	if !coerce(&v, t, 0) {
		return data
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return data
	}
	// What followed the value (trailing data) is the decoder's to refuse.
	return append(bytes.TrimSuffix(out.Bytes(), []byte("\n")), data[dec.InputOffset():]...)
}

// maxDepth bounds the walk through nested types and values.
const maxDepth = 32

// isNumber reports whether t decodes from a plain JSON number.
func isNumber(t reflect.Type) bool {
	if t.Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(jsonUnmarshaler) || t == jsonNumber {
		return false
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

// hasNumberField reports whether a value of t may hold a plain number
// below its top.
func hasNumberField(t reflect.Type, depth int) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if depth > maxDepth || t.Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(jsonUnmarshaler) {
		return false
	}
	switch t.Kind() {
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if f.IsExported() || f.Anonymous {
				if isNumber(deref(f.Type)) || hasNumberField(f.Type, depth+1) {
					return true
				}
			}
		}
	case reflect.Slice, reflect.Array, reflect.Map:
		return isNumber(deref(t.Elem())) || hasNumberField(t.Elem(), depth+1)
	}
	return false
}

func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// coerce turns *v's numeric texts into numbers where t takes a number; it
// reports whether it changed anything.
func coerce(v *any, t reflect.Type, depth int) bool {
	t = deref(t)
	if depth > maxDepth {
		return false
	}
	if s, ok := (*v).(string); ok {
		if !isNumber(t) {
			return false
		}
		s = strings.TrimSpace(s)
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) || !json.Valid([]byte(s)) {
			return false
		}
		*v = json.Number(s)
		return true
	}
	if t.Implements(jsonUnmarshaler) || reflect.PointerTo(t).Implements(jsonUnmarshaler) {
		return false
	}
	changed := false
	switch x := (*v).(type) {
	case map[string]any:
		switch t.Kind() {
		case reflect.Struct:
			for k, val := range x {
				if ft, ok := fieldType(t, k); ok && coerce(&val, ft, depth+1) {
					x[k], changed = val, true
				}
			}
		case reflect.Map:
			for k, val := range x {
				if coerce(&val, t.Elem(), depth+1) {
					x[k], changed = val, true
				}
			}
		}
	case []any:
		if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			for i := range x {
				if coerce(&x[i], t.Elem(), depth+1) {
					changed = true
				}
			}
		}
	}
	return changed
}

// fieldType finds the type of t's field that the JSON key name decodes
// into, as encoding/json matches it: by its json tag or Go name, exactly
// or else ignoring case, through embedded structs.
func fieldType(t reflect.Type, name string) (reflect.Type, bool) {
	var folded reflect.Type
	for i := range t.NumField() {
		f := t.Field(i)
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == "-" {
			continue
		}
		if f.Anonymous && tag == "" && deref(f.Type).Kind() == reflect.Struct {
			if ft, ok := fieldType(deref(f.Type), name); ok {
				return ft, true
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		key := tag
		if key == "" {
			key = f.Name
		}
		if key == name {
			return f.Type, true
		}
		if folded == nil && strings.EqualFold(key, name) {
			folded = f.Type
		}
	}
	return folded, folded != nil
}
