package task

import (
	"fmt"
	"strings"
)

// Templates are plain text with {{name}} placeholders (spaces inside the
// braces are allowed). A name is a param key or one of the trigger's own
// variables: trigger_id, task_id, target, slot (RFC 3339), attempt and
// trigger_type. Expand substitutes the text as it is, with no escaping
// (ExpandEscaped lets the caller escape each value for where it stands, as
// URLs need); a placeholder whose name has no value is an error, never an
// empty string.

// CheckTemplate reports a malformed template: an unclosed or empty
// placeholder.
func CheckTemplate(tmpl string) error {
	_, err := expand(tmpl, nil)
	return err
}

// Expand replaces each {{name}} in tmpl with vars[name].
func Expand(tmpl string, vars map[string]string) (string, error) {
	return ExpandEscaped(tmpl, vars, nil)
}

// ExpandEscaped replaces each {{name}} in tmpl with escape(literal,
// vars[name]), where literal is the template's own text before the
// placeholder, the placeholders before it left out: escape can tell from
// it where the value stands (a URL's path, query or fragment) whatever the
// values before hold. A nil escape inserts values as they are.
func ExpandEscaped(tmpl string, vars map[string]string, escape func(literal, value string) string) (string, error) {
	if vars == nil {
		vars = map[string]string{}
	}
	return expandWith(tmpl, vars, escape)
}

// Placeholders returns the names tmpl's placeholders use, in order, each
// once; nil for a malformed template.
func Placeholders(tmpl string) []string {
	var names []string
	seen := map[string]bool{}
	_, err := expandWith(tmpl, nil, func(_, name string) string {
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
		return ""
	})
	if err != nil {
		return nil
	}
	return names
}

// expand checks the syntax, or expands when vars is not nil.
func expand(tmpl string, vars map[string]string) (string, error) {
	return expandWith(tmpl, vars, nil)
}

// expandWith does ExpandEscaped. With vars nil it only checks the syntax,
// and calls escape (when given) with each placeholder's name as value.
func expandWith(tmpl string, vars map[string]string, escape func(literal, value string) string) (string, error) {
	if !strings.Contains(tmpl, "{{") {
		return tmpl, nil
	}
	var b, literal strings.Builder
	rest := tmpl
	for {
		i := strings.Index(rest, "{{")
		if i < 0 {
			b.WriteString(rest)
			return b.String(), nil
		}
		b.WriteString(rest[:i])
		literal.WriteString(rest[:i])
		j := strings.Index(rest[i+2:], "}}")
		if j < 0 {
			return "", fmt.Errorf("placeholder at byte %d is not closed with }}", len(tmpl)-len(rest)+i)
		}
		name := strings.TrimSpace(rest[i+2 : i+2+j])
		if name == "" || strings.ContainsAny(name, "{}") {
			return "", fmt.Errorf("placeholder at byte %d has no name", len(tmpl)-len(rest)+i)
		}
		switch {
		case vars != nil:
			v, ok := vars[name]
			if !ok {
				return "", fmt.Errorf("template names {{%s}}, which is neither a param nor a trigger variable", name)
			}
			if escape != nil {
				v = escape(literal.String(), v)
			}
			b.WriteString(v)
		case escape != nil:
			escape(literal.String(), name)
		}
		rest = rest[i+2+j+2:]
	}
}
