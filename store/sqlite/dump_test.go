package sqlite_test

import (
	"testing"

	"cronsheet/store/storetest"
)

func TestDumpTargets(t *testing.T) {
	s := openTemp(t)
	t.Cleanup(func() { _ = s.Close() })
	storetest.DumpTargets(t, s)
}
