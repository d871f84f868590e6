// Command ferretdb runs FerretDB v1 (a MongoDB wire-protocol server over
// PostgreSQL) for the tests of store/mongo, through FerretDB's embeddable
// package: its own cmd/ferretdb, installed with go install, panics at start
// (its module lacks build/version/version.txt).
//
// It lives in a nested module so that the main module does not depend on
// FerretDB. .ci/setup.d/20-ferretdb.sh builds and starts it:
//
//	ferretdb -listen 127.0.0.1:27017 -postgresql-url postgres://postgres@127.0.0.1:5432/ferretdb
//
// It stops on SIGINT or SIGTERM.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/FerretDB/FerretDB/ferretdb"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:27017", "TCP address to listen on (keep it on loopback)")
	pgURL := flag.String("postgresql-url", "", "PostgreSQL URL of FerretDB's backend database (required)")
	flag.Parse()
	if *pgURL == "" {
		fmt.Fprintln(os.Stderr, "ferretdb: -postgresql-url is required")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *listen, *pgURL); err != nil {
		fmt.Fprintln(os.Stderr, "ferretdb:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, listen, pgURL string) error {
	// FerretDB logs every connection at info level and every error reply
	// (such as the unsupported endSessions) as a warning; errors (panics of
	// a connection) are enough.
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	f, err := ferretdb.New(&ferretdb.Config{
		Listener:      ferretdb.ListenerConfig{TCP: listen},
		Logger:        logger,
		Handler:       "postgresql",
		PostgreSQLURL: pgURL,
	})
	if err != nil {
		return fmt.Errorf("configure: %w", err)
	}
	fmt.Fprintf(os.Stderr, "ferretdb: listening on %s (%s)\n", listen, f.MongoDBURI())
	if err := f.Run(ctx); err != nil && ctx.Err() == nil {
		return err
	}
	return nil
}
