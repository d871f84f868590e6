package mapping

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"cronsheet/task"
)

// Bounds on the fields of one row, checked by ValidateFields.
const (
	// MaxFields bounds how many fields one row may hold.
	MaxFields = 64
	// MaxFieldName bounds a field name, in bytes.
	MaxFieldName = 64
	// MaxFieldText bounds a text value, in bytes, except the task_para field
	// (task.MaxTaskPara).
	MaxFieldText = maxText
)

// idEncoding spells generated ids: lowercase base32 without padding.
var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// ValidateFields checks user input before it is stored: at most MaxFields
// fields; names of 1..64 bytes that ValidFieldName accepts (letters of any
// script, digits and _, not starting with a digit) and not reserved
// (ReservedFieldNames); values that are text, numbers
// (float64, json.Number or Go integers), true/false or null; text at most
// 64 KiB in the task_para field and 4 KiB elsewhere. The scenario's mapped
// fields are type-checked: text fields take text, ttl, max_retries and
// alert_after whole numbers (or text holding one), alert_absent a number
// of seconds or text ("600", "10m"), active 1/0/true/false, the id field
// a valid id; title, to and alert_to one line each (they become mail
// headers); no text holds a NUL. A params field given as a JSON object
// ({"day": "mon"}) is replaced in fields by its JSON text, which is how
// it is stored. Value ranges, enums, times and the
// schedule are ToTask's business, so a row can be saved and then flagged.
// Errors are *task.ValidationError naming the row field ("fields" when
// the problem is the set of fields as a whole).
func (s *Scenario) ValidateFields(fields map[string]any) error {
	if len(fields) > MaxFields {
		return task.Invalid("fields", "has %d fields; at most %d", len(fields), MaxFields)
	}
	for _, name := range sortedKeys(fields) {
		if err := checkFieldName(name); err != nil {
			return err
		}
		v := fields[name]
		if obj, ok := v.(map[string]any); ok && s.byRow[name] == FieldParams {
			// The README's {"day": "mon"}: a JSON object of params is
			// kept as its JSON text, the form a row stores, exports and
			// imports, so an export and its import give the same row.
			text, err := paramsObjectText(obj)
			if err != nil {
				return task.Invalid(name, "%s", err)
			}
			v, fields[name] = text, text
		}
		if err := checkScalar(v); err != nil {
			return task.Invalid(name, "%s", err)
		}
		canon, mapped := s.byRow[name]
		if str, ok := v.(string); ok && len(str) > maxTextFor(canon) {
			return task.Invalid(name, "is %d bytes long; at most %d", len(str), maxTextFor(canon))
		}
		if str, ok := v.(string); ok && strings.ContainsRune(str, 0) {
			return task.Invalid(name, "holds a NUL character (\\0); remove it")
		}
		if mapped && !isEmpty(v) {
			if err := checkKind(canon, v); err != nil {
				return task.Invalid(name, "%s", err)
			}
		}
	}
	return nil
}

func checkFieldName(name string) error {
	if name == "" {
		return task.Invalid("fields", "a field name is empty")
	}
	if !utf8.ValidString(name) {
		return task.Invalid("fields", "a field name is not UTF-8 text")
	}
	if len(name) > MaxFieldName {
		return task.Invalid(truncate(name), "field name is %d bytes long; at most %d", len(name), MaxFieldName)
	}
	if !ValidFieldName(name) {
		return task.Invalid(truncate(name), "field name must be letters, digits and _ (letters of any script), not starting with a digit")
	}
	if isReserved(name) {
		return task.Invalid(name, "field name is reserved for bookkeeping (%s)", strings.Join(ReservedFieldNames(), ", "))
	}
	return nil
}

// checkScalar allows only the JSON scalars.
func checkScalar(v any) error {
	switch v.(type) {
	case nil, string, bool:
		return nil
	}
	f, ok := numberValue(v)
	if !ok {
		return fmt.Errorf("must be text, a number, true/false or null, got %s", kind(v))
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Errorf("must be a finite number")
	}
	return nil
}

// checkKind type-checks a mapped field's value (not its range or meaning).
func checkKind(canon string, v any) error {
	var err error
	switch canon {
	case FieldTaskID:
		var id string
		if id, err = textValue(v, maxText); err == nil {
			err = checkID(id)
		}
	case FieldActive:
		_, err = flagValue(v)
	case FieldTTL, FieldMaxRetries, FieldAlertAfter:
		_, err = intValue(v)
	case FieldAlertAbsent:
		// Seconds as a number or text, or a duration text ("10m").
		if _, isNum := numberValue(v); !isNum {
			_, err = textValue(v, maxText)
		}
	case FieldParams:
		_, err = readParams(v) // a bad params field is refused when saved
	case FieldTitle, FieldTo, FieldAlertTo:
		// These become mail headers (Subject, To): a line break in one
		// would start another header.
		var text string
		if text, err = textValue(v, maxTextFor(canon)); err == nil && strings.ContainsAny(text, "\r\n") {
			err = errors.New("must be a single line (it becomes a mail header)")
		}
	default:
		_, err = textValue(v, maxTextFor(canon))
	}
	return err
}

// AssignID returns the task id of a row about to be saved: the id field's
// value when present (1..64 of [A-Za-z0-9_.-]), or else a new random id,
// which it also sets in fields. A new id is the scenario name's first letter
// (idPrefix) plus 16 lowercase base32 characters (80 random bits), e.g.
// "mq3jx7k2a7c4ne5bd".
func (s *Scenario) AssignID(fields map[string]any) (string, error) {
	name := s.IDField()
	if v := fields[name]; !isEmpty(v) {
		id, err := textValue(v, maxText)
		if err == nil {
			err = checkID(id)
		}
		if err != nil {
			return "", task.Invalid(name, "%s", err)
		}
		return id, nil
	}
	if fields == nil {
		return "", task.Invalid("fields", "is missing")
	}
	var b [10]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand docs)
	id := s.idPrefix() + idEncoding.EncodeToString(b[:])
	fields[name] = id
	return id, nil
}

// AssignIDFor is AssignID with a stable id instead of a random one: a row
// whose id field is empty gets the id derived from key (the same key gives
// the same id, shaped like AssignID's), which it also sets in fields. A CSV
// import keys each line by the file's content hash and the line, so
// running the same file again finds the rows it made.
func (s *Scenario) AssignIDFor(fields map[string]any, key string) (string, error) {
	name := s.IDField()
	if v := fields[name]; !isEmpty(v) || fields == nil {
		return s.AssignID(fields)
	}
	id := s.derivedID("\x00import\x00" + key)
	fields[name] = id
	return id, nil
}

// derivedID names the task of a row whose id field is empty: stable for the
// row, shaped like AssignID's ids.
func (s *Scenario) derivedID(rowID string) string {
	sum := sha256.Sum256([]byte(s.cfg.Name + "\x00" + rowID))
	return s.idPrefix() + idEncoding.EncodeToString(sum[:10])
}

// idPrefix is the first letter of generated ids: the scenario name's first
// letter when it is a-z, else "r" (ids are ASCII; 值班提醒's are r…).
func (s *Scenario) idPrefix() string {
	if c := s.cfg.Name[0]; c >= 'a' && c <= 'z' {
		return s.cfg.Name[:1]
	}
	return "r"
}

// paramsObjectText is the JSON text of a params object, its keys in
// order; readParams then checks its keys and values.
func paramsObjectText(obj map[string]any) (string, error) {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // "<b>" stays as written
	if err := enc.Encode(obj); err != nil {
		return "", errors.New("not a JSON object of text, number or true/false values")
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}
