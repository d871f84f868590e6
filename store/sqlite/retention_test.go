package sqlite_test

import (
	"testing"

	"cronsheet/store"
	"cronsheet/store/storetest"
)

func TestRetentionConformance(t *testing.T) {
	storetest.RunRetention(t, func(t *testing.T) store.Product { return openTemp(t) })
}
