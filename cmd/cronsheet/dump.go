package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"cronsheet/config"
	"cronsheet/server"
)

// dump runs `cronsheet export` or `cronsheet import` on the store that the
// configuration names, and returns the exit code.
func dump(cmd string, args []string) int {
	fs := flag.NewFlagSet("cronsheet "+cmd, flag.ContinueOnError)
	configPath := fs.String("config", "config.yaml", "path to the configuration file")
	file := fs.String("o", "-", "export: file to write (- is stdout)")
	if cmd == "import" {
		file = fs.String("i", "-", "import: file to read (- is stdin)")
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0 // asked for: the flags went to stderr
		}
		return 2
	}
	cfg, err := config.Load(*configPath, os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cronsheet:", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if cmd == "export" {
		err = runExport(ctx, cfg, *file)
	} else {
		err = runImport(ctx, cfg, *file)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "cronsheet %s: %v\n", cmd, err)
		return 1
	}
	return 0
}

func runExport(ctx context.Context, cfg config.Config, path string) error {
	var w io.Writer = os.Stdout
	if path != "-" {
		f, err := os.Create(path)
		if err != nil {
			return err
		}
		defer f.Close()
		w = f
	}
	n, err := server.Export(ctx, cfg.Store, w)
	if err != nil {
		return err
	}
	if f, ok := w.(*os.File); ok && f != os.Stdout {
		if err := f.Close(); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "exported %s\n", n)
	return nil
}

func runImport(ctx context.Context, cfg config.Config, path string) error {
	var r io.Reader = os.Stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		defer f.Close()
		r = f
	}
	n, err := server.Import(ctx, cfg.Store, r)
	fmt.Fprintf(os.Stderr, "read %s\nstored %s (the rest was already there)\n", n.Read, n.Stored)
	return err
}
