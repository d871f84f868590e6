package task

import (
	"fmt"
	"strings"
)

// Templates are plain text with {{name}} placeholders (spaces inside the
// braces are allowed). A name is a param key or one of the trigger's own
// variables: trigger_id, task_id, target, slot (RFC 3339), attempt and
// trigger_type. Expand substitutes the text as it is, with no escaping; a
// placeholder whose name has no value is an error, never an empty string.

// CheckTemplate reports a malformed template: an unclosed or empty
// placeholder.
func CheckTemplate(tmpl string) error {
	_, err := expand(tmpl, nil)
	return err
}

// Expand replaces each {{name}} in tmpl with vars[name].
func Expand(tmpl string, vars map[string]string) (string, error) {
	if vars == nil {
		vars = map[string]string{}
	}
	return expand(tmpl, vars)
}

// expand does Expand; with vars nil it only checks the syntax.
func expand(tmpl string, vars map[string]string) (string, error) {
	if !strings.Contains(tmpl, "{{") {
		return tmpl, nil
	}
	var b strings.Builder
	rest := tmpl
	for {
		i := strings.Index(rest, "{{")
		if i < 0 {
			b.WriteString(rest)
			return b.String(), nil
		}
		b.WriteString(rest[:i])
		j := strings.Index(rest[i+2:], "}}")
		if j < 0 {
			return "", fmt.Errorf("placeholder at byte %d is not closed with }}", len(tmpl)-len(rest)+i)
		}
		name := strings.TrimSpace(rest[i+2 : i+2+j])
		if name == "" || strings.ContainsAny(name, "{}") {
			return "", fmt.Errorf("placeholder at byte %d has no name", len(tmpl)-len(rest)+i)
		}
		if vars != nil {
			v, ok := vars[name]
			if !ok {
				return "", fmt.Errorf("template names {{%s}}, which is neither a param nor a trigger variable", name)
			}
			b.WriteString(v)
		}
		rest = rest[i+2+j+2:]
	}
}
