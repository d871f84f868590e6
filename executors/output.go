package executors

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// truncMark ends text cut to fit a cap.
const truncMark = "…[truncated]"

// clip makes untrusted bytes fit a stored text field: invalid UTF-8 is
// replaced and the text is cut to at most n bytes on a rune boundary, marked
// with truncMark.
func clip(b []byte, n int) string {
	s := strings.ToValidUTF8(string(b), "\uFFFD")
	if len(s) <= n {
		return s
	}
	return cutRunes(s, n-len(truncMark)) + truncMark
}

// cutRunes returns the longest prefix of s of at most n bytes that ends on a
// rune boundary.
func cutRunes(s string, n int) string {
	if n <= 0 {
		return ""
	}
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// headBuffer is an io.Writer keeping the first max bytes written and
// counting the rest, so a chatty command cannot grow it without bound. It is
// not safe for concurrent use.
type headBuffer struct {
	max   int
	buf   []byte
	total int64
}

// Write implements io.Writer; it never fails, so the writer keeps draining.
func (h *headBuffer) Write(p []byte) (int, error) {
	h.total += int64(len(p))
	if room := h.max - len(h.buf); room > 0 {
		h.buf = append(h.buf, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

// String returns the kept text, at most max bytes; when output was dropped
// it ends with a note saying how much there was in all.
func (h *headBuffer) String() string {
	if h.total <= int64(len(h.buf)) {
		return clip(h.buf, h.max)
	}
	note := fmt.Sprintf("\n…[truncated: %d bytes in all]", h.total)
	head := strings.ToValidUTF8(string(h.buf), "\uFFFD")
	return cutRunes(head, h.max-len(note)) + note
}
