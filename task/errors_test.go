package task

import (
	"errors"
	"fmt"
	"testing"
)

// TestInvalidNamesTheFieldOnce: a reason built from an error of the same
// field does not repeat the field; one of another field keeps it.
func TestInvalidNamesTheFieldOnce(t *testing.T) {
	inner := Invalid("when", "unknown word %q", "tomorow")
	for _, tc := range []struct {
		err      error
		wantMsg  string
		wantText string
	}{
		{Invalid("when", "%s", inner), `unknown word "tomorow"`, `when: unknown word "tomorow"`},
		{Invalid("when", "%v", fmt.Errorf(`"tomorow 9": %w`, inner)), `"tomorow 9": unknown word "tomorow"`,
			`when: "tomorow 9": unknown word "tomorow"`},
		{Invalid("http.url", "%v", Invalid("url", "no host")), "url: no host", "http.url: url: no host"},
		{Invalid("delay", "delay: must be a number"), "must be a number", "delay: must be a number"},
		{Invalid("", "bad"), "bad", "bad"},
	} {
		var ve *ValidationError
		if !errors.As(tc.err, &ve) || ve.Msg != tc.wantMsg || tc.err.Error() != tc.wantText {
			t.Errorf("got Msg %q, text %q; want %q, %q", ve.Msg, tc.err.Error(), tc.wantMsg, tc.wantText)
		}
	}
}

func TestLineError(t *testing.T) {
	for _, tc := range []struct {
		line          int
		field, reason string
		want          string
	}{
		{3, "when", "must be a schedule", "line 3 (when): must be a schedule"},
		{3, "when", "when: must be a schedule", "line 3 (when): must be a schedule"},
		{7, "", "bare quote", "line 7: bare quote"},
	} {
		if got := LineError(tc.line, tc.field, tc.reason); got != tc.want {
			t.Errorf("LineError(%d, %q, %q) = %q, want %q", tc.line, tc.field, tc.reason, got, tc.want)
		}
	}
}

func TestCodeOf(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want Code
	}{
		{Invalid("delay", "x"), CodeInvalidField},
		{fmt.Errorf("x: %w", ErrInvalid), CodeInvalidRequest},
		{fmt.Errorf("x: %w", ErrNotFound), CodeNotFound},
		{fmt.Errorf("x: %w", ErrConflict), CodeConflict},
		{VersionConflict("the row", 2, 1), CodeVersionConflict},
		{fmt.Errorf("outer: %w", WithCode(CodeAlreadyRan, ErrConflict)), CodeAlreadyRan},
		{errors.New("plain"), ""},
	} {
		if got := CodeOf(tc.err); got != tc.want {
			t.Errorf("CodeOf(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
	v := VersionConflict("the row", 2, 1)
	if !errors.Is(v, ErrConflict) || v.Error() != "the row changed since you loaded it (version 2 now, you sent 1); reload and try again" {
		t.Errorf("VersionConflict = %q (matches ErrConflict: %v)", v, errors.Is(v, ErrConflict))
	}
}
