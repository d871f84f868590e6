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
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/gin-gonic/gin"

	"cronsheet/server"
)

func main() {
	if len(os.Args) > 1 && (os.Args[1] == "export" || os.Args[1] == "import") {
		os.Exit(dump(os.Args[1], os.Args[2:]))
	}
	if len(os.Args) > 1 && (os.Args[1] == "user" || os.Args[1] == "token") {
		os.Exit(usersCmd(os.Args[1], os.Args[2:]))
	}
	os.Exit(run())
}

func run() int {
	configPath := flag.String("config", "config.yaml", "path to the configuration file")
	flag.Parse()

	cfg, err := server.LoadConfig(*configPath, os.Getenv)
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
