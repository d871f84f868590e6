package task

import "testing"

// TestCheckKey: the one key rule refuses control characters, spaces,
// "." and "..", and a leading "-"; it takes keys of letters, digits and
// punctuation.
func TestCheckKey(t *testing.T) {
	t.Parallel()
	tests := []struct {
		key string
		ok  bool
	}{
		{"order-42", true}, {"a.b_c:d/e", true}, {"值班", true}, {"x..y", true},
		{"", false}, {".", false}, {"..", false}, {"-1", false}, {" ", false}, {"a b", false},
		{"k\x00x", false}, {"k\r\nx", false}, {"k\tx", false}, {"k\u00a0x", false},
	}
	for _, tt := range tests {
		err := CheckKey("key", tt.key, 200)
		if (err == nil) != tt.ok {
			t.Errorf("CheckKey(%q) = %v, want ok %v", tt.key, err, tt.ok)
		}
		if err != nil && err.(*ValidationError).Field != "key" {
			t.Errorf("CheckKey(%q) names %q, want key", tt.key, err.(*ValidationError).Field)
		}
	}
}
