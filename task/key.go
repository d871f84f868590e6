package task

import (
	"strings"
	"unicode"
)

// CheckKey is the one rule for a key or a name that people and tools use
// to point at a thing, and that ends up in URL paths, file names, log
// lines and headers (a job's key, a by-key path, a user's name): 1 to max
// bytes, no control character (NUL, CR, LF…), no space of any kind, not
// "." or ".." (a path segment that means another path), and not starting
// with "-" (read as an option by a command line). field names the key
// in the error.
func CheckKey(field, key string, max int) error {
	switch {
	case key == "" || len(key) > max:
		return Invalid(field, "must be 1 to %d bytes; got %d", max, len(key))
	case key == "." || key == "..":
		return Invalid(field, "%q is not a key: it means a path", key)
	case strings.HasPrefix(key, "-"):
		return Invalid(field, "%q may not start with '-'", Truncate(key, 40))
	}
	if i := strings.IndexFunc(key, func(r rune) bool { return unicode.IsControl(r) || unicode.IsSpace(r) }); i >= 0 {
		return Invalid(field, "%q holds a space or a control character at byte %d; use letters, digits and punctuation",
			Truncate(key, 40), i)
	}
	return nil
}
