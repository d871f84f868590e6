package store_test

import (
	"testing"

	"cronsheet/store"
)

// TestValidateUserName: a user's name follows the key rule too: "..",
// "." and a leading "-" are refused; a plain name is taken.
func TestValidateUserName(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"..", ".", "-admin"} {
		if err := store.ValidateUserName(name); err == nil {
			t.Errorf("ValidateUserName(%q) = nil, want a refusal", name)
		}
	}
	for _, name := range []string{"ann", "ann.lee@example.com", "a..b"} {
		if err := store.ValidateUserName(name); err != nil {
			t.Errorf("ValidateUserName(%q) = %v, want nil", name, err)
		}
	}
}
