// Package testproc builds the cronsheet binary once per test binary and
// finds free loopback addresses, for the tests that run cronsheet as real
// processes (internal/e2e, internal/modelcheck).
package testproc

import (
	"cmp"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// Binary builds cronsheet (without -race: the processes under test need
// not be race builds) into a temp dir on its first call in a test binary
// and returns its path; a TestMain removes it with Cleanup.
type Binary struct {
	// Package is the main package built; the zero value builds
	// cronsheet/cmd/cronsheet.
	Package string
	once    sync.Once
	path    string
	err     error
}

// Path returns the built binary's path, building it on the first call.
func (b *Binary) Path(t *testing.T) string {
	t.Helper()
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", "cronsheet-bin-")
		if err != nil {
			b.err = err
			return
		}
		b.path = filepath.Join(dir, "cronsheet")
		if out, err := exec.Command("go", "build", "-o", b.path, cmp.Or(b.Package, "cronsheet/cmd/cronsheet")).CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// Cleanup removes the built binary, if any.
func (b *Binary) Cleanup() {
	if b.path != "" {
		_ = os.RemoveAll(filepath.Dir(b.path))
	}
}

// FreeAddr returns a loopback address no listener holds at the moment.
func FreeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
