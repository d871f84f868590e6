package jsontype

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"
)

// BOM is the UTF-8 byte-order mark. Some clients (PowerShell, Notepad)
// put it before a JSON body; JSON forbids it, but it carries no meaning,
// so Checked takes the body without it.
const BOM = "\ufeff"

// FreeText names the fields whose text may span lines: a value whose path
// passes through a member of one of these names may hold LF, CR and tab
// (a POST body, a message, a mail's or SMS's text, a Kafka value, a job's
// params and their values, a row's message, a description). Everywhere
// else (keys, names, ids, URLs, header values, paths, schedules, member
// names of any object) a line break is refused at decode: such text ends
// up in a log line, a header, a path or a file name, where a line break
// starts something else. Where a free-text value later becomes a header
// (a mail's title and recipient) its own check refuses the line break
// (task.ValidParams).
var FreeText = map[string]bool{
	"params": true, "body": true, "value": true, "content": true, "task_para": true,
	"description": true, "message": true, "output": true, "result": true, "error": true, "text": true,
}

// TextError is a JSON body that breaks the text rule of Checked, naming
// the field ("params", "http.body", "jobs[2].key"; "body" for the whole).
type TextError struct {
	Field string
	Msg   string
}

func (e *TextError) Error() string { return e.Field + ": " + e.Msg }

// Checked returns data, one JSON value of a request, without a leading
// byte-order mark, once every text in it passes the one text rule that
// every door applies (HTTP bodies, WebSocket and Kafka submissions, CSV
// cells holding JSON):
//
//   - no text holds NUL or another control character but tab, LF and CR:
//     a NUL cuts a C string short (argv, headers, SQLite's text) and the
//     others are invisible where people read the value;
//   - LF, CR and tab only in free text (FreeText);
//   - no object names a member twice: encoding/json keeps the last,
//     so {"method":"POST","method":"EXEC"} would run EXEC while a proxy
//     or a log reads POST.
//
// The error is a *TextError naming the field. Data that is not valid
// JSON is returned for the decoder to refuse with its own words.
func Checked(data []byte) ([]byte, error) { return check(data, false) }

// CheckedLines is Checked for a body whose fields are named by the user
// (a row of a scenario, whose columns the scenario defines): line breaks
// and tabs are allowed in every value, since any column may hold free
// text; the scenario's own checks refuse them where a value must be one
// line (the id, title, to, alert_to fields: mapping.ValidateFields).
// NUL and the other control characters, and member names, are refused
// as by Checked.
func CheckedLines(data []byte) ([]byte, error) { return check(data, true) }

// check is Checked; allFree makes every value free text.
func check(data []byte, allFree bool) ([]byte, error) {
	data = bytes.TrimPrefix(data, []byte(BOM))
	dec := json.NewDecoder(bytes.NewReader(data))
	var stack []*level // the objects and arrays around the next token
	top := func() *level {
		if len(stack) == 0 {
			return nil
		}
		return stack[len(stack)-1]
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return data, nil // the end, or bad JSON: the decoder says which
		}
		if l := top(); l != nil && l.object && l.wantName {
			if name, ok := tok.(string); ok { // else the object's end
				if err := l.name(name, path(stack)); err != nil {
					return nil, err
				}
				continue
			}
		}
		switch tok := tok.(type) {
		case json.Delim:
			if tok == '{' || tok == '[' {
				top().start()
				stack = append(stack, &level{object: tok == '{', wantName: tok == '{', seen: map[string]bool{}, index: -1})
				continue
			}
			stack = stack[:len(stack)-1]
			top().end()
		case string:
			top().start()
			if err := checkValue(tok, stack, allFree); err != nil {
				return nil, err
			}
			top().end()
		default:
			top().start()
			top().end()
		}
	}
}

// level is an object or an array being read by Checked.
type level struct {
	object   bool
	wantName bool   // an object's next token is a member name
	member   string // an object's member being read
	seen     map[string]bool
	index    int // an array's element being read
}

// name reads a member name: one line of text, named once.
func (l *level) name(name, at string) error {
	if i := strings.IndexFunc(name, isControl); i >= 0 {
		r, _ := utf8.DecodeRuneInString(name[i:])
		return &TextError{Field: join(at, safe(name)), Msg: "the member name holds " + describe(r) + "; remove it"}
	}
	if l.seen[name] {
		return &TextError{Field: join(at, name), Msg: "given twice in one object; give each field once"}
	}
	l.seen[name] = true
	l.member, l.wantName = name, false
	return nil
}

// start marks that a value of l (nil: the top value) starts.
func (l *level) start() {
	if l != nil && !l.object {
		l.index++
	}
}

// end marks that l's current value ended.
func (l *level) end() {
	if l != nil && l.object {
		l.wantName = true
	}
}

// path names the value being read: "http.body", "[2].key".
func path(stack []*level) string {
	var b strings.Builder
	for _, l := range stack {
		if l.object {
			if l.wantName {
				continue // no member yet
			}
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(l.member)
			continue
		}
		b.WriteString("[" + strconv.Itoa(max(l.index, 0)) + "]")
	}
	return b.String()
}

// checkValue applies the text rule to s, the value at the top of stack.
func checkValue(s string, stack []*level, allFree bool) error {
	i := strings.IndexFunc(s, isControl)
	if i < 0 {
		return nil
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	free := allFree
	for _, l := range stack {
		free = free || (l.object && FreeText[l.member])
	}
	if free {
		i = strings.IndexFunc(s, func(r rune) bool { return isControl(r) && r != '\n' && r != '\r' && r != '\t' })
		if i < 0 {
			return nil
		}
		r, _ = utf8.DecodeRuneInString(s[i:])
	}
	field := cmpOr(path(stack), "body")
	if !free && (r == '\n' || r == '\r' || r == '\t') {
		return &TextError{Field: field, Msg: "must be one line: it holds " + describe(r) + "; remove it"}
	}
	return &TextError{Field: field, Msg: "holds " + describe(r) + "; remove it"}
}

// isControl reports a C0 control character or DEL.
func isControl(r rune) bool { return r < 0x20 || r == 0x7f }

// describe names a control character for people: "a NUL character (\0)".
func describe(r rune) string {
	switch r {
	case 0:
		return `a NUL character (\0)`
	case '\n':
		return `a line break (LF, \n)`
	case '\r':
		return `a carriage return (CR, \r)`
	case '\t':
		return `a tab (\t)`
	}
	return "the control character " + strconv.QuoteRuneToASCII(r)
}

// safe quotes a name that holds control characters for an error's field.
func safe(name string) string { return strings.Trim(strconv.QuoteToASCII(name), `"`) }

func join(at, name string) string {
	if at == "" {
		return name
	}
	return at + "." + name
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// AsText returns err as a *TextError, or nil.
func AsText(err error) *TextError {
	var te *TextError
	if errors.As(err, &te) {
		return te
	}
	return nil
}
