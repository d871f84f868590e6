package mongo_test

import (
	"errors"
	"testing"

	"go.mongodb.org/mongo-driver/v2/bson"

	"cronsheet/store/mongo"
	"cronsheet/task"
)

func TestProbe(t *testing.T) {
	s := openTemp(t, testURI(t))
	h, err := s.Probe(t.Context())
	if err != nil {
		t.Fatalf("Probe: %v", err)
	}
	info, err := s.ServerInfo(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if h.Driver != "mongo" || h.Version == "" || h.Version != info.Version || h.FerretDB != info.FerretDB {
		t.Errorf("Probe = %+v, want driver mongo and buildInfo %+v", h, info)
	}
	if h.FerretDB && (h.ReplicaSet != "" || h.Transactions || h.ChangeStreams) {
		t.Errorf("Probe on FerretDB = %+v, want no replica set, transactions or change streams", h)
	}
	if h.Transactions != (h.ReplicaSet != "" && !h.FerretDB) {
		t.Errorf("Probe = %+v: transactions must follow the replica set", h)
	}
	t.Logf("Probe: %+v", h)

	// The probe reads a real document: without it, the store is down.
	if _, err := mongo.Collection(s, "meta").DeleteOne(t.Context(), bson.D{{Key: "_id", Value: "healthz"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Probe(t.Context()); !errors.Is(err, task.ErrNotFound) {
		t.Errorf("Probe without its document = %v, want task.ErrNotFound", err)
	}
}
