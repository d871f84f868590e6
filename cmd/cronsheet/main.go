// Command cronsheet runs the cronsheet scheduler: a spreadsheet of schedules
// served over HTTP, patrol loops that arm edited rows, and executors that
// deliver each fire.
//
// Usage:
//
//	cronsheet [-config config.yaml]
//	cronsheet export [-config config.yaml] [-o file]   (JSON lines; default stdout)
//	cronsheet import [-config config.yaml] [-i file]   (idempotent; default stdin)
//	cronsheet user add NAME --role admin               (password from a prompt or stdin)
//	cronsheet user passwd|role|list|delete …
//	cronsheet token create --user NAME --name N --role R [--expires 720h]
//	cronsheet token list|revoke …
//	cronsheet hook [-listen :9000] [-feedback done|dead]  (a target that prints what it gets)
//	cronsheet apply -f FILE [--dry-run] [--prune] [--server URL]  (declared rows, targets, flows)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/gin-gonic/gin"

	"cronsheet/config"
	"cronsheet/server"
)

func main() {
	if len(os.Args) > 1 && (os.Args[1] == "export" || os.Args[1] == "import") {
		os.Exit(dump(os.Args[1], os.Args[2:]))
	}
	if len(os.Args) > 1 && (os.Args[1] == "user" || os.Args[1] == "token") {
		os.Exit(usersCmd(os.Args[1], os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == "apply" {
		os.Exit(applyCmd(os.Args[2:], os.Stdout, os.Stderr))
	}
	if len(os.Args) > 1 && os.Args[1] == "hook" {
		os.Exit(hookCmd(os.Args[2:]))
	}
	os.Exit(run(os.Args[1:]))
}

// usage is what `cronsheet -h` prints before the flags.
const usage = `cronsheet runs the cronsheet scheduler.

Usage:
  cronsheet [-config config.yaml]                    serve (web table, API, patrols, scheduler)
  cronsheet export [-config config.yaml] [-o file]   write the store as JSON lines (default stdout)
  cronsheet import [-config config.yaml] [-i file]   load JSON lines into the store (idempotent; default stdin)
  cronsheet user add|passwd|role|list|delete …       manage the users who sign in
  cronsheet token create|list|revoke …               manage API tokens
  cronsheet hook [-listen :9000] [-feedback done]    an HTTP target that prints each request (and reports back)
  cronsheet apply -f FILE [--dry-run] [--prune]      make the rows, targets and flows of a YAML file exist as written

Subcommands take -h for their flags.

Flags:
`

func run(args []string) int {
	fs := flag.NewFlagSet("cronsheet", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fs.PrintDefaults()
	}
	configPath := fs.String("config", "config.yaml", "path to the configuration file")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "cronsheet: unknown subcommand %q (see cronsheet -h)\n", fs.Arg(0))
		return 2
	}

	cfg, err := config.Load(*configPath, os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cronsheet:", err)
		return 2
	}
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.LogLevel))
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	gin.SetMode(gin.ReleaseMode)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv, err := server.New(ctx, cfg, logger)
	if err != nil {
		logger.Error("start", "error", err)
		return 1
	}
	if err := srv.Run(ctx); err != nil {
		logger.Error("run", "error", err)
		return 1
	}
	return 0
}
