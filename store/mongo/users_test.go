package mongo_test

import (
	"testing"

	"cronsheet/store"
	"cronsheet/store/storetest"
)

func TestUsers(t *testing.T) {
	storetest.RunUsers(t, func(t *testing.T) store.Users { return openTemp(t, testURI(t)) })
}
