package sqlite_test

import (
	"testing"

	"cronsheet/store"
	"cronsheet/store/storetest"
)

func TestSettingsConformance(t *testing.T) {
	storetest.RunSettings(t, func(t *testing.T) store.Product { return openTemp(t) })
}
