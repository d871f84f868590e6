package sqlite_test

import (
	"testing"

	"cronsheet/store/storetest"
)

func TestRowTableConformance(t *testing.T) {
	storetest.RunRowTable(t, func(t *testing.T) storetest.RowTableStore { return openTemp(t) })
}
