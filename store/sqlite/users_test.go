package sqlite

import (
	"path/filepath"
	"testing"

	"cronsheet/store"
	"cronsheet/store/storetest"
)

func TestUsers(t *testing.T) {
	t.Parallel()
	storetest.RunUsers(t, func(t *testing.T) store.Users {
		s, err := Open(t.Context(), filepath.Join(t.TempDir(), "users.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}
