package mongo_test

import (
	"testing"

	"cronsheet/store/storetest"
)

func TestDumpTargets(t *testing.T) {
	storetest.DumpTargets(t, openTemp(t, testURI(t)))
}
