// Package index reads the event sink's index name template (config
// events.index): a name that may hold {service} (jobs, tasks or flows:
// what the event is about) and {date} (the event's time in UTC as
// 2006.01.02, e.g. 2026.12.04), so that "cronsheet-{service}-{date}" names
// one index per service and day, cronsheet-jobs-2026.12.04.
//
// It imports nothing of the project: config validates with it and the sink
// expands with it.
package index

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// DateLayout is how {date} writes the event's UTC day.
const DateLayout = "2006.01.02"

// Services: what {service} stands for.
const (
	ServiceJobs  = "jobs"
	ServiceTasks = "tasks"
	ServiceFlows = "flows"
)

// MaxLen bounds a template (Elasticsearch's index names are at most 255
// bytes; an expansion adds at most 5 bytes per placeholder).
const MaxLen = 200

// Template is a parsed index name template. The zero Template expands to "".
type Template struct {
	parts []string // literal text and "{service}" / "{date}", in order
	fixed bool     // no placeholder
}

// Parse reads s. An unknown placeholder, an unclosed brace, upper-case
// letters or a character Elasticsearch refuses in index names (space, ",
// *, \, /, <, >, |, ?, #, ',', ':') are errors.
func Parse(s string) (Template, error) {
	if s == "" {
		return Template{}, errors.New("empty; give a name such as cronsheet-{service}-{date}")
	}
	if len(s) > MaxLen {
		return Template{}, fmt.Errorf("at most %d bytes", MaxLen)
	}
	if strings.HasPrefix(s, "-") || strings.HasPrefix(s, "_") || strings.HasPrefix(s, "+") {
		return Template{}, fmt.Errorf("%q starts with -, _ or +, which Elasticsearch refuses", s)
	}
	t := Template{fixed: true}
	rest := s
	for rest != "" {
		open := strings.IndexAny(rest, "{}")
		if open < 0 {
			open = len(rest)
		}
		if err := checkLiteral(rest[:open]); err != nil {
			return Template{}, err
		}
		if open > 0 {
			t.parts = append(t.parts, rest[:open])
		}
		rest = rest[open:]
		if rest == "" {
			break
		}
		end := strings.IndexByte(rest, '}')
		if rest[0] == '}' || end < 0 {
			return Template{}, fmt.Errorf("unmatched brace in %q; placeholders are {service} and {date}", s)
		}
		ph := rest[:end+1]
		if ph != "{service}" && ph != "{date}" {
			return Template{}, fmt.Errorf("unknown placeholder %s; placeholders are {service} and {date}", ph)
		}
		t.parts = append(t.parts, ph)
		t.fixed = false
		rest = rest[end+1:]
	}
	return t, nil
}

// checkLiteral refuses what Elasticsearch refuses in an index name.
func checkLiteral(s string) error {
	if i := strings.IndexAny(s, " \"*\\/<>|?#,:"); i >= 0 {
		return fmt.Errorf("%q may not appear in an index name", s[i:i+1])
	}
	if strings.ToLower(s) != s {
		return fmt.Errorf("%q has upper-case letters; index names are lower case", s)
	}
	return nil
}

// Fixed reports whether t holds no placeholder: every event goes to one
// index.
func (t Template) Fixed() bool { return t.fixed }

// Expand returns the index of an event about service at instant at.
func (t Template) Expand(service string, at time.Time) string {
	var b strings.Builder
	for _, p := range t.parts {
		switch p {
		case "{service}":
			b.WriteString(service)
		case "{date}":
			b.WriteString(at.UTC().Format(DateLayout))
		default:
			b.WriteString(p)
		}
	}
	return b.String()
}
