package server

import (
	"os"
	"path/filepath"
	"testing"
)

// writeConfig writes body as a config file of its own and returns its path.
func writeConfig(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// noEnv is an environment with no variable set.
func noEnv(string) string { return "" }
