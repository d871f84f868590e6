package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"cronsheet/config"
	"cronsheet/declared"
)

// applyUsage is what `cronsheet apply -h` prints before the flags.
const applyUsage = `cronsheet apply makes the rows, targets and flows a YAML file declares exist as written.

Usage:
  cronsheet apply -f FILE [--dry-run] [--prune] [--server URL] [--token T | $CRONSHEET_TOKEN]
  cronsheet apply -f FILE [--dry-run] [--prune] [-config config.yaml]   (the node at config's listen address)

It prints the plan, one line per object (create, update with the fields it
changes, unchanged, and with --prune delete), then applies it through the
node's API unless --dry-run. Exit 2: a bad file or flag; 1: the node refused.

Flags:
`

// applyCmd runs `cronsheet apply` and returns the exit code.
func applyCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("cronsheet apply", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), applyUsage)
		fs.PrintDefaults()
	}
	file := fs.String("f", "", "the declaration file (YAML)")
	dry := fs.Bool("dry-run", false, "print the plan; change nothing")
	prune := fs.Bool("prune", false, "also delete the objects this file's set manages that it no longer declares")
	server := fs.String("server", "", "the node's URL (default: http:// and config's listen address)")
	token := fs.String("token", os.Getenv("CRONSHEET_TOKEN"), "API token (role admin; default $CRONSHEET_TOKEN)")
	configPath := fs.String("config", "config.yaml", "configuration whose listen address names the node, without --server")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *file == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "cronsheet apply: -f FILE is required, and nothing else after the flags (see -h)")
		return 2
	}
	f, err := declared.Load(*file)
	if err == nil {
		err = f.Check()
	}
	if err != nil {
		fmt.Fprintln(stderr, "cronsheet apply:", err)
		return 2
	}
	base := *server
	if base == "" {
		if base, err = baseFromConfig(*configPath); err != nil {
			fmt.Fprintln(stderr, "cronsheet apply:", err)
			return 2
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, applyTimeout)
	defer cancel()
	return runApply(ctx, &declared.Client{Base: base, Token: *token}, f, *dry, *prune, stdout, stderr)
}

// runApply computes the plan, prints it, and applies it unless dry.
func runApply(ctx context.Context, c *declared.Client, f *declared.File, dry, prune bool, stdout, stderr io.Writer) int {
	plan, err := declared.Compute(ctx, c, f, prune)
	var fe *declared.FileError
	switch {
	case errors.As(err, &fe):
		fmt.Fprintln(stderr, "cronsheet apply:", err)
		return 2
	case err != nil:
		fmt.Fprintln(stderr, "cronsheet apply:", err)
		return 1
	}
	for _, ch := range plan.Changes {
		fmt.Fprintln(stdout, ch)
	}
	counts := []any{plan.Count(declared.Create), plan.Count(declared.Update), plan.Count(declared.Delete),
		plan.Count(declared.Unchanged)}
	if dry {
		fmt.Fprintf(stdout, "dry run: %d to create, %d to update, %d to delete, %d unchanged; nothing changed\n", counts...)
		return 0
	}
	if err := plan.Apply(ctx, c, nil); err != nil {
		fmt.Fprintln(stderr, "cronsheet apply:", err)
		return 1
	}
	fmt.Fprintf(stdout, "applied: %d created, %d updated, %d deleted, %d unchanged\n", counts...)
	return 0
}

// baseFromConfig is the URL of the node config's listen address names
// (a wildcard host is this machine's loopback).
func baseFromConfig(path string) (string, error) {
	cfg, err := config.Load(path, os.Getenv)
	if err != nil {
		return "", err
	}
	host, port, err := net.SplitHostPort(cfg.Listen)
	if err != nil {
		return "", fmt.Errorf("config %s: listen %q: %w", path, cfg.Listen, err)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port), nil
}

// applyTimeout bounds one apply.
const applyTimeout = 10 * time.Minute
