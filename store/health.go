package store

import "context"

// Prober is a store's health check: Probe pings the server and reads a
// document (or value) that the store writes when it opens, so a store that
// answers pings but cannot read its data is reported down. It also says
// what the server is.
type Prober interface {
	Probe(ctx context.Context) (Health, error)
}

// Health is what Probe found out about the server.
type Health struct {
	// Driver is "sqlite" or "mongo".
	Driver string `json:"driver"`
	// Version is the server's version (SQLite's library version; MongoDB's
	// buildInfo version, which FerretDB fills with the MongoDB version it
	// imitates).
	Version string `json:"version"`
	// FerretDB is true when the MongoDB wire server is FerretDB.
	FerretDB bool `json:"ferretdb,omitempty"`
	// ReplicaSet is the replica set's name, "" on a standalone server
	// (and on SQLite).
	ReplicaSet string `json:"replica_set,omitempty"`
	// Transactions and ChangeStreams say whether the server offers them
	// (MongoDB: on a replica set; FerretDB v1: never). The drivers use
	// neither today; status shows them for operators.
	Transactions  bool `json:"transactions"`
	ChangeStreams bool `json:"change_streams"`
}
