// Package node starts in-process cronsheet nodes on a SQLite file for the
// benchmark programs. It is the bench module's one user of package
// server's API (its configuration, New, Run and observers), so that a
// change there is met in this file alone.
package node

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"cronsheet/config"
	"cronsheet/server"
	"cronsheet/store/mongo"
	"cronsheet/task"
)

// DBFile is the name of a node's SQLite file in its directory.
const DBFile = "bench.db"

// Settings are what a benchmark changes on a node; everything else is the
// default configuration, with the API on a free loopback port, auth
// local_dev (loopback only), node id "bench" and patrol.lease 1m.
type Settings struct {
	// Dir holds the node's SQLite file (DBFile): a new temp dir when
	// empty, or the dir of a stopped node, whose store the node then opens.
	Dir string
	// Logger gets the node's log; nil: discarded.
	Logger *slog.Logger
	// PatrolBatch is patrol.batch, tasks claimed per query; 0: the default.
	PatrolBatch int
	// ArmWindowOff sets fire.arm_window to 0: every claimed task is armed
	// in full, however far ahead it is due.
	ArmWindowOff bool
	// AllowLoopback lets HTTP callbacks reach 127.0.0.0/8 (http.allow).
	AllowLoopback bool
	// MongoURI, when set, makes the node's store the mongo driver on a new
	// database at this URI (dropped by Close) instead of SQLite; Dir then
	// holds nothing.
	MongoURI string
	// OnFire, OnArm and OnRun, when not nil, hear each fire (its slot and
	// lag: slot → fire start), each task armed, and each run stored.
	OnFire func(slot time.Time, lag time.Duration)
	OnArm  func(taskID string)
	OnRun  func(r task.Run)
}

// DefaultArmWindow is the default configuration's fire.arm_window.
func DefaultArmWindow() time.Duration { return config.Default().Fire.ArmWindow }

// Node is a running node.
type Node struct {
	// Base is its API's URL, http://host:port.
	Base string
	// Dir holds its SQLite file, DBFile.
	Dir  string
	stop func() error
	// drop removes the node's mongo database; nil on SQLite.
	drop func() error
}

// Start starts a node with s and returns once it listens; it runs until
// Stop or Close (or ctx ends).
func Start(ctx context.Context, s Settings) (*Node, error) {
	dir, fresh := s.Dir, s.Dir == ""
	if fresh {
		d, err := os.MkdirTemp("", "cronsheet-bench-")
		if err != nil {
			return nil, err
		}
		dir = d
	}
	nd, err := start(ctx, s, dir)
	if err != nil && fresh {
		os.RemoveAll(dir)
	}
	return nd, err
}

func start(ctx context.Context, s Settings, dir string) (*Node, error) {
	cfg := config.Default()
	cfg.Listen = "127.0.0.1:0"
	cfg.NodeID = "bench"
	cfg.Auth = config.AuthLocalDev
	cfg.LogLevel = "warn"
	cfg.Store.Path = filepath.Join(dir, DBFile)
	var drop func() error
	if s.MongoURI != "" {
		var b [6]byte
		_, _ = rand.Read(b[:])
		cfg.Store.Driver, cfg.Store.URI, cfg.Store.Database = "mongo", s.MongoURI, "cronsheet_bench_"+hex.EncodeToString(b[:])
		drop = func() error { return dropDatabase(s.MongoURI, cfg.Store.Database) }
	}
	cfg.Patrol.Lease = time.Minute
	if s.PatrolBatch > 0 {
		cfg.Patrol.Batch = s.PatrolBatch
	}
	if s.ArmWindowOff {
		cfg.Fire.ArmWindow = 0
	}
	if s.AllowLoopback {
		cfg.HTTP.Allow = []string{"127.0.0.0/8"}
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	var opts []server.Option
	if s.OnFire != nil {
		opts = append(opts, server.WithFireObserver(s.OnFire))
	}
	if s.OnArm != nil {
		opts = append(opts, server.WithArmObserver(s.OnArm))
	}
	if s.OnRun != nil {
		opts = append(opts, server.WithRunObserver(s.OnRun))
	}
	logger := s.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(ctx)
	srv, err := server.New(ctx, cfg, logger, opts...)
	if err != nil {
		cancel()
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	stop := sync.OnceValue(func() error {
		cancel()
		return <-done
	})
	return &Node{Base: "http://" + srv.Addr(), Dir: dir, stop: stop, drop: drop}, nil
}

// dropDatabase drops database db at uri.
func dropDatabase(uri, db string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := mongo.Open(ctx, mongo.Config{URI: uri, Database: db})
	if err != nil {
		return fmt.Errorf("open %s to drop it: %w", db, err)
	}
	defer st.Close()
	if err := st.Drop(ctx); err != nil {
		return fmt.Errorf("drop %s: %w", db, err)
	}
	return nil
}

// Stop stops the node gracefully, keeping its files, and returns what its
// Run returned; later calls return the same.
func (n *Node) Stop() error { return n.stop() }

// Close stops the node (Stop) and removes its dir (and its mongo
// database).
func (n *Node) Close() error {
	err := n.stop()
	os.RemoveAll(n.Dir)
	if n.drop != nil {
		err = errors.Join(err, n.drop())
	}
	return err
}
