package mongo_test

import (
	"testing"

	"cronsheet/store"
	"cronsheet/store/storetest"
)

func TestAudit(t *testing.T) {
	storetest.RunAuditLog(t, func(t *testing.T) store.AuditLog { return openTemp(t, testURI(t)) })
}

func TestQueryAudit(t *testing.T) {
	storetest.RunQueryAudit(t, func(t *testing.T) store.AuditLog { return openTemp(t, testURI(t)) })
}
