// Command faultnode runs a cronsheet node whose store fails as the
// CRONSHEET_FAULTS environment variable says (store/faulty), for the
// tests that count deliveries at a hook while the store answers with
// errors (internal/modelcheck). It is never shipped: the cronsheet binary
// may not depend on store/faulty (internal/depcheck).
//
// CRONSHEET_FAULTS holds space-separated key=value pairs:
//
//	seed=N          the chances' seed (default 1)
//	every=K         about one write in K fails (required)
//	modes=M,M       before, after, timeout, slow (default before,after),
//	                each as likely as the others
//	methods=A,B     the write methods that fail (default: every one of
//	                faulty.Writes)
//	delay=D         how long timeout and slow wait (default 200ms)
//	start=D         the faults begin D after the node started (default 0)
//	for=D           and last D (default: until the node stops)
//
// With CRONSHEET_FAULTS_STATS set to a path, the counts of calls and
// faults (faulty.Stats, as JSON) are written there every second, so a
// node killed with SIGKILL leaves them behind too.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gin-gonic/gin"

	"cronsheet/config"
	"cronsheet/server"
	"cronsheet/store"
	"cronsheet/store/faulty"
)

func main() { os.Exit(run()) }

func run() int {
	configPath := flag.String("config", "config.yaml", "path to the configuration file")
	flag.Parse()
	cfg, err := config.Load(*configPath, os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, "faultnode:", err)
		return 2
	}
	seed, rules, err := parseFaults(os.Getenv("CRONSHEET_FAULTS"), time.Now())
	if err != nil {
		fmt.Fprintln(os.Stderr, "faultnode: CRONSHEET_FAULTS:", err)
		return 2
	}
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.LogLevel))
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	gin.SetMode(gin.ReleaseMode)

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var f *faulty.Store
	wrap := func(st store.Product) store.Product {
		f = faulty.Wrap(st, seed)
		return f.AsProduct()
	}
	// The rules are set once the node has started: a node that cannot
	// register, read its settings or bind is another test's subject.
	srv, err := server.New(ctx, cfg, logger, server.WithStoreWrapper(wrap))
	if err != nil {
		logger.Error("start", "error", err)
		return 1
	}
	f.Set(rules...)
	if path := os.Getenv("CRONSHEET_FAULTS_STATS"); path != "" {
		go writeStats(ctx, f, path)
	}
	if err := srv.Run(ctx); err != nil {
		logger.Error("run", "error", err)
		return 1
	}
	if path := os.Getenv("CRONSHEET_FAULTS_STATS"); path != "" {
		_ = saveStats(f, path)
	}
	return 0
}

// parseFaults reads CRONSHEET_FAULTS (see the package comment), its
// window counted from now.
func parseFaults(spec string, now time.Time) (uint64, []faulty.Rule, error) {
	seed, every, delay := uint64(1), 0, 200*time.Millisecond
	var start, lasting time.Duration
	modes := []faulty.Mode{faulty.Before, faulty.After}
	var methods []string
	for kv := range strings.FieldsSeq(spec) {
		k, v, _ := strings.Cut(kv, "=")
		var err error
		switch k {
		case "seed":
			seed, err = strconv.ParseUint(v, 10, 64)
		case "every":
			every, err = strconv.Atoi(v)
		case "delay":
			delay, err = time.ParseDuration(v)
		case "start":
			start, err = time.ParseDuration(v)
		case "for":
			lasting, err = time.ParseDuration(v)
		case "methods":
			methods = strings.Split(v, ",")
		case "modes":
			modes = nil
			for m := range strings.SplitSeq(v, ",") {
				mode, ok := map[string]faulty.Mode{"before": faulty.Before, "after": faulty.After,
					"timeout": faulty.Timeout, "slow": faulty.Slow}[m]
				if !ok {
					return 0, nil, fmt.Errorf("modes: %q is not before, after, timeout or slow", m)
				}
				modes = append(modes, mode)
			}
		default:
			return 0, nil, fmt.Errorf("unknown key %q", k)
		}
		if err != nil {
			return 0, nil, fmt.Errorf("%s: %w", k, err)
		}
	}
	if every < 1 {
		return 0, nil, errors.New("every=K (K ≥ 1) is required")
	}
	from, until := now.Add(start), time.Time{}
	if lasting > 0 {
		until = from.Add(lasting)
	}
	rules := make([]faulty.Rule, len(modes))
	for i, m := range modes {
		// Each rule takes its share of the calls the ones before it let
		// pass, so that together about one call in every fails.
		rules[i] = faulty.Rule{Mode: m, Methods: methods, Delay: delay, From: from, Until: until,
			Chance: 1 / (float64(every)*float64(len(modes)) - float64(i))}
	}
	return seed, rules, nil
}

// writeStats saves f's counts to path every second until ctx ends.
func writeStats(ctx context.Context, f *faulty.Store, path string) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_ = saveStats(f, path)
		}
	}
}

// saveStats writes f's counts to path as JSON, through a rename so a
// reader never sees half a file.
func saveStats(f *faulty.Store, path string) error {
	s := f.Stats()
	injected := map[string]int{}
	for m, n := range s.Injected {
		injected[m.String()] = n
	}
	b, err := json.Marshal(map[string]any{"calls": s.Calls, "injected": injected, "by_method": s.ByMethod})
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
