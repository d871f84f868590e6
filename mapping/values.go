package mapping

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"cronsheet/task"
)

// Value readers. Each turns one row value into its typed form, or returns an
// error whose text is the reason only; callers add the row field's name.

const (
	maxText   = 4 << 10 // bytes of any string value but task_para
	maxIDLen  = 64
	maxTTLSec = int64(task.MaxTTL / time.Second)
)

var (
	idRE = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)
)

func maxTextFor(canon string) int {
	if canon == FieldTaskPara {
		return task.MaxTaskPara
	}
	return maxText
}

// isEmpty reports whether v counts as "not given": nil or blank text.
func isEmpty(v any) bool {
	if v == nil {
		return true
	}
	s, ok := v.(string)
	return ok && strings.TrimSpace(s) == ""
}

// kind names v's JSON type for messages.
func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "text"
	case bool:
		return "true/false"
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	if _, ok := numberValue(v); ok {
		return "a number"
	}
	return "a value of another kind"
}

// numberValue reads any Go or JSON number.
func numberValue(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int8:
		return float64(n), true
	case int16:
		return float64(n), true
	case int32:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint:
		return float64(n), true
	case uint8:
		return float64(n), true
	case uint16:
		return float64(n), true
	case uint32:
		return float64(n), true
	case uint64:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// textValue requires text of at most max bytes and returns it unchanged.
func textValue(v any, max int) (string, error) {
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("must be text, got %s", kind(v))
	}
	if len(s) > max {
		return "", fmt.Errorf("is %d bytes long; at most %d", len(s), max)
	}
	return s, nil
}

// lineValue requires one line of text and returns it trimmed.
func lineValue(v any) (string, error) {
	s, err := textValue(v, maxText)
	if err != nil {
		return "", err
	}
	if strings.ContainsAny(s, "\r\n") {
		return "", errors.New("must be a single line")
	}
	return strings.TrimSpace(s), nil
}

// enumValue reads one line of text, lowercased.
func enumValue(v any) (string, error) {
	s, err := lineValue(v)
	return strings.ToLower(s), err
}

// intValue reads a whole number, given as a number or as decimal text.
func intValue(v any) (int64, error) {
	if s, ok := v.(string); ok {
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not a whole number", truncate(s))
		}
		return n, nil
	}
	f, ok := numberValue(v)
	if !ok {
		return 0, fmt.Errorf("must be a whole number, got %s", kind(v))
	}
	if f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return 0, fmt.Errorf("%v is not a whole number", f)
	}
	return int64(f), nil
}

// flagValue reads 1/0, true/false or the text "1"/"0"/"true"/"false".
func flagValue(v any) (int, error) {
	switch b := v.(type) {
	case bool:
		if b {
			return 1, nil
		}
		return 0, nil
	case string:
		switch strings.ToLower(strings.TrimSpace(b)) {
		case "1", "true":
			return 1, nil
		case "0", "false":
			return 0, nil
		}
		return 0, fmt.Errorf("must be 1 or 0 (or true/false), got %q", truncate(b))
	}
	if f, ok := numberValue(v); ok && (f == 0 || f == 1) {
		return int(f), nil
	}
	return 0, fmt.Errorf("must be 1 or 0 (or true/false), got %s", describe(v))
}

// timeValue reads RFC 3339, or "2006-01-02 15:04[:05]" in loc, and
// refuses an instant outside the range task.CheckInstant allows (a
// 0001-01-01 would otherwise be stored as "none").
func timeValue(v any, loc *time.Location) (time.Time, error) {
	s, err := lineValue(v)
	if err != nil {
		return time.Time{}, err
	}
	t, ok := parseTime(s, loc)
	if !ok {
		return time.Time{}, fmt.Errorf("%q is not a time; use RFC 3339 or 2006-01-02 15:04[:05]", truncate(s))
	}
	var ve *task.ValidationError
	if errors.As(task.CheckInstant("", t), &ve) {
		return time.Time{}, errors.New(ve.Msg)
	}
	return t, nil
}

// parseTime reads RFC 3339, or "2006-01-02 15:04[:05]" in loc.
func parseTime(s string, loc *time.Location) (time.Time, bool) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, true
	}
	for _, layout := range []string{"2006-01-02 15:04:05", "2006-01-02 15:04", "2006-01-02T15:04:05", "2006-01-02T15:04"} {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			return t, true
		}
	}
	return time.Time{}, false
}

func readExecuteType(v any) (task.ExecuteType, error) {
	s, err := enumValue(v)
	if err != nil {
		return "", err
	}
	switch s {
	case "once":
		return task.Once, nil
	case "periodic":
		return task.Periodic, nil
	case "until_success", string(task.UntilSuccess):
		return task.UntilSuccess, nil
	}
	return "", fmt.Errorf("%q is not once, periodic or until_success", truncate(s))
}

func readChannel(v any) (task.Channel, error) {
	s, err := enumValue(v)
	if err != nil {
		return "", err
	}
	if c := task.Channel(s); c.Valid() {
		return c, nil
	}
	return "", fmt.Errorf("%q is not email, sms or outbox", truncate(s))
}

func readMisfire(v any) (task.Misfire, error) {
	s, err := enumValue(v)
	if err != nil {
		return "", err
	}
	if m := task.Misfire(s); m.Valid() {
		return m, nil
	}
	return "", fmt.Errorf("%q is not skip, once or all", truncate(s))
}

func readOverlap(v any) (task.Overlap, error) {
	s, err := enumValue(v)
	if err != nil {
		return "", err
	}
	if o := task.Overlap(s); o.Valid() {
		return o, nil
	}
	return "", fmt.Errorf("%q is not allow, skip or queue", truncate(s))
}

func readZone(v any) (*time.Location, error) {
	s, err := lineValue(v)
	if err != nil {
		return nil, err
	}
	return loadZone(s)
}

// loadZone loads an IANA zone; "" is UTC. "Local" is refused: it would
// depend on the machine.
func loadZone(name string) (*time.Location, error) {
	if name == "" {
		return time.UTC, nil
	}
	if strings.EqualFold(name, "local") {
		return nil, errors.New(`"Local" is not allowed; name an IANA zone like Asia/Shanghai`)
	}
	loc, err := time.LoadLocation(name)
	if err != nil {
		return nil, fmt.Errorf("%q is not an IANA time zone (like Asia/Shanghai)", truncate(name))
	}
	return loc, nil
}

func readTTL(v any) (time.Duration, error) {
	n, err := intValue(v)
	if err != nil {
		return 0, err
	}
	if n < 1 || n > maxTTLSec {
		return 0, fmt.Errorf("%d is out of range; seconds from 1 to %d", n, maxTTLSec)
	}
	return time.Duration(n) * time.Second, nil
}

func readAlertAfter(v any) (int, error) {
	n, err := intValue(v)
	if err != nil {
		return 0, err
	}
	if n < 1 || n > task.MaxAlertAfter {
		return 0, fmt.Errorf("%d is out of range; from 1 to %d failed runs", n, task.MaxAlertAfter)
	}
	return int(n), nil
}

// readAlertAbsent reads how late a slot may be before an absence alert:
// whole seconds, or a duration with a unit ("90s", "10m", "1h"); 0 = off.
func readAlertAbsent(v any) (time.Duration, error) {
	var d time.Duration
	if s, ok := v.(string); ok && strings.TrimLeft(strings.TrimSpace(s), "0123456789") != "" {
		var err error
		if d, err = time.ParseDuration(strings.TrimSpace(s)); err != nil {
			return 0, fmt.Errorf("%q is not a duration (like 90s, 10m or 1h)", truncate(s))
		}
	} else {
		n, err := intValue(v)
		if err != nil {
			return 0, err
		}
		if n < 0 || n > int64(7*24*time.Hour/time.Second) {
			return 0, fmt.Errorf("%d seconds is out of range; 0 (off) or %d seconds to a week", n, int(task.MinAlertAbsent/time.Second))
		}
		d = time.Duration(n) * time.Second
	}
	if d != 0 && (d < task.MinAlertAbsent || d > 7*24*time.Hour) {
		return 0, fmt.Errorf("%s is out of range; 0 (off) or %s to a week", d, task.MinAlertAbsent)
	}
	return d, nil
}

func readRetries(v any) (int, error) {
	n, err := intValue(v)
	if err != nil {
		return 0, err
	}
	if n < 0 || n > task.MaxRetriesCap {
		return 0, fmt.Errorf("%d is out of range; from 0 to %d", n, task.MaxRetriesCap)
	}
	return int(n), nil
}

// checkID validates a task id: 1..64 of [A-Za-z0-9_.-], not only dots
// (in a URL path "." and ".." are dot segments, naming no row).
func checkID(id string) error {
	if !idRE.MatchString(id) {
		return fmt.Errorf("%q must be 1..%d of [A-Za-z0-9_.-]", truncate(id), maxIDLen)
	}
	if strings.Trim(id, ".") == "" {
		return fmt.Errorf("%q must hold a letter, a digit, _ or -, not only dots", id)
	}
	return nil
}

// describe shows a value in a message: text quoted, numbers as written.
func describe(v any) string {
	if f, ok := numberValue(v); ok {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return kind(v)
}

// truncate shortens s for messages to at most 64 runes.
func truncate(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	return string(r[:max]) + "…"
}

// readTargets reads target ids: a text of ids separated by commas or
// spaces, or a list of texts. Each must be a valid target id, or
// "flow:<flow id>" (task.ValidTaskTarget); repeats are
// dropped; at most task.MaxTargetsPerTask.
func readTargets(v any) ([]string, error) {
	var parts []string
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, fmt.Errorf("must be target ids (texts), got %s", kind(e))
			}
			parts = append(parts, s)
		}
	default:
		s, err := lineValue(v)
		if err != nil {
			return nil, err
		}
		parts = strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '，' })
	}
	var ids []string
	for _, p := range parts {
		p = strings.TrimSpace(p)
		if p == "" || slices.Contains(ids, p) {
			continue
		}
		if err := task.ValidTaskTarget(p); err != nil {
			var ve *task.ValidationError
			if errors.As(err, &ve) {
				return nil, fmt.Errorf("target %q: %s", truncate(p), ve.Msg)
			}
			return nil, err
		}
		ids = append(ids, p)
	}
	if len(ids) > task.MaxTargetsPerTask {
		return nil, fmt.Errorf("names %d targets; at most %d", len(ids), task.MaxTargetsPerTask)
	}
	return ids, nil
}

// Bounds on the params field.
const (
	maxParamKeyLen = 64 // bytes of a param key
)

// readParams reads the params field: text holding a JSON object whose
// values are text, numbers or true/false ({"day": "mon", "n": 2}), or
// pairs "key=value" separated by ";" or line breaks ("day=mon; shift=早班";
// keys and values trimmed, a value may hold "=", empty pieces are
// skipped). Keys are 1..64 bytes without braces, "=", ";" or control
// characters, each at most once; values at most task.MaxParamValue bytes;
// at most task.MaxParams keys. Blank text is no params.
func readParams(v any) (map[string]string, error) {
	text, err := textValue(v, maxText)
	if err != nil {
		return nil, err
	}
	text = strings.TrimSpace(text)
	out := map[string]string{}
	add := func(k, val string) error {
		switch {
		case k == "" || len(k) > maxParamKeyLen:
			return fmt.Errorf("param key %q must be 1..%d bytes", truncate(k), maxParamKeyLen)
		case !utf8.ValidString(k) || strings.ContainsAny(k, "{}=;") || strings.ContainsFunc(k, unicode.IsControl):
			return fmt.Errorf("param key %q must not hold braces, =, ; or control characters", truncate(k))
		case len(val) > task.MaxParamValue:
			return fmt.Errorf("param %q is %d bytes; at most %d", truncate(k), len(val), task.MaxParamValue)
		case strings.ContainsRune(val, 0):
			return fmt.Errorf("param %q holds a NUL character", truncate(k))
		case (k == task.ParamTo || k == task.ParamTitle) && strings.ContainsAny(val, "\r\n"):
			return fmt.Errorf("param %q must be a single line (it becomes a mail header)", k)
		case len(out) >= task.MaxParams:
			return fmt.Errorf("more than %d params", task.MaxParams)
		}
		if _, dup := out[k]; dup {
			return fmt.Errorf("param %q is given twice", truncate(k))
		}
		out[k] = val
		return nil
	}
	if strings.HasPrefix(text, "{") {
		return out, readParamsJSON(text, add)
	}
	for piece := range strings.FieldsFuncSeq(text, func(r rune) bool { return r == ';' || r == '\n' || r == '\r' }) {
		piece = strings.TrimSpace(piece)
		if piece == "" {
			continue
		}
		k, val, ok := strings.Cut(piece, "=")
		if !ok {
			return nil, fmt.Errorf("%q is not key=value; write a JSON object or key=value pairs separated by ;", truncate(piece))
		}
		if err := add(strings.TrimSpace(k), strings.TrimSpace(val)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// readParamsJSON reads a JSON object of scalar values, in order, into add.
func readParamsJSON(text string, add func(k, v string) error) error {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	bad := func(err error) error {
		return fmt.Errorf("not a JSON object of text, number or true/false values: %s", truncate(err.Error()))
	}
	if _, err := dec.Token(); err != nil { // the opening brace
		return bad(err)
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return bad(err)
		}
		key, _ := tok.(string)
		var val any
		if err := dec.Decode(&val); err != nil {
			return bad(err)
		}
		text, err := paramText(val)
		if err != nil {
			return fmt.Errorf("param %q %s", truncate(key), err)
		}
		if err := add(key, text); err != nil {
			return err
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return bad(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("not a JSON object: text follows it")
	}
	return nil
}

// paramText spells a scalar as a param value: text as it is, numbers as
// written, true/false.
func paramText(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case json.Number:
		return x.String(), nil
	}
	if f, ok := numberValue(v); ok {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return "", errors.New("must be a finite number")
		}
		return strconv.FormatFloat(f, 'f', -1, 64), nil
	}
	return "", fmt.Errorf("must be text, a number or true/false, got %s", kind(v))
}
