package main

import (
	"context"
	"log/slog"
	"os"
	"sync/atomic"

	"cronsheet/tools/bench/internal/benchkit"
	"cronsheet/tools/bench/internal/node"
)

// benchNode is one in-process cronsheet node on a SQLite file in a dir of
// its own, with the errors it logged counted.
type benchNode struct {
	*node.Node
	errors *atomic.Int64
}

// startNode starts a node with s in dir (empty: a new temp dir; else the
// dir a stopped node left, whose store it opens), with o's patrol batch,
// HTTP callbacks to loopback allowed, and its log cut to errors, of which
// the first few are printed and the rest counted.
func startNode(o options, dir string, s node.Settings) (*benchNode, error) {
	errs := new(atomic.Int64)
	s.Dir = dir
	s.PatrolBatch = o.patrolBatch
	s.AllowLoopback = true
	s.MongoURI = o.mongoURI
	s.Logger = slog.New(&countingHandler{Handler: slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}), n: errs})
	nd, err := node.Start(context.Background(), s)
	if err != nil {
		return nil, err
	}
	return &benchNode{Node: nd, errors: errs}, nil
}

// close stops the node, saying so on stderr when its run ended in an
// error, and removes its files.
func (n *benchNode) close() {
	if err := n.Close(); err != nil {
		benchkit.Progress("node stopped: %v", err)
	}
}

// countingHandler counts the records it is given and passes on the first
// printedErrors of them.
type countingHandler struct {
	slog.Handler
	n *atomic.Int64
}

const printedErrors = 5

// Handle counts r and passes it on while at most printedErrors were seen.
func (h *countingHandler) Handle(ctx context.Context, r slog.Record) error {
	if h.n.Add(1) > printedErrors {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

// WithAttrs returns a handler with as that counts into the same counter.
func (h *countingHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &countingHandler{Handler: h.Handler.WithAttrs(as), n: h.n}
}

// WithGroup returns a handler in group name that counts into the same
// counter.
func (h *countingHandler) WithGroup(name string) slog.Handler {
	return &countingHandler{Handler: h.Handler.WithGroup(name), n: h.n}
}
