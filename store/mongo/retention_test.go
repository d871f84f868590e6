package mongo_test

import (
	"testing"

	"cronsheet/store"
	"cronsheet/store/storetest"
)

func TestRetentionConformance(t *testing.T) {
	uri := testURI(t)
	storetest.RunRetention(t, func(t *testing.T) store.Product {
		return keepOpen{openTemp(t, uri)}
	}, suiteOptions(t, uri)...)
}
