package task

import (
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// Bounds on the labels of a target or a flow.
const (
	MaxLabels        = 16
	MaxLabelKey      = 63  // bytes
	MaxLabelValueLen = 256 // bytes
)

// labelKeyRe is a label key: ASCII letters, digits, '_' and '-', starting
// with a letter or digit (no '.' or '$', which a MongoDB key cannot hold).
var labelKeyRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)

// ValidateLabels checks the labels of a target or a flow: at most
// MaxLabels, each key 1..MaxLabelKey bytes of labelKeyRe, each value at
// most MaxLabelValueLen bytes of UTF-8 text on one line. The problem is a
// *ValidationError naming labels.<key>.
func ValidateLabels(labels map[string]string) error {
	if len(labels) > MaxLabels {
		return Invalid("labels", "has %d labels; at most %d", len(labels), MaxLabels)
	}
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if len(k) > MaxLabelKey || !labelKeyRe.MatchString(k) {
			return Invalid("labels", "key %q must be 1 to %d of letters, digits, '_' and '-', starting with a letter or digit",
				cut(k, 80), MaxLabelKey)
		}
		v := labels[k]
		switch {
		case len(v) > MaxLabelValueLen:
			return Invalid("labels."+k, "is %d bytes long; at most %d", len(v), MaxLabelValueLen)
		case !utf8.ValidString(v):
			return Invalid("labels."+k, "is not UTF-8 text")
		case strings.ContainsAny(v, "\x00\r\n"):
			return Invalid("labels."+k, "must be one line without NUL characters")
		}
	}
	return nil
}

// cut shortens s to at most n bytes for a message, on a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
